package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/ctxbench/ctxbench/agent/internal/catalog"
	"github.com/ctxbench/ctxbench/agent/internal/conn"
	"github.com/ctxbench/ctxbench/agent/internal/facts"
	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/spool"
)

// fakeRunner is an agent's conn.Handler: it hands over the first StartRun it gets.
type fakeRunner struct{ runs chan *agentv1.StartRun }

func (f *fakeRunner) StartRun(m *agentv1.StartRun) {
	select {
	case f.runs <- m:
	default: // a re-sent StartRun after a reconnect: the replay answers the first one
	}
}

func (f *fakeRunner) CancelRun(*agentv1.CancelRun) {}
func (f *fakeRunner) CurrentRunID() string         { return "" }

// loadAgent is one agent: its spool, outbox and handler, on the agent's own connection code.
type loadAgent struct {
	sp  *spool.Spool
	out *conn.Outbox
	h   *fakeRunner
	run *agentv1.StartRun
	// floor mode: a bare stream instead of the agent's connection (floor.go)
	stream agentv1.AgentService_ConnectClient
}

type replayFlags struct {
	server, caFile, tokenFile, kernels, messages, state string
	agents, items                                       int
	rate                                                float64
	progress, floor                                     bool
}

func replay(args []string) error {
	var f replayFlags
	fs := flag.NewFlagSet("replay", flag.ExitOnError)
	fs.StringVar(&f.server, "server", "", "the server's gRPC HOST:PORT")
	fs.StringVar(&f.caFile, "ca-file", "", "the server's CA certificate")
	fs.StringVar(&f.tokenFile, "token-file", "", "the server's agent token")
	fs.StringVar(&f.kernels, "kernels", "build/kernels", "the kernel executables' directory (the Hello's catalog)")
	fs.StringVar(&f.messages, "messages", "", "what capture wrote")
	fs.StringVar(&f.state, "state", "/dev/shm", "where the agents' state dirs go (tmpfs: the spool's fsyncs cost nothing)")
	fs.IntVar(&f.agents, "agents", 20, "agents")
	fs.Float64Var(&f.rate, "rate", 5000, "results/s over all agents; 0: as fast as they go")
	fs.BoolVar(&f.progress, "progress", true, "send all the runner's progress messages too")
	fs.BoolVar(&f.floor, "floor", false, "bare streams to a server that only acknowledges (grpc_floor.py --serve)")
	fs.IntVar(&f.items, "items", 1000, "--floor: items a run")
	_ = fs.Parse(args)
	tmpl, err := readMessages(f.messages)
	if err != nil {
		return err
	}
	if !f.progress {
		tmpl = reportOnly(tmpl)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if f.floor {
		agents, err := floorAgents(ctx, f)
		if err != nil {
			return err
		}
		return started(agents, tmpl, f.rate)
	}
	token, err := os.ReadFile(f.tokenFile)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cat, err := catalog.Load(ctx, f.kernels, log)
	if err != nil {
		return err
	}
	state, err := os.MkdirTemp(f.state, "ingest-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	agents, wg, err := connect(ctx, f, strings.TrimSpace(string(token)), cat, state, log)
	if err != nil {
		return err
	}
	defer func() { cancel(); wg.Wait() }()
	for _, a := range agents {
		select {
		case a.run = <-a.h.runs:
		case <-time.After(120 * time.Second):
			return errors.New("not every agent got a StartRun within 120 s")
		}
	}
	return started(agents, tmpl, f.rate)
}

// started says every agent holds its run, waits for the go line, then measures.
func started(agents []*loadAgent, tmpl []*agentv1.ConnectRequest, rate float64) error {
	printJSON(map[string]int{"started": len(agents)})
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("waiting for the go line: %w", err)
	}
	return measure(agents, tmpl, rate)
}

// connect starts the agents' connection loops (each enrolls, then holds its stream).
func connect(ctx context.Context, f replayFlags, token string, cat *catalog.Catalog, state string,
	log *slog.Logger) ([]*loadAgent, *sync.WaitGroup, error) {
	var wg sync.WaitGroup
	agents := make([]*loadAgent, f.agents)
	host, _ := os.Hostname()
	for i := range agents {
		sp, err := spool.Open(filepath.Join(state, fmt.Sprint(i)))
		if err != nil {
			return nil, &wg, err
		}
		id, err := sp.AgentID()
		if err != nil {
			return nil, &wg, err
		}
		a := &loadAgent{sp: sp, out: conn.NewOutbox(), h: &fakeRunner{runs: make(chan *agentv1.StartRun, 1)}}
		agents[i] = a
		o := conn.Options{
			Server: f.server, EnrollToken: token, SaveCredential: sp.SaveCredential, EnrollKey: sp.EnrollKey, Hostname: host,
			TLS: conn.TLSOptions{CAFile: f.caFile}, AgentID: id, AgentVersion: "ingest-load",
			Name: fmt.Sprintf("ingest-load-%d", i), Kernels: cat.Kernels(), Facts: facts.Gather,
			Spool: sp, Outbox: a.out, Handler: a.h, Log: log,
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := conn.Run(ctx, o); err != nil {
				log.Error("agent stopped", "agent", o.Name, "err", err)
			}
		}()
	}
	return agents, &wg, nil
}

// reportOnly keeps the first progress message, the report and what follows it (a DONE update, in a
// capture from an agent before results stood for it).
func reportOnly(tmpl []*agentv1.ConnectRequest) []*agentv1.ConnectRequest {
	out := []*agentv1.ConnectRequest{tmpl[0]}
	for i, m := range tmpl {
		if m.GetResultReport() != nil {
			return append(out, tmpl[i:]...)
		}
	}
	return out
}

// item is the captured messages made the item's: its run and item ids, a fresh result id.
func item(tmpl []*agentv1.ConnectRequest, run *agentv1.StartRun, index int) []*agentv1.ConnectRequest {
	it := run.GetItems()[index]
	out := make([]*agentv1.ConnectRequest, len(tmpl))
	for i, t := range tmpl {
		m := proto.Clone(t).(*agentv1.ConnectRequest)
		updates := m.GetRunProgress().GetUpdates()
		if u := m.GetRunUpdate(); u != nil {
			updates = append(updates, u)
		}
		for _, u := range updates {
			u.RunId, u.ItemId, u.ItemIndex = run.GetRunId(), it.GetItemId(), int32(index)
		}
		if r := m.GetResultReport(); r != nil {
			r.ResultId, r.RunId, r.ItemId, r.KernelId = uuid.NewString(), run.GetRunId(), it.GetItemId(), it.GetKernelId()
			for k, v := range it.GetParams() {
				r.Params[k] = v
			}
		}
		out[i] = m
	}
	return out
}

// measure sends every agent's items, paced, and waits until every spool is empty.
func measure(agents []*loadAgent, tmpl []*agentv1.ConnectRequest, rate float64) error {
	todo := make([][][]*agentv1.ConnectRequest, len(agents)) // built before the clock starts
	total := 0
	for i, a := range agents {
		for j := range a.run.GetItems() {
			todo[i] = append(todo[i], item(tmpl, a.run, j))
		}
		total += len(todo[i])
	}
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	t0 := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(agents))
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- a.send(todo[i], t0, rate, i, len(agents))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	wall := time.Since(t0).Seconds()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)
	printJSON(map[string]any{
		"agents": len(agents), "results": total, "messages_per_result": len(tmpl),
		"report_bytes": reportBytes(tmpl), "wall_s": round(wall, 2),
		"results_per_s": round(float64(total)/wall, 1), "generator_cpu_ms_per_result": round(1000*cpu/float64(total), 3),
	})
	return nil
}

// send answers one agent's items at its share of rate (item k at t0 + (i/n + k) / (rate/n)), spooling
// each report before it is sent (as the runner does), then waits until the server acknowledged them all.
func (a *loadAgent) send(items [][]*agentv1.ConnectRequest, t0 time.Time, rate float64, i, n int) error {
	pace := func(k int) {
		if rate > 0 {
			due := t0.Add(time.Duration((float64(i)/float64(n) + float64(k)) / (rate / float64(n)) * float64(time.Second)))
			time.Sleep(time.Until(due))
		}
	}
	if a.stream != nil {
		return a.sendFloor(items, pace)
	}
	for k, msgs := range items {
		pace(k)
		for _, m := range msgs {
			if r := m.GetResultReport(); r != nil {
				if err := a.sp.Put(r); err != nil {
					return err
				}
			}
			if !a.out.Send(m) {
				return errors.New("an agent's stream is down")
			}
		}
	}
	deadline := time.Now().Add(300 * time.Second)
	for time.Now().Before(deadline) {
		ids, err := a.sp.IDs()
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errors.New("results not acknowledged within 300 s")
}

func reportBytes(tmpl []*agentv1.ConnectRequest) int {
	for _, m := range tmpl {
		if m.GetResultReport() != nil {
			return proto.Size(m)
		}
	}
	return 0
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}
