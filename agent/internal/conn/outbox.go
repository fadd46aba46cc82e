package conn

import (
	"sync"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// Outbox hands messages from the runner to the live stream's single sender goroutine (a gRPC stream
// is not safe for concurrent Send). With no stream up, Send drops the message and says so.
type Outbox struct {
	mu  sync.Mutex
	cur *session
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

func (o *Outbox) attach(s *session) {
	o.mu.Lock()
	o.cur = s
	o.mu.Unlock()
}

func (o *Outbox) detach(s *session) {
	o.mu.Lock()
	if o.cur == s {
		o.cur = nil
	}
	o.mu.Unlock()
}
