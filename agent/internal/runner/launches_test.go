package runner

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxbench/ctxbench/agent/internal/catalog"
	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/spool"
	"github.com/ctxbench/ctxbench/agent/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// recorder is a Sender that keeps every message.
type recorder struct {
	mu   sync.Mutex
	msgs []*agentv1.ConnectRequest
}

func (s *recorder) Send(m *agentv1.ConnectRequest) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, m)
	return true
}

// running is the item id of every launch's start (a RUNNING update; another says when it ended), in order.
func (s *recorder) running() []string {
	var ids []string
	for _, u := range s.updates(agentv1.ItemState_ITEM_STATE_RUNNING) {
		if !strings.HasSuffix(u.GetMessage(), " done") {
			ids = append(ids, u.GetItemId())
		}
	}
	return ids
}

// updates are the RunUpdates of one state, in order.
func (s *recorder) updates(state agentv1.ItemState) []*agentv1.RunUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*agentv1.RunUpdate
	for _, m := range s.msgs {
		if u := m.GetRunUpdate(); u != nil && u.GetState() == state {
			out = append(out, u)
		}
	}
	return out
}

func (s *recorder) results() map[string]*agentv1.ResultReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]*agentv1.ResultReport{}
	for _, m := range s.msgs {
		if r := m.GetResultReport(); r != nil {
			out[r.GetItemId()] = r
		}
	}
	return out
}

// fakeStat is a /proc/stat whose busy time jumps during the launches disturb says (launch n is the
// n-th kernel process of the run; each launch reads the counters twice).
func fakeStat(disturb func(n int) bool) HostStat {
	var mu sync.Mutex
	calls := 0
	var busy uint64
	return func() (map[int]CPUTicks, error) {
		mu.Lock()
		defer mu.Unlock()
		if calls%2 == 1 && disturb(calls/2) {
			busy += 1_000_000 // far more than any launch's own CPU time
		}
		calls++
		out := map[int]CPUTicks{}
		for c := 0; c < 1024; c++ {
			out[c] = CPUTicks{Busy: busy}
		}
		return out, nil
	}
}

func newTestRunner(t *testing.T, opts Options) (*Runner, *recorder) {
	t.Helper()
	dir := t.TempDir()
	testkit.FakeKernel(t, dir, "ctxbench-kernels-fake")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat, err := catalog.Load(context.Background(), dir, log)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := spool.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	opts.Catalog, opts.KernelsDir, opts.Spool, opts.Sender, opts.Log = cat, dir, sp, rec, log
	return New(opts), rec
}

func runToEnd(t *testing.T, r *Runner, items ...*agentv1.RunItem) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r.execute(ctx, ctx, &job{run: &agentv1.StartRun{RunId: "run-1", Items: items}})
}

func okItem(id string, launches uint32, reps int32) *agentv1.RunItem {
	return &agentv1.RunItem{ItemId: id, KernelId: "fake.ok", Launches: launches, Repetitions: reps}
}

// The server counts a run's progress in launches: each launch's start and end say how many of the
// item's launches are done, of how many, and their wall time so far.
func TestLaunchProgressPerUpdate(t *testing.T) {
	r, rec := newTestRunner(t, Options{HostStat: fakeStat(func(int) bool { return false })})
	runToEnd(t, r, okItem("a", 3, 6), okItem("b", 2, 4))

	type step struct {
		item           string
		done, planned  uint32
		withWall, ends bool
	}
	var got []step
	for _, u := range rec.updates(agentv1.ItemState_ITEM_STATE_RUNNING) {
		got = append(got, step{u.GetItemId(), u.GetLaunchesDone(), u.GetLaunchesPlanned(), u.GetLaunchesWallS() > 0,
			strings.HasSuffix(u.GetMessage(), " done")})
	}
	want := []step{
		{"a", 0, 3, false, false}, {"a", 1, 3, true, true},
		{"b", 0, 2, false, false}, {"b", 1, 2, true, true},
		{"a", 1, 3, true, false}, {"a", 2, 3, true, true},
		{"b", 1, 2, true, false}, {"b", 2, 2, true, true},
		{"a", 2, 3, true, false}, {"a", 3, 3, true, true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("RUNNING updates\n got %v\nwant %v", got, want)
	}
}

func TestLaunchesInterleaveRoundRobin(t *testing.T) {
	r, rec := newTestRunner(t, Options{HostStat: fakeStat(func(int) bool { return false })})
	runToEnd(t, r, okItem("a", 3, 6), okItem("b", 2, 4), okItem("c", 3, 5))

	want := []string{"a", "b", "c", "a", "b", "c", "a", "c"}
	if got := rec.running(); !slices.Equal(got, want) {
		t.Errorf("launch order %v, want %v", got, want)
	}
	res := rec.results()
	for id, wantLaunches := range map[string][]uint32{
		"a": {0, 0, 1, 1, 2, 2},
		"b": {0, 0, 1, 1},
		"c": {0, 0, 1, 1, 2, 2}, // ceil(5/3) = 2 repetitions per launch
	} {
		rep := res[id]
		if rep.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK || !slices.Equal(rep.GetSampleLaunches(), wantLaunches) ||
			len(rep.GetSamples()) != len(wantLaunches) || len(rep.GetIterations()) != len(wantLaunches) {
			t.Errorf("%s: status %v sample_launches %v samples %v", id, rep.GetStatus(), rep.GetSampleLaunches(), rep.GetSamples())
			continue
		}
		// Samples keep their order: each launch of fake.ok prints 10, 11.
		if s := rep.GetSamples(); s[0] != 10 || s[1] != 11 || s[2] != 10 {
			t.Errorf("%s: samples %v", id, s)
		}
		if rep.GetReruns() != 0 || rep.GetNoisy() || rep.GetDisturbance() != 0 || len(rep.GetAttemptCvs()) != 0 {
			t.Errorf("%s: reruns %d noisy %v disturbance %v", id, rep.GetReruns(), rep.GetNoisy(), rep.GetDisturbance())
		}
		for i, l := range rep.GetLaunches() {
			if l.GetIndex() != uint32(i) || !l.GetKept() || l.GetDisturbed() || l.GetRemeasured() || l.GetWallS() <= 0 || l.GetSamples() != 2 {
				t.Errorf("%s: launch %d = %v", id, i, l)
			}
		}
		if !rep.GetStartedAt().AsTime().Before(rep.GetFinishedAt().AsTime()) {
			t.Errorf("%s: span %v .. %v", id, rep.GetStartedAt().AsTime(), rep.GetFinishedAt().AsTime())
		}
	}
	// Each item's span covers the run's rounds: a's last launch comes after b's first.
	if !res["a"].GetFinishedAt().AsTime().After(res["b"].GetStartedAt().AsTime()) {
		t.Errorf("a finished before b started: launches were not interleaved")
	}
}

func TestDisturbedLaunchesAreRemeasuredWithinBounds(t *testing.T) {
	// Launch order: a0 b0 a1 b1 a2 b2, then re-measurements a3 b3, then b4 (b's cap is 2).
	// a1 is disturbed once; every launch of b is disturbed (a host that stays busy).
	disturbed := map[int]bool{2: true, 1: true, 3: true, 5: true, 7: true, 8: true}
	r, rec := newTestRunner(t, Options{RemeasureShare: 1, HostStat: fakeStat(func(n int) bool { return disturbed[n] })})
	runToEnd(t, r, okItem("a", 3, 6), okItem("b", 3, 6))

	if got, want := rec.running(), []string{"a", "b", "a", "b", "a", "b", "a", "b", "b"}; !slices.Equal(got, want) {
		t.Errorf("launch order %v, want %v", got, want)
	}
	res := rec.results()
	a := res["a"]
	if a.GetReruns() != 1 || a.GetNoisy() || a.GetDisturbance() != 0 || len(a.GetLaunches()) != 4 ||
		!slices.Equal(a.GetSampleLaunches(), []uint32{0, 0, 2, 2, 3, 3}) {
		t.Errorf("a: reruns %d noisy %v disturbance %v sample_launches %v", a.GetReruns(), a.GetNoisy(), a.GetDisturbance(), a.GetSampleLaunches())
	}
	if l := a.GetLaunches()[1]; !l.GetDisturbed() || l.GetKept() || l.GetOtherBusyFrac() <= 0.1 {
		t.Errorf("a's launch 1 = %v, want disturbed and dropped", l)
	}
	if l := a.GetLaunches()[3]; !l.GetRemeasured() || !l.GetKept() || l.GetDisturbed() {
		t.Errorf("a's launch 3 = %v, want an undisturbed re-measurement, kept", l)
	}
	b := res["b"]
	if b.GetReruns() != 2 || !b.GetNoisy() || b.GetDisturbance() <= 0.1 || len(b.GetLaunches()) != 5 ||
		!slices.Equal(b.GetSampleLaunches(), []uint32{0, 0, 1, 1, 2, 2}) {
		t.Errorf("b: reruns %d noisy %v disturbance %v launches %d sample_launches %v", b.GetReruns(), b.GetNoisy(),
			b.GetDisturbance(), len(b.GetLaunches()), b.GetSampleLaunches())
	}

	// The per-run bound: a quarter of 6 planned launches is 2 re-measurements, whatever the items want.
	r, rec = newTestRunner(t, Options{HostStat: fakeStat(func(int) bool { return true })})
	runToEnd(t, r, okItem("a", 3, 6), okItem("b", 3, 6))
	if got := len(rec.running()); got != 8 {
		t.Errorf("%d launches, want 6 + 2 re-measurements", got)
	}
	for id, rep := range rec.results() {
		if !rep.GetNoisy() || rep.GetReruns() != 1 || rep.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK {
			t.Errorf("%s: noisy %v reruns %d status %v", id, rep.GetNoisy(), rep.GetReruns(), rep.GetStatus())
		}
	}
}

func TestFailedLaunchFailsItsItemOnly(t *testing.T) {
	r, rec := newTestRunner(t, Options{HostStat: fakeStat(func(int) bool { return false })})
	runToEnd(t, r, okItem("a", 3, 6), &agentv1.RunItem{ItemId: "x", KernelId: "fake.exit2", Launches: 3}, okItem("b", 3, 6))
	if got, want := rec.running(), []string{"a", "x", "b", "a", "b", "a", "b"}; !slices.Equal(got, want) {
		t.Errorf("launch order %v, want %v", got, want)
	}
	res := rec.results()
	if x := res["x"]; x.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_FAILED || !strings.Contains(x.GetError(), "exit 2") {
		t.Errorf("x: %v", x)
	}
	if res["a"].GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK || res["b"].GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK {
		t.Errorf("a, b: %v, %v", res["a"].GetStatus(), res["b"].GetStatus())
	}
}

// A real CPU hog on every CPU beside the kernel: /proc/stat shows the others' busy time, and the
// launches are marked disturbed.
func TestCPUHogMarksLaunchesDisturbed(t *testing.T) {
	if testing.Short() {
		t.Skip("spins the CPUs for a few seconds")
	}
	for range runtime.NumCPU() {
		hog := exec.Command("sh", "-c", "while :; do :; done")
		hog.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = hog.Process.Kill(); _ = hog.Wait() })
	}
	time.Sleep(100 * time.Millisecond)
	r, rec := newTestRunner(t, Options{MaxRemeasuresPerItem: 1})
	runToEnd(t, r, &agentv1.RunItem{ItemId: "spin", KernelId: "fake.spin", Launches: 2, Repetitions: 2,
		Params: map[string]string{"ms": "150"}})
	rep := rec.results()["spin"]
	if rep.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK || len(rep.GetLaunches()) < 2 {
		t.Fatalf("spin: %v", rep)
	}
	for _, l := range rep.GetLaunches() {
		if !l.GetDisturbed() || l.GetOtherBusyFrac() < 0.2 || l.GetCpuS() <= 0 {
			t.Errorf("launch %v: want disturbed with other_busy_frac ≥ 0.2 beside %d hogs", l, runtime.NumCPU())
		}
	}
	if !rep.GetNoisy() || rep.GetDisturbance() < 0.2 {
		t.Errorf("noisy %v disturbance %v", rep.GetNoisy(), rep.GetDisturbance())
	}
}

func TestShortSamplesAreFactsNotReMeasured(t *testing.T) {
	// Every launch disturbed at the launch level (a host that stays busy): an item measured in short
	// samples is not re-measured and not noisy; its launches carry the kernel's disturbed-sample counts.
	r, rec := newTestRunner(t, Options{RemeasureShare: 1, HostStat: fakeStat(func(int) bool { return true })})
	item := okItem("s", 3, 6)
	item.SampleTimeS = 0.0005
	runToEnd(t, r, item)
	if got := len(rec.running()); got != 3 {
		t.Errorf("%d launches, want 3 (no re-measurement of short samples)", got)
	}
	rep := rec.results()["s"]
	if rep.GetNoisy() || rep.GetReruns() != 0 || len(rep.GetLaunches()) != 3 {
		t.Fatalf("noisy %v reruns %d launches %d", rep.GetNoisy(), rep.GetReruns(), len(rep.GetLaunches()))
	}
	for _, l := range rep.GetLaunches() {
		if !l.GetDisturbed() || !l.GetKept() || l.GetShortSamples() != 20 || l.GetDisturbedSamples() != 3 {
			t.Errorf("launch %v: want disturbed, kept, 20 short samples of which 3 disturbed", l)
		}
	}
	h := rep.GetHarness()
	if h.GetEstimator() != "p5" || h.GetSampleTimeS() != 0.0005 || h.GetSampleOps() != 100 || h.GetSamplesPerRepetition() != 10 {
		t.Errorf("harness %v: want the kernel's sampling", h)
	}
}

func TestKernelArgsCarryTheSampleTime(t *testing.T) {
	args := kernelArgs(&agentv1.RunItem{KernelId: "k", MinTimeS: 0.1, SampleTimeS: 0.0005}, nil, 2)
	if got, want := strings.Join(args, " "), "--run k --repetitions 2 --min-time 0.1 --sample-time 0.0005"; got != want {
		t.Errorf("args %q, want %q", got, want)
	}
}
