package runner

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// fakeClock moves only when the test advances it, and runs the timers that fall due.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	for _, t := range c.timers {
		if !t.stopped && !t.at.After(c.now) {
			t.stopped = true
			due = append(due, t)
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

// pacedRecorder is a Sender behind a server that asks for progress at most every `every`.
type pacedRecorder struct {
	recorder
	every time.Duration
}

func (p *pacedRecorder) ProgressInterval() time.Duration { return p.every }

// kinds names each message sent: "update:STATE", "progress:N" (N updates), "report".
func (s *recorder) kinds() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.msgs {
		switch {
		case m.GetRunUpdate() != nil:
			out = append(out, "update:"+m.GetRunUpdate().GetState().String()[len("ITEM_STATE_"):])
		case m.GetRunProgress() != nil:
			out = append(out, "progress:"+strconv.Itoa(len(m.GetRunProgress().GetUpdates())))
		case m.GetResultReport() != nil:
			out = append(out, "report")
		}
	}
	return out
}

func runningUpdate(item string, done uint32) *agentv1.RunUpdate {
	return &agentv1.RunUpdate{RunId: "run-1", ItemId: item, State: agentv1.ItemState_ITEM_STATE_RUNNING,
		LaunchesDone: done, LaunchesPlanned: 7}
}

// Seven launches inside one interval: the first start travels at once, the other 13 updates are held
// and then replaced by the item's result (its launches say the same); no DONE follows the result. Held
// progress of another item still travels before the result, in order.
func TestProgressCoalescesLaunchesWithinAnInterval(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0)}
	rec := &pacedRecorder{every: time.Second}
	c := newCoalescer(rec, clk)
	c.update(runningUpdate("a", 0))
	for l := uint32(1); l <= 7; l++ {
		clk.Advance(100 * time.Millisecond)
		c.update(runningUpdate("a", l-1)) // the launch starts
		c.update(runningUpdate("a", l))   // and ends
	}
	c.update(runningUpdate("b", 0))
	c.result(&agentv1.ResultReport{RunId: "run-1", ItemId: "a"})

	want := []string{"progress:1", "progress:1", "report"}
	if got := rec.kinds(); !slices.Equal(got, want) {
		t.Fatalf("sent %v, want %v", got, want)
	}
	if held := rec.msgs[1].GetRunProgress().GetUpdates(); held[0].GetItemId() != "b" {
		t.Errorf("flushed before the result: %v, want item b's progress only", held)
	}
	// Nothing of item a is left to travel after its result.
	clk.Advance(time.Second)
	c.Flush()
	if got := rec.kinds(); len(got) != len(want) {
		t.Errorf("after the result sent %v", got[len(want):])
	}
}

// Held progress goes out when the interval ends, one update per item (latest wins), in the order the
// items last changed; nothing is sent between.
func TestProgressFlushesWhenTheIntervalEnds(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0)}
	rec := &pacedRecorder{every: time.Second}
	c := newCoalescer(rec, clk)
	c.update(runningUpdate("a", 0)) // at once: nothing sent for an interval
	clk.Advance(300 * time.Millisecond)
	c.update(runningUpdate("a", 1))
	c.update(runningUpdate("b", 0))
	c.update(runningUpdate("a", 2))
	clk.Advance(600 * time.Millisecond)
	if got := rec.kinds(); !slices.Equal(got, []string{"progress:1"}) {
		t.Fatalf("before the interval ends sent %v", got)
	}
	clk.Advance(100 * time.Millisecond)
	if got := rec.kinds(); !slices.Equal(got, []string{"progress:1", "progress:2"}) {
		t.Fatalf("after it sent %v", got)
	}
	var got []string
	for _, u := range rec.msgs[1].GetRunProgress().GetUpdates() {
		got = append(got, u.GetItemId()+":"+strconv.Itoa(int(u.GetLaunchesDone())))
	}
	if !slices.Equal(got, []string{"b:0", "a:2"}) {
		t.Errorf("coalesced %v, want [b:0 a:2]", got)
	}
	c.Flush()
	clk.Advance(time.Hour)
	if n := len(rec.kinds()); n != 2 {
		t.Errorf("%d messages after an empty flush and a quiet hour, want 2", n)
	}
}

// A server that does not pace progress (interval 0, an older one) gets every update on its own, and
// what was held when the interval dropped to 0 (a reconnect) goes out as RunUpdates first.
func TestProgressUnpacedSendsEachUpdate(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0)}
	rec := &pacedRecorder{every: time.Second}
	c := newCoalescer(rec, clk)
	c.update(runningUpdate("a", 0))
	c.update(runningUpdate("a", 1)) // held
	rec.every = 0
	c.update(runningUpdate("a", 2))
	c.update(runningUpdate("a", 3))
	want := []string{"progress:1", "update:RUNNING", "update:RUNNING", "update:RUNNING"}
	if got := rec.kinds(); !slices.Equal(got, want) {
		t.Fatalf("sent %v, want %v", got, want)
	}
	clk.Advance(time.Hour) // the stopped timer sends nothing
	if got := rec.kinds(); len(got) != 4 {
		t.Errorf("sent %v after the interval", got)
	}
}

// Through the runner: a 7-launch item costs at most 2 progress messages when its launches fall within
// one interval (the fake clock never moves), its result replaces its own held progress and says its 7
// launches, and no DONE follows a result. The two items' launches interleave, so both end in the last
// round: the progress flushed before a's result is b's alone.
func TestRunnerResultsReplaceTheirItemsHeldProgress(t *testing.T) {
	r, _ := newTestRunner(t, Options{HostStat: fakeStat(func(int) bool { return false })})
	rec := &pacedRecorder{recorder: recorder{}, every: time.Second}
	r.out = newCoalescer(rec, &fakeClock{now: time.Unix(1000, 0)})
	runToEnd(t, r, okItem("a", 7, 14), okItem("b", 7, 14))

	want := []string{"update:ACCEPTED", "progress:1", "progress:1", "report", "report", "update:RUN_FINISHED"}
	got := rec.kinds()
	if !slices.Equal(got, want) {
		t.Fatalf("sent %v, want %v", got, want)
	}
	if ups := rec.msgs[2].GetRunProgress().GetUpdates(); ups[0].GetItemId() != "b" {
		t.Errorf("progress flushed before a's result: %v, want b's", ups)
	}
	for _, i := range []int{3, 4} {
		rep := rec.msgs[i].GetResultReport()
		if len(rep.GetLaunches()) != 7 {
			t.Errorf("%s's result says %d launches, want 7", rep.GetItemId(), len(rep.GetLaunches()))
		}
	}
}
