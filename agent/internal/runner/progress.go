package runner

import (
	"sync"
	"time"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// ProgressPacer is what a Sender may also be (conn.Outbox is): how often, at most, RUNNING progress may
// travel to the server now (its Welcome.progress_interval_ms); 0 sends each RunUpdate on its own.
type ProgressPacer interface {
	ProgressInterval() time.Duration
}

// clock is the time the coalescer reads and the timer it flushes by (a fake one in tests).
type clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// coalescer is the runner's way to the server. Each launch of an item sends RUNNING as it starts and as
// it ends; a server that paces progress (ProgressPacer) gets them held per item, the latest winning,
// and sent as one RunProgress at most every interval. Every other message (ACCEPTED, RUN_FINISHED, a
// result) first sends what is held, so order is kept; an item's result replaces its own held progress.
// Safe for concurrent use (the flush timer runs on its own).
type coalescer struct {
	send  Sender
	clock clock

	mu       sync.Mutex
	held     []*agentv1.RunUpdate // latest of each item, in the order the items last changed
	lastSent time.Time            // of the last progress sent
	stop     func() bool          // the pending flush's timer; nil when none
	timer    uint64               // which timer is pending: a late one that lost the race does nothing
}

func newCoalescer(send Sender, c clock) *coalescer { return &coalescer{send: send, clock: c} }

func (c *coalescer) interval() time.Duration {
	if p, ok := c.send.(ProgressPacer); ok {
		return p.ProgressInterval()
	}
	return 0
}

// running sends u (a RUNNING update) now, or holds it until the interval since the last progress ends.
func (c *coalescer) running(u *agentv1.RunUpdate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	every := c.interval()
	if every <= 0 {
		c.flush(0)
		c.sendUpdate(u)
		return
	}
	c.drop(u.GetRunId(), u.GetItemId())
	c.held = append(c.held, u)
	if c.stop != nil {
		return // a flush is due already
	}
	if wait := every - c.clock.Now().Sub(c.lastSent); wait > 0 {
		c.timer++
		timer := c.timer
		c.stop = c.clock.AfterFunc(wait, func() { c.due(timer) })
		return
	}
	c.flush(every)
}

// other sends m after what is held; false when it was not sent (see Sender).
func (c *coalescer) other(m *agentv1.ConnectRequest) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flush(c.interval())
	return c.send.Send(m)
}

// result sends an item's result after what is held, less the item's own held progress: the report is
// the item's final state and its launches say what that progress would (the server counts them), so it
// would be one message and one write for nothing; and no DONE follows it. false when it was not sent.
func (c *coalescer) result(rep *agentv1.ResultReport) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop(rep.GetRunId(), rep.GetItemId())
	c.flush(c.interval())
	return c.send.Send(&agentv1.ConnectRequest{Msg: &agentv1.ConnectRequest_ResultReport{ResultReport: rep}})
}

// drop forgets the item's held update, if any. Called with mu held.
func (c *coalescer) drop(runID, itemID string) {
	for i, h := range c.held {
		if h.GetRunId() == runID && h.GetItemId() == itemID {
			c.held = append(c.held[:i], c.held[i+1:]...)
			return
		}
	}
}

// update sends a RunUpdate: RUNNING through the pacing, any other state at once, after what is held.
func (c *coalescer) update(u *agentv1.RunUpdate) {
	if u.GetState() == agentv1.ItemState_ITEM_STATE_RUNNING {
		c.running(u)
		return
	}
	c.other(&agentv1.ConnectRequest{Msg: &agentv1.ConnectRequest_RunUpdate{RunUpdate: u}})
}

// Flush sends what is held now (a run that ends, even interrupted, leaves nothing behind).
func (c *coalescer) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flush(c.interval())
}

func (c *coalescer) due(timer uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop == nil || timer != c.timer {
		return // flushed meanwhile
	}
	c.stop = nil
	c.flush(c.interval())
}

// flush sends what is held: one RunProgress, or one RunUpdate each when the server no longer paces
// (every is 0: a reconnect to an older server). Called with mu held.
func (c *coalescer) flush(every time.Duration) {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	if len(c.held) == 0 {
		return
	}
	held := c.held
	c.held = nil
	c.lastSent = c.clock.Now()
	if every <= 0 {
		for _, u := range held {
			c.sendUpdate(u)
		}
		return
	}
	c.send.Send(&agentv1.ConnectRequest{Msg: &agentv1.ConnectRequest_RunProgress{
		RunProgress: &agentv1.RunProgress{Updates: held}}})
}

func (c *coalescer) sendUpdate(u *agentv1.RunUpdate) {
	c.send.Send(&agentv1.ConnectRequest{Msg: &agentv1.ConnectRequest_RunUpdate{RunUpdate: u}})
}
