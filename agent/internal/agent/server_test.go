package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ctxbench/ctxbench/agent/internal/config"
	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/spool"
	"github.com/ctxbench/ctxbench/agent/internal/testkit"
)

// waitLong bounds every wait in these tests: generous, so a busy 2-core machine does not flake them,
// while a hang still fails in well under the suite's budget.
const waitLong = 20 * time.Second

// testServer is a real AgentService on a loopback listener. It checks the bearer token, answers Hello
// with Welcome, and hands each accepted stream to the test as a serverConn.
type testServer struct {
	agentv1.UnimplementedAgentServiceServer
	token    string
	spoolDir string // where the agent spools, to check "spooled before sent"
	conns    chan *serverConn
	refused  atomic.Int32
	addr     string

	mu        sync.Mutex
	creds     map[string]string // credential -> machine id, as Enroll handed them out
	singleUse bool              // the token enrolls one machine only, like a join token
	enrolled  int
}

// serverConn is one agent stream as the test drives it.
type serverConn struct {
	hello      *agentv1.Hello
	stream     agentv1.AgentService_ConnectServer
	msgs       chan received
	end        chan error
	heartbeats atomic.Int32
}

type received struct {
	msg     *agentv1.ConnectRequest
	spooled bool // the result's spool file existed when the server received it
}

// startServer serves plaintext (agents run with Insecure); startTLSServer serves tlsCert.
func startServer(t *testing.T, token, spoolDir string) *testServer {
	return startTLSServer(t, token, spoolDir, nil)
}

func startTLSServer(t *testing.T, token, spoolDir string, cert *tls.Certificate) *testServer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{token: token, spoolDir: spoolDir, conns: make(chan *serverConn, 16), addr: lis.Addr().String(),
		creds: map[string]string{}}
	var opts []grpc.ServerOption
	if cert != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{*cert}})))
	}
	g := grpc.NewServer(opts...)
	agentv1.RegisterAgentServiceServer(g, s)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return s
}

func (s *testServer) Enroll(_ context.Context, req *agentv1.EnrollRequest) (*agentv1.EnrollResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.GetJoinToken() != s.token {
		s.refused.Add(1)
		return nil, status.Error(codes.Unauthenticated, "unknown join token")
	}
	if s.singleUse && s.enrolled > 0 {
		s.refused.Add(1)
		return nil, status.Error(codes.Unauthenticated, "join token already used")
	}
	s.enrolled++
	cred := "cred-" + req.GetProposedMachineId()
	s.creds[cred] = req.GetProposedMachineId()
	return &agentv1.EnrollResponse{MachineId: req.GetProposedMachineId(), MachineCredential: cred}, nil
}

func (s *testServer) Connect(stream agentv1.AgentService_ConnectServer) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	auth := md.Get("authorization")
	s.mu.Lock()
	machine, ok := "", false
	if len(auth) == 1 {
		machine, ok = s.creds[strings.TrimPrefix(auth[0], "Bearer ")]
	}
	s.mu.Unlock()
	if !ok {
		s.refused.Add(1)
		return status.Error(codes.Unauthenticated, "unknown machine credential")
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	hello := first.GetHello()
	if hello == nil {
		return status.Error(codes.InvalidArgument, "first message must be Hello")
	}
	if hello.GetAgentId() != machine {
		return status.Error(codes.PermissionDenied, "credential belongs to another machine")
	}
	if err := stream.Send(&agentv1.ConnectResponse{Msg: &agentv1.ConnectResponse_Welcome{Welcome: &agentv1.Welcome{
		MachineId: hello.GetAgentId(), HeartbeatIntervalS: 1, ServerVersion: "test"}}}); err != nil {
		return err
	}
	sc := &serverConn{hello: hello, stream: stream, msgs: make(chan received, 1024), end: make(chan error, 1)}
	go func() {
		defer close(sc.msgs)
		for {
			m, err := stream.Recv()
			if err != nil {
				return
			}
			if m.GetHeartbeat() != nil {
				sc.heartbeats.Add(1)
				continue
			}
			r := received{msg: m}
			if rep := m.GetResultReport(); rep != nil {
				_, err := os.Stat(s.spoolDir + "/results/" + rep.GetResultId() + ".json")
				r.spooled = err == nil
			}
			sc.msgs <- r
		}
	}()
	s.conns <- sc
	select {
	case err := <-sc.end:
		return err
	case <-stream.Context().Done():
		return stream.Context().Err()
	}
}

func (s *testServer) accept(t *testing.T) *serverConn {
	t.Helper()
	select {
	case sc := <-s.conns:
		return sc
	case <-time.After(waitLong):
		t.Fatal("agent did not connect")
		return nil
	}
}

func (sc *serverConn) send(t *testing.T, m *agentv1.ConnectResponse) {
	t.Helper()
	if err := sc.stream.Send(m); err != nil {
		t.Fatalf("server send: %v", err)
	}
}

func (sc *serverConn) startRun(t *testing.T, runID string, items ...*agentv1.RunItem) {
	sc.send(t, &agentv1.ConnectResponse{Msg: &agentv1.ConnectResponse_StartRun{StartRun: &agentv1.StartRun{RunId: runID, Items: items}}})
}

func (sc *serverConn) cancelRun(t *testing.T, runID string) {
	sc.send(t, &agentv1.ConnectResponse{Msg: &agentv1.ConnectResponse_CancelRun{CancelRun: &agentv1.CancelRun{RunId: runID}}})
}

func (sc *serverConn) ack(t *testing.T, resultID string) {
	sc.send(t, &agentv1.ConnectResponse{Msg: &agentv1.ConnectResponse_ResultAck{ResultAck: &agentv1.ResultAck{ResultId: resultID}}})
}

func (sc *serverConn) next(t *testing.T) received {
	t.Helper()
	select {
	case r, ok := <-sc.msgs:
		if !ok {
			t.Fatal("agent stream closed")
		}
		return r
	case <-time.After(waitLong):
		t.Fatal("no message from agent")
		return received{}
	}
}

// runLog is what the server saw of runs: results by item id and every update in order.
type runLog struct {
	results  map[string]*agentv1.ResultReport
	unspool  []string // result ids that arrived before they were in the spool
	updates  []*agentv1.RunUpdate
	finished map[string]bool
}

func (l *runLog) running(itemID string) bool {
	for _, u := range l.updates {
		if u.GetItemId() == itemID && u.GetState() == agentv1.ItemState_ITEM_STATE_RUNNING {
			return true
		}
	}
	return false
}

// collect reads messages until every run in runIDs sent RUN_FINISHED, acking results when ack is set.
func (sc *serverConn) collect(t *testing.T, ack bool, runIDs ...string) *runLog {
	t.Helper()
	l := &runLog{results: map[string]*agentv1.ResultReport{}, finished: map[string]bool{}}
	for len(l.finished) < len(runIDs) {
		r := sc.next(t)
		if rep := r.msg.GetResultReport(); rep != nil {
			if prev, dup := l.results[rep.GetItemId()]; dup && prev.GetResultId() != rep.GetResultId() {
				t.Errorf("item %s got two different results", rep.GetItemId())
			}
			l.results[rep.GetItemId()] = rep
			if !r.spooled {
				l.unspool = append(l.unspool, rep.GetResultId())
			}
			if ack {
				sc.ack(t, rep.GetResultId())
			}
		}
		if u := r.msg.GetRunUpdate(); u != nil {
			l.updates = append(l.updates, u)
			if u.GetState() == agentv1.ItemState_ITEM_STATE_RUN_FINISHED {
				l.finished[u.GetRunId()] = true
			}
		}
	}
	return l
}

// lockedBuffer is a log sink tests can read while the agent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

type testAgent struct {
	kernels, spool string
	log            *lockedBuffer
	stop           func()
}

// newKernelsDir holds the fake kernel under the name a real build would use.
func newKernelsDir(t *testing.T) string {
	dir := t.TempDir()
	testkit.FakeKernel(t, dir, "ctxbench-kernels-fake")
	return dir
}

// startAgent runs the agent in-process against addr (plaintext) until the test ends (or stop is called).
func startAgent(t *testing.T, addr, token, kernels, spoolDir string) *testAgent {
	return startAgentWith(t, config.Config{Server: addr, Token: token, Kernels: kernels, Spool: spoolDir, Insecure: true}, nil)
}

// startAgentWith runs the agent with cfg (Name and ScratchDirs filled in); the error Run returns goes
// to exited when it is not nil, else a non-nil error fails the test.
func startAgentWith(t *testing.T, cfg config.Config, exited chan<- error) *testAgent {
	t.Helper()
	cfg.Name = "test-agent"
	if len(cfg.ScratchDirs) == 0 {
		cfg.ScratchDirs = []string{filepath.Join(cfg.Spool, "scratch")}
	}
	a := &testAgent{kernels: cfg.Kernels, spool: cfg.Spool, log: &lockedBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := Run(ctx, Options{
			Config:     cfg,
			Version:    "test",
			Log:        slog.New(slog.NewTextHandler(a.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
			MinBackoff: 50 * time.Millisecond,
			MaxBackoff: 30 * time.Second,
			KillGrace:  300 * time.Millisecond,
		})
		if exited != nil {
			exited <- err
			err = nil
		}
		done <- err
	}()
	var once sync.Once
	a.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("agent returned %v", err)
				}
			case <-time.After(waitLong):
				t.Errorf("agent did not stop")
			}
		})
	}
	t.Cleanup(func() {
		a.stop()
		if t.Failed() {
			t.Logf("agent log:\n%s", a.log.String())
		}
	})
	return a
}

func item(id, kernel string, params map[string]string) *agentv1.RunItem {
	return &agentv1.RunItem{ItemId: id, KernelId: kernel, Params: params}
}

// waitFor polls cond until it holds or waitLong passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func spoolCount(t *testing.T, dir string) int {
	t.Helper()
	s, err := spool.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := s.IDs()
	if err != nil {
		t.Fatal(err)
	}
	return len(ids)
}

// checkOKResult checks fake.ok's result: the parameters it ran with (defaults filled in, canonical), its
// samples, unit, harness and the standard counters.
func checkOKResult(t *testing.T, ok *agentv1.ResultReport) {
	t.Helper()
	wantParams := map[string]string{"n": "2", "ratio": "1.0", "flavor": "spicy", "verbose": "false", "label": "x"}
	for k, v := range wantParams {
		if ok.GetParams()[k] != v {
			t.Errorf("ok params[%s] = %q, want %q (all %v)", k, ok.GetParams()[k], v, ok.GetParams())
		}
	}
	if len(ok.GetSamples()) != 4 || len(ok.GetIterations()) != 4 || ok.GetUnit() != "ns/op" ||
		ok.GetHarness().GetMinTimeS() != 0.25 || ok.GetExitCode() != 0 {
		t.Errorf("ok result = %v", ok)
	}
	if _, has := ok.GetCounters()["voluntary_ctxsw_per_op"]; !has {
		t.Errorf("ok counters = %v", ok.GetCounters())
	}
}

func TestMain(m *testing.M) { testkit.Main(m) }
