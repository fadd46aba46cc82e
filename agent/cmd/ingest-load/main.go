// Command ingest-load drives the server's ingest with what real agents send (issue 25 item 4; a bench
// tool, built by `make bench` only).
//
//	ingest-load capture --kernels DIR --kernel ID [--param k=v]... --out FILE
//
// runs one item through the agent's own runner (internal/runner: launches, short samples, interference
// fields, progress updates coalesced as the server's default progress_interval_ms asks; see
// --progress-interval) with the default profile's settings and writes every message the runner sent for
// it, in order, to FILE (length-delimited ConnectRequests).
//
//	ingest-load replay --server HOST:PORT --ca-file F --token-file F --kernels DIR --messages FILE
//	    [--agents 20] [--rate 5000] [--progress=true]
//
// starts --agents agents on the agent's own connection code (internal/conn: enrollment with the agent
// token, TLS, Hello with the real catalog and facts, the outbox, the spool), each in a state dir of its
// own under /dev/shm. Once every agent holds a StartRun it prints {"started": N} and waits for a line on
// stdin; then each agent answers its run's items with the captured messages (fresh result ids, the
// item's ids), paced together at --rate results/s, spooling every report before sending it as the
// runner does, and the command prints one JSON line of figures once every spool is empty (every result
// acknowledged). --progress=false sends only the first progress message and the report (and the DONE
// update of a capture from before results stood for it).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	"github.com/ctxbench/ctxbench/agent/internal/catalog"
	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/runner"
	"github.com/ctxbench/ctxbench/agent/internal/spool"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ingest-load capture|replay [flags] (see the package comment)")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "capture":
		err = capture(os.Args[2:])
	case "replay":
		err = replay(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingest-load:", err)
		os.Exit(1)
	}
}

// params collects repeated --param k=v flags.
type params map[string]string

func (p params) String() string { return fmt.Sprint(map[string]string(p)) }

func (p params) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("--param %q is not k=v", v)
	}
	p[k] = val
	return nil
}

// recorder is the runner's Sender, pacing progress as a server's Welcome would (runner.ProgressPacer): it
// keeps what the runner sends and says when the run finished.
type recorder struct {
	mu       sync.Mutex // the runner's flush timer sends too
	msgs     []*agentv1.ConnectRequest
	done     chan struct{}
	progress time.Duration
}

func (r *recorder) ProgressInterval() time.Duration { return r.progress }

func (r *recorder) Send(m *agentv1.ConnectRequest) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u := m.GetRunUpdate(); u != nil && u.GetState() == agentv1.ItemState_ITEM_STATE_RUN_FINISHED {
		close(r.done)
		return true
	}
	if u := m.GetRunUpdate(); u != nil && u.GetState() == agentv1.ItemState_ITEM_STATE_ACCEPTED {
		return true // once a run, not once an item
	}
	r.msgs = append(r.msgs, proto.Clone(m).(*agentv1.ConnectRequest))
	return true
}

func capture(args []string) error {
	fs := flag.NewFlagSet("capture", flag.ExitOnError)
	kernels := fs.String("kernels", "build/kernels", "the kernel executables' directory")
	kernel := fs.String("kernel", "syscall.getppid", "the kernel to run")
	out := fs.String("out", "", "where to write the messages")
	// The server's default profile (server/src/ctxbench_server/runs/schemas.py PROFILES["default"]).
	launches := fs.Uint("launches", 7, "kernel processes for the item")
	reps := fs.Int("repetitions", 14, "repetitions in all")
	minTime := fs.Float64("min-time", 0.04, "min_time_s of a repetition")
	sampleTime := fs.Float64("sample-time", 0.0005, "sample_time_s (short samples)")
	progress := fs.Duration("progress-interval", time.Second,
		"the Welcome's progress_interval_ms (the server's default); 0: a RunUpdate per launch start and end")
	ps := params{}
	fs.Var(ps, "param", "k=v, repeated")
	_ = fs.Parse(args)
	if *out == "" {
		return errors.New("capture needs --out")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cat, err := catalog.Load(ctx, *kernels, log)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ingest-load-capture-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sp, err := spool.Open(dir)
	if err != nil {
		return err
	}
	rec := &recorder{done: make(chan struct{}), progress: *progress}
	r := runner.New(runner.Options{Catalog: cat, KernelsDir: *kernels, Spool: sp, Sender: rec, Log: log})
	go r.Run(ctx)
	r.StartRun(&agentv1.StartRun{RunId: "capture", Items: []*agentv1.RunItem{{
		ItemId: "item-0", KernelId: *kernel, Params: ps, Repetitions: int32(*reps), MinTimeS: *minTime,
		Launches: uint32(*launches), SampleTimeS: *sampleTime,
	}}})
	select {
	case <-rec.done:
	case <-ctx.Done():
		return errors.New("the item did not finish in 5 minutes")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return writeMessages(*out, rec.msgs)
}

func writeMessages(path string, msgs []*agentv1.ConnectRequest) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if _, err := protodelim.MarshalTo(f, m); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// readMessages is what capture wrote; it must hold exactly one ResultReport.
func readMessages(path string) ([]*agentv1.ConnectRequest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var msgs []*agentv1.ConnectRequest
	reports := 0
	rd := strings.NewReader(string(b))
	for {
		m := &agentv1.ConnectRequest{}
		if err := protodelim.UnmarshalFrom(rd, m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if m.GetResultReport() != nil {
			reports++
		}
		msgs = append(msgs, m)
	}
	if reports != 1 {
		return nil, fmt.Errorf("%s holds %d result reports, not 1", path, reports)
	}
	return msgs, nil
}

func printJSON(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}
