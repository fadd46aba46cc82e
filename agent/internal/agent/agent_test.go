package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/spool"
)

const token = "agent-token-for-tests"

func TestHelloCarriesIdentityFactsAndCatalog(t *testing.T) {
	spoolDir := filepath.Join(t.TempDir(), "spool") // created by the agent
	srv := startServer(t, token, spoolDir)
	kernels := newKernelsDir(t)
	a := startAgent(t, srv.addr, token, kernels, spoolDir)
	sc := srv.accept(t)
	h := sc.hello

	if _, err := uuid.Parse(h.GetAgentId()); err != nil {
		t.Fatalf("agent_id %q is not a UUID", h.GetAgentId())
	}
	stored, err := os.ReadFile(filepath.Join(spoolDir, "agent-id"))
	if err != nil || strings.TrimSpace(string(stored)) != h.GetAgentId() {
		t.Fatalf("agent-id file = %q, %v; want %s", stored, err, h.GetAgentId())
	}
	if h.GetName() != "test-agent" || h.GetAgentVersion() != "test" || h.GetCurrentRunId() != "" || len(h.GetPendingResultIds()) != 0 {
		t.Errorf("hello = %v", h)
	}
	f := h.GetFacts()
	if f.GetHostname() == "" || f.GetLogicalCpus() < 1 || f.GetArch() == "" || f.GetKernelRelease() == "" {
		t.Errorf("facts = %v", f)
	}
	var ok *agentv1.KernelSpec
	for _, k := range h.GetKernels() {
		if k.GetId() == "fake.ok" {
			ok = k
		}
	}
	if ok == nil || ok.GetExecutable() != "ctxbench-kernels-fake" || len(ok.GetParams()) != 5 ||
		ok.GetParams()[1].GetDefaultValue() != "0.5" || ok.GetSeedReference().GetSeed() != "000" {
		t.Fatalf("fake.ok spec = %v", ok)
	}
	waitFor(t, "a heartbeat", func() bool { return sc.heartbeats.Load() > 0 })

	// A restarted agent keeps its identity.
	a.stop()
	startAgent(t, srv.addr, token, kernels, spoolDir)
	if again := srv.accept(t).hello.GetAgentId(); again != h.GetAgentId() {
		t.Fatalf("agent id after restart = %s, want %s", again, h.GetAgentId())
	}
}

func TestRunReportsEveryOutcome(t *testing.T) {
	t.Setenv("CTXBENCH_AGENT_TOKEN", "secret") // the fake kernel fails if it sees this
	t.Setenv("CTXBENCH_AGENT_JOIN_TOKEN", "cxj_secret")
	spoolDir := t.TempDir()
	_, _, sc := connected(t, spoolDir)
	pidfile := filepath.Join(t.TempDir(), "stubborn.pids")

	okItem := item("ok", "fake.ok", map[string]string{"n": "2", "ratio": "1", "flavor": "spicy"})
	okItem.Repetitions, okItem.MinTimeS, okItem.Launches = 4, 0.25, 2
	timeout := item("timeout", "fake.stubborn", map[string]string{"pidfile": pidfile})
	timeout.TimeoutS = 1.5 // long enough for the kernel to start and fork even on a busy machine
	sc.startRun(t, "run-1",
		okItem,
		item("exit2", "fake.exit2", nil),
		item("exit3", "fake.exit3", nil),
		item("badjson", "fake.badjson", nil),
		item("crash", "fake.crash", nil),
		timeout,
		item("unknown-kernel", "fake.nope", nil),
		item("out-of-range", "fake.ok", map[string]string{"n": "1000"}),
		item("unknown-param", "fake.ok", map[string]string{"threads": "2"}),
		item("after", "fake.ok", nil),
	)
	l := sc.collect(t, true, "run-1")

	if len(l.unspool) > 0 {
		t.Errorf("results sent before they were spooled: %v", l.unspool)
	}
	want := []struct {
		item   string
		status agentv1.ResultStatus
		err    string
	}{
		{"ok", agentv1.ResultStatus_RESULT_STATUS_OK, ""},
		{"exit2", agentv1.ResultStatus_RESULT_STATUS_FAILED, "kernel refused its arguments (exit 2): bad argument: --param threads=0 is below 1"},
		{"exit3", agentv1.ResultStatus_RESULT_STATUS_UNSUPPORTED, "greenlet is not installed"},
		{"badjson", agentv1.ResultStatus_RESULT_STATUS_FAILED, "invalid JSON"},
		{"crash", agentv1.ResultStatus_RESULT_STATUS_FAILED, "kernel killed by signal SIGABRT"},
		{"timeout", agentv1.ResultStatus_RESULT_STATUS_FAILED, "timed out after 1.5s"},
		{"unknown-kernel", agentv1.ResultStatus_RESULT_STATUS_FAILED, `refused: kernel "fake.nope" is not in this agent's catalog`},
		{"out-of-range", agentv1.ResultStatus_RESULT_STATUS_FAILED, "refused: kernel fake.ok: parameter n: 1000 is above the maximum 100"},
		{"unknown-param", agentv1.ResultStatus_RESULT_STATUS_FAILED, `refused: kernel fake.ok: unknown parameter "threads"`},
		{"after", agentv1.ResultStatus_RESULT_STATUS_OK, ""},
	}
	for _, w := range want {
		r := l.results[w.item]
		if r == nil {
			t.Errorf("item %s: no result", w.item)
			continue
		}
		if r.GetStatus() != w.status || !strings.Contains(r.GetError(), w.err) {
			t.Errorf("item %s: status %v error %q; want %v containing %q", w.item, r.GetStatus(), r.GetError(), w.status, w.err)
		}
		if _, err := uuid.Parse(r.GetResultId()); err != nil || r.GetRunId() != "run-1" ||
			r.GetStartedAt() == nil || r.GetFinishedAt() == nil {
			t.Errorf("item %s: result = %v", w.item, r)
		}
		if (w.item == "exit2" || w.item == "exit3" || w.item == "crash") && r.GetStderrTail() == "" {
			t.Errorf("item %s: no stderr tail", w.item)
		}
	}

	checkOKResult(t, l.results["ok"])
	if l.results["exit2"].GetExitCode() != 2 || l.results["exit3"].GetExitCode() != 3 || l.results["crash"].GetExitCode() != -1 {
		t.Errorf("exit codes: %d %d %d", l.results["exit2"].GetExitCode(), l.results["exit3"].GetExitCode(), l.results["crash"].GetExitCode())
	}
	if l.running("unknown-kernel") || !l.running("ok") {
		t.Errorf("RUNNING updates wrong: %v", l.updates)
	}
	if first := l.updates[0]; first.GetState() != agentv1.ItemState_ITEM_STATE_ACCEPTED {
		t.Errorf("first update = %v, want ACCEPTED", first)
	}
	// The timed-out kernel ignored SIGTERM; SIGKILL took it and its grandchild.
	waitPidsGone(t, pidfile)
	// Acked results leave the spool.
	waitFor(t, "spool to empty after acks", func() bool { return spoolCount(t, spoolDir) == 0 })
}

func TestUnackedResultsAreResentAfterReconnect(t *testing.T) {
	spoolDir := t.TempDir()
	srv, _, sc := connected(t, spoolDir)
	sc.startRun(t, "run-1", item("i1", "fake.ok", nil))
	l := sc.collect(t, false, "run-1")
	first := l.results["i1"]
	if first == nil {
		t.Fatal("no result")
	}
	if spoolCount(t, spoolDir) != 1 {
		t.Fatal("unacked result not in the spool")
	}
	sc.end <- status.Error(codes.Unavailable, "server going away")

	sc2 := srv.accept(t)
	if p := sc2.hello.GetPendingResultIds(); len(p) != 1 || p[0] != first.GetResultId() {
		t.Fatalf("Hello.pending_result_ids = %v, want [%s]", p, first.GetResultId())
	}
	r := sc2.next(t)
	again := r.msg.GetResultReport()
	if again.GetResultId() != first.GetResultId() || again.GetItemId() != "i1" || again.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK {
		t.Fatalf("after reconnect got %v, want result %s again", r.msg, first.GetResultId())
	}
	sc2.ack(t, again.GetResultId())
	waitFor(t, "spool to empty after the ack", func() bool { return spoolCount(t, spoolDir) == 0 })
}

func TestItemsAlreadySpooledAreNotRunAgain(t *testing.T) {
	spoolDir := t.TempDir()
	_, earlier := spoolResult(t, spoolDir, "done")
	_, _, sc := connected(t, spoolDir)
	if p := sc.hello.GetPendingResultIds(); len(p) != 1 || p[0] != earlier.GetResultId() {
		t.Fatalf("pending = %v", p)
	}
	sc.startRun(t, "run-1", item("done", "fake.ok", nil), item("new", "fake.ok", nil))
	l := sc.collect(t, false, "run-1") // no acks: the spooled result must still be there when the item comes up
	if l.running("done") {
		t.Error("item with a spooled result was run again")
	}
	if r := l.results["done"]; r.GetResultId() != earlier.GetResultId() {
		t.Errorf("item done: result %v, want the spooled one re-sent", r)
	}
	if r := l.results["new"]; r.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK || !l.running("new") {
		t.Errorf("item new: %v", r)
	}
}

func TestWrongTokenIsRefusedLoudlyAndNotHammered(t *testing.T) {
	spoolDir := t.TempDir()
	srv := startServer(t, token, spoolDir)
	a := startAgent(t, srv.addr, "wrong-token", newKernelsDir(t), spoolDir)
	waitFor(t, "the refused connect", func() bool { return srv.refused.Load() >= 1 })
	waitFor(t, "the refusal in the log", func() bool { return strings.Contains(a.log.String(), "ENROLLMENT REFUSED: unknown join token") })
	if log := a.log.String(); !strings.Contains(log, "code=Unauthenticated") || !strings.Contains(log, "retry_in=30s") {
		t.Errorf("log does not name the refusal and the long wait:\n%s", log)
	}
	time.Sleep(500 * time.Millisecond) // ten normal backoffs would have passed
	if n := srv.refused.Load(); n != 1 {
		t.Errorf("agent retried %d times in half a second after UNAUTHENTICATED", n)
	}
}

func TestCancelKillsProcessGroupAndSkipsTheRest(t *testing.T) {
	spoolDir := t.TempDir()
	_, _, sc := connected(t, spoolDir)
	pidfile := filepath.Join(t.TempDir(), "sleep.pids")
	sc.startRun(t, "run-a", item("a1", "fake.sleep", map[string]string{"pidfile": pidfile}), item("a2", "fake.ok", nil))
	sc.startRun(t, "run-a", item("a1", "fake.sleep", map[string]string{"pidfile": pidfile})) // duplicate: ignored
	sc.startRun(t, "run-b", item("b1", "fake.ok", nil))
	sc.startRun(t, "run-c", item("c1", "fake.ok", nil))
	pids := readPids(t, pidfile)
	sc.cancelRun(t, "run-b") // queued
	sc.cancelRun(t, "run-a") // running
	l := sc.collect(t, true, "run-a", "run-b", "run-c")

	for _, pid := range pids {
		waitFor(t, "cancelled kernel process to be gone", func() bool { return gone(pid) })
	}
	for _, id := range []string{"a1", "a2", "b1"} {
		if r := l.results[id]; r.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_CANCELLED {
			t.Errorf("item %s: %v, want CANCELLED", id, r)
		}
	}
	if l.running("a2") || l.running("b1") {
		t.Error("an item of a cancelled run was started")
	}
	if r := l.results["c1"]; r.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK {
		t.Errorf("run-c after the cancelled ones: %v", r)
	}
	accepted := 0
	for _, u := range l.updates {
		if u.GetRunId() == "run-a" && u.GetState() == agentv1.ItemState_ITEM_STATE_ACCEPTED {
			accepted++
		}
	}
	if accepted != 1 {
		t.Errorf("run-a accepted %d times, want once (duplicate StartRun ignored)", accepted)
	}
	// Runs ran in order: a, b, c.
	var order []string
	for _, u := range l.updates {
		if u.GetState() == agentv1.ItemState_ITEM_STATE_RUN_FINISHED {
			order = append(order, u.GetRunId())
		}
	}
	if strings.Join(order, ",") != "run-a,run-b,run-c" {
		t.Errorf("runs finished in order %v", order)
	}
}

// A run cancelled and retried at once (the explorer's Cancel, then Retry): the retry's StartRun comes
// while the cancelled run is still winding down, and runs after it instead of being taken for a
// duplicate of the run executing.
func TestARunCancelledAndRetriedAtOnceRunsAgain(t *testing.T) {
	spoolDir := t.TempDir()
	_, _, sc := connected(t, spoolDir)
	pidfile := filepath.Join(t.TempDir(), "sleep.pids")
	sc.startRun(t, "run-r", item("r1", "fake.sleep", map[string]string{"pidfile": pidfile}))
	readPids(t, pidfile)
	sc.cancelRun(t, "run-r")
	sc.startRun(t, "run-r", item("r1", "fake.ok", nil))
	first := sc.collect(t, true, "run-r")
	if r := first.results["r1"]; r.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_CANCELLED {
		t.Fatalf("the cancelled run's item: %v, want CANCELLED", r)
	}
	again := sc.collect(t, true, "run-r")
	if r := again.results["r1"]; r.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK || !again.running("r1") {
		t.Errorf("the retried run's item: %v, want it run and OK; updates %v", r, again.updates)
	}
}

// Over the real stream: each item is measured in launches interleaved round-robin, its samples carry
// their launch index, and CV reruns are gone (rerun_cv is ignored).
func TestItemsAreMeasuredInInterleavedLaunches(t *testing.T) {
	spoolDir := t.TempDir()
	_, _, sc := connected(t, spoolDir)
	dir := t.TempDir()
	noisy := item("noisy", "fake.noisy", map[string]string{"counter": filepath.Join(dir, "n"), "quiet_after": "100"})
	noisy.RerunCv, noisy.MaxReruns, noisy.Launches = 0.03, 5, 3
	ok := item("ok", "fake.ok", nil)
	ok.Repetitions, ok.Launches = 6, 3
	sc.startRun(t, "run-1", noisy, ok)
	l := sc.collect(t, true, "run-1")

	var order []string
	for _, u := range l.updates {
		// a launch's start (another RUNNING, "… done", says when it ended)
		if u.GetState() == agentv1.ItemState_ITEM_STATE_RUNNING && !strings.HasSuffix(u.GetMessage(), " done") {
			order = append(order, u.GetItemId())
		}
	}
	// Re-measurements of disturbed launches (a busy test host) may follow the six planned launches.
	if len(order) < 6 || strings.Join(order[:6], ",") != "noisy,ok,noisy,ok,noisy,ok" {
		t.Errorf("launch order %v", order)
	}
	n := l.results["noisy"]
	if n.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK || len(n.GetAttemptCvs()) != 0 ||
		len(n.GetSamples()) != 12 || len(n.GetSampleLaunches()) != 12 || int(n.GetReruns()) != len(n.GetLaunches())-3 {
		t.Errorf("noisy: %v", n)
	}
	o := l.results["ok"]
	if len(o.GetSamples()) != 6 || len(o.GetSampleLaunches()) != 6 || len(o.GetLaunches()) < 3 {
		t.Errorf("ok: %v", o)
	}
}

func TestRejectedResultIsSetAsideNotResent(t *testing.T) {
	spoolDir := t.TempDir()
	srv, a, sc := connected(t, spoolDir)
	sc.startRun(t, "run-1", item("i1", "fake.ok", nil))
	l := sc.collect(t, false, "run-1")
	id := l.results["i1"].GetResultId()
	// PERMISSION_DENIED may be the server's state: the result stays pending.
	sc.send(t, &agentv1.ConnectResponse{Msg: &agentv1.ConnectResponse_Reject{Reject: &agentv1.Reject{
		ResultId: id, RunId: "run-1", Code: int32(codes.PermissionDenied), Message: "not this agent's run"}}})
	waitFor(t, "the reject in the log", func() bool { return strings.Contains(a.log.String(), "not this agent's run") })
	if spoolCount(t, spoolDir) != 1 {
		t.Fatal("result dropped on PERMISSION_DENIED")
	}
	// INVALID_ARGUMENT: it can never be stored; set aside, not re-sent.
	sc.send(t, &agentv1.ConnectResponse{Msg: &agentv1.ConnectResponse_Reject{Reject: &agentv1.Reject{
		ResultId: id, RunId: "run-1", Code: int32(codes.InvalidArgument), Message: "non-finite sample"}}})
	waitFor(t, "the result to move to rejected/", func() bool {
		_, err := os.Stat(filepath.Join(spoolDir, "rejected", id+".json"))
		return err == nil && spoolCount(t, spoolDir) == 0
	})
	if log := a.log.String(); !strings.Contains(log, "server rejected a message") || !strings.Contains(log, "non-finite sample") {
		t.Errorf("reject not logged:\n%s", log)
	}
	sc.end <- status.Error(codes.Unavailable, "bye")
	if p := srv.accept(t).hello.GetPendingResultIds(); len(p) != 0 {
		t.Errorf("rejected result still pending after reconnect: %v", p)
	}
}

func TestUndecodableSpoolFileIsQuarantinedOnce(t *testing.T) {
	spoolDir := t.TempDir()
	sp, good := spoolResult(t, spoolDir, "i1")
	bad := uuid.NewString()
	if err := os.WriteFile(sp.ResultPath(bad), []byte(`{"resultId": "torn`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, a, sc := connected(t, spoolDir)
	// the good one is still re-sent; the torn one is moved aside, not left to fail every connect
	if r := sc.next(t).msg.GetResultReport(); r.GetResultId() != good.GetResultId() {
		t.Fatalf("re-sent %v, want %s", r, good.GetResultId())
	}
	quarantined := filepath.Join(spoolDir, "quarantine", bad+".json")
	waitFor(t, "the torn file in quarantine/", func() bool {
		_, err := os.Stat(quarantined)
		return err == nil
	})
	if _, err := os.Stat(sp.ResultPath(bad)); !os.IsNotExist(err) {
		t.Errorf("torn file still in results/: %v", err)
	}
	sc.end <- status.Error(codes.Unavailable, "bye")
	sc2 := srv.accept(t)
	if p := sc2.hello.GetPendingResultIds(); len(p) != 1 || p[0] != good.GetResultId() {
		t.Errorf("pending after reconnect = %v, want only %s", p, good.GetResultId())
	}
	if r := sc2.next(t).msg.GetResultReport(); r.GetResultId() != good.GetResultId() {
		t.Fatalf("re-sent %v after reconnect", r)
	}
	if n := strings.Count(a.log.String(), "cannot be decoded"); n != 1 {
		t.Errorf("quarantine logged %d times, want once:\n%s", n, a.log.String())
	}
	if !strings.Contains(a.log.String(), bad+".json") {
		t.Errorf("log does not name the file:\n%s", a.log.String())
	}
}

// spoolResult puts a result of fake.ok for run-1's item itemID in the spool at dir, as an agent that
// measured it before it stopped left it there; the spool and the result.
func spoolResult(t *testing.T, dir, itemID string) (*spool.Spool, *agentv1.ResultReport) {
	t.Helper()
	sp, err := spool.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &agentv1.ResultReport{ResultId: uuid.NewString(), RunId: "run-1", ItemId: itemID,
		KernelId: "fake.ok", Status: agentv1.ResultStatus_RESULT_STATUS_OK, Samples: []float64{1}}
	if err := sp.Put(r); err != nil {
		t.Fatal(err)
	}
	return sp, r
}

// connected starts a server, then the agent (the fake kernels, its spool at spoolDir) dialing it, and
// returns both and the agent's accepted stream.
func connected(t *testing.T, spoolDir string) (*testServer, *testAgent, *serverConn) {
	t.Helper()
	srv := startServer(t, token, spoolDir)
	a := startAgent(t, srv.addr, token, newKernelsDir(t), spoolDir)
	return srv, a, srv.accept(t)
}
