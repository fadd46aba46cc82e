package conn

import (
	"sync"
	"time"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// Outbox hands messages from the runner to the live stream's single sender goroutine (a gRPC stream
// is not safe for concurrent Send). With no stream up, Send drops the message and says so.
type Outbox struct {
	mu       sync.Mutex
	cur      *session
	progress time.Duration // the current stream's Welcome.progress_interval_ms; 0 before its Welcome
}

type session struct {
	ch   chan *agentv1.ConnectRequest
	done <-chan struct{}
}

// NewOutbox returns an Outbox with no stream attached.
func NewOutbox() *Outbox { return &Outbox{} }

// Send queues m for the current stream. It blocks while the stream's queue is full, and returns false
// when no stream is up or it ends first.
func (o *Outbox) Send(m *agentv1.ConnectRequest) bool {
	o.mu.Lock()
	s := o.cur
	o.mu.Unlock()
	if s == nil {
		return false
	}
	select {
	case s.ch <- m:
		return true
	case <-s.done:
		return false
	}
}

// ProgressInterval is how often, at most, the server wants RUNNING progress (runner.ProgressPacer): its
// Welcome's progress_interval_ms; 0 (each RunUpdate on its own) while no stream is welcomed, and from an
// older server, which knows no RunProgress.
func (o *Outbox) ProgressInterval() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.progress
}

// welcomed records s's server's progress interval.
func (o *Outbox) welcomed(s *session, progress time.Duration) {
	o.mu.Lock()
	if o.cur == s {
		o.progress = progress
	}
	o.mu.Unlock()
}

func (o *Outbox) attach(s *session) {
	o.mu.Lock()
	o.cur = s
	o.progress = 0
	o.mu.Unlock()
}

func (o *Outbox) detach(s *session) {
	o.mu.Lock()
	if o.cur == s {
		o.cur = nil
		o.progress = 0
	}
	o.mu.Unlock()
}
