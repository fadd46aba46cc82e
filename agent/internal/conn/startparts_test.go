package conn

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

func items(ids ...string) []*agentv1.RunItem {
	out := make([]*agentv1.RunItem, len(ids))
	for i, id := range ids {
		out[i] = &agentv1.RunItem{ItemId: id, KernelId: "syscall.getppid"}
	}
	return out
}

func itemIDs(run *agentv1.StartRun) []string {
	var out []string
	for _, it := range run.GetItems() {
		out = append(out, it.GetItemId())
	}
	return out
}

func TestStartPartsAssemblesARunSentInParts(t *testing.T) {
	var p startParts
	if run, dropped := p.add(&agentv1.StartRun{RunId: "r", Items: items("a", "b"), More: true}); run != nil || dropped {
		t.Fatalf("first part: got %v, dropped %v; want nothing yet", run, dropped)
	}
	if run, dropped := p.add(&agentv1.StartRun{RunId: "r", Items: items("c"), More: true, Continued: true}); run != nil || dropped {
		t.Fatalf("middle part: got %v, dropped %v; want nothing yet", run, dropped)
	}
	run, dropped := p.add(&agentv1.StartRun{RunId: "r", Items: items("d"), Continued: true})
	if dropped || run == nil || run.GetRunId() != "r" {
		t.Fatalf("last part: got %v, dropped %v; want run r", run, dropped)
	}
	if got := itemIDs(run); len(got) != 4 || got[0] != "a" || got[3] != "d" {
		t.Fatalf("items %v, want [a b c d]", got)
	}
	if run.GetMore() || run.GetContinued() {
		t.Fatalf("the assembled run carries part flags: %v", run)
	}
}

func TestStartPartsPassesAWholeRunAndDropsStrayParts(t *testing.T) {
	var p startParts
	if run, _ := p.add(&agentv1.StartRun{RunId: "whole", Items: items("a")}); run == nil || len(run.GetItems()) != 1 {
		t.Fatalf("a run in one message must pass at once, got %v", run)
	}
	// a continuation whose first part this stream never saw
	if run, dropped := p.add(&agentv1.StartRun{RunId: "x", Items: items("b"), Continued: true}); run != nil || !dropped {
		t.Fatalf("stray part: got %v, dropped %v; want dropped", run, dropped)
	}
	// a continuation of another run than the one being assembled abandons both
	p.add(&agentv1.StartRun{RunId: "r1", Items: items("a"), More: true})
	if run, dropped := p.add(&agentv1.StartRun{RunId: "r2", Items: items("b"), Continued: true}); run != nil || !dropped {
		t.Fatalf("part of another run: got %v, dropped %v; want dropped", run, dropped)
	}
	// a new first part replaces a half-assembled run
	p.add(&agentv1.StartRun{RunId: "old", Items: items("a"), More: true})
	run, _ := p.add(&agentv1.StartRun{RunId: "new", Items: items("b")})
	if run.GetRunId() != "new" || len(run.GetItems()) != 1 {
		t.Fatalf("got %v, want run new with one item", run)
	}
}

func TestStartPartsDropsARunPastItsByteBudget(t *testing.T) {
	// Parts of few but big items (a parameter of 1 MiB each): the item budget never trips, the byte
	// budget does, so the agent does not hold the run's parts without end.
	big := []*agentv1.RunItem{{ItemId: "i", KernelId: "k", Params: map[string]string{"p": strings.Repeat("x", 1<<20)}}}
	var p startParts
	if _, dropped := p.add(&agentv1.StartRun{RunId: "r", Items: big, More: true}); dropped {
		t.Fatal("first part dropped")
	}
	parts := 1
	for ; parts < 200; parts++ {
		_, dropped := p.add(&agentv1.StartRun{RunId: "r", Items: big, More: true, Continued: true})
		if dropped {
			break
		}
	}
	if parts*(1<<20) > maxAssembledBytes || parts < maxAssembledBytes/(2<<20) {
		t.Fatalf("dropped at part %d, want it near %d MiB of parts", parts+1, maxAssembledBytes>>20)
	}
	if p.run != nil || p.bytes != 0 {
		t.Fatalf("the dropped run is still held: %d bytes", p.bytes)
	}
	// The next run starts from nothing.
	if run, dropped := p.add(&agentv1.StartRun{RunId: "next", Items: big}); dropped || run == nil {
		t.Fatalf("a whole run after a dropped one: got %v, dropped %v", run, dropped)
	}
}

// partsServer says Welcome, then sends a run in three parts and a run in one message.
type partsServer struct {
	agentv1.UnimplementedAgentServiceServer
	hello chan *agentv1.Hello
}

func (s *partsServer) Connect(stream agentv1.AgentService_ConnectServer) error {
	hello, err := welcome(stream)
	if err != nil {
		return err
	}
	s.hello <- hello
	start := func(r *agentv1.StartRun) error {
		return stream.Send(&agentv1.ConnectResponse{Msg: &agentv1.ConnectResponse_StartRun{StartRun: r}})
	}
	for _, r := range []*agentv1.StartRun{
		{RunId: "big", Items: items("1", "2"), More: true},
		{RunId: "big", Items: items("3"), More: true, Continued: true},
		{RunId: "big", Items: items("4", "5"), Continued: true},
		{RunId: "small", Items: items("6")},
	} {
		if err := start(r); err != nil {
			return err
		}
	}
	<-stream.Context().Done()
	return nil
}

type recordingHandler struct {
	mu     sync.Mutex
	starts []*agentv1.StartRun
	got    chan struct{}
}

func (h *recordingHandler) StartRun(m *agentv1.StartRun) {
	h.mu.Lock()
	h.starts = append(h.starts, m)
	h.mu.Unlock()
	h.got <- struct{}{}
}
func (h *recordingHandler) CancelRun(*agentv1.CancelRun) {}
func (h *recordingHandler) CurrentRunID() string         { return "" }

func TestClientStartsARunSentInPartsOnceWhole(t *testing.T) {
	ps := &partsServer{hello: make(chan *agentv1.Hello, 1)}
	addr := serveAgentService(t, ps)

	h := &recordingHandler{got: make(chan struct{}, 4)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stop := runClient(t, Options{Server: addr, AgentVersion: "test", Name: "test", Handler: h})

	select {
	case hello := <-ps.hello:
		if !hello.GetStartRunParts() {
			t.Fatal("Hello does not say the agent assembles StartRun parts")
		}
	case <-ctx.Done():
		t.Fatal("no Hello")
	}
	for i := 0; i < 2; i++ {
		select {
		case <-h.got:
		case <-ctx.Done():
			t.Fatalf("%d of 2 runs reached the runner", i)
		}
	}
	h.mu.Lock()
	starts := append([]*agentv1.StartRun(nil), h.starts...)
	h.mu.Unlock()
	if len(starts) != 2 || starts[0].GetRunId() != "big" || starts[1].GetRunId() != "small" {
		t.Fatalf("runs given to the runner: %v; want big (whole), then small", starts)
	}
	if got := itemIDs(starts[0]); len(got) != 5 || got[0] != "1" || got[4] != "5" {
		t.Fatalf("big run's items %v, want [1 2 3 4 5]", got)
	}
	stop()
}
