package conn

import (
	"testing"
	"time"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

func TestOutboxDropsWithoutStreamAndUnblocksWhenItEnds(t *testing.T) {
	o := NewOutbox()
	m := &agentv1.ConnectRequest{}
	if o.Send(m) {
		t.Fatal("Send without a stream reported success")
	}
	done := make(chan struct{})
	s := &session{ch: make(chan *agentv1.ConnectRequest, 1), done: done}
	o.attach(s)
	if !o.Send(m) {
		t.Fatal("Send with room failed")
	}
	result := make(chan bool)
	go func() { result <- o.Send(m) }() // queue full: blocks until the stream ends
	close(done)
	if <-result {
		t.Fatal("Send on an ended stream reported success")
	}
	o.detach(s)
	if o.Send(m) {
		t.Fatal("Send after detach reported success")
	}
}

// The runner paces progress by the current stream's Welcome: 0 before it, and again once the stream ends
// (the next server may be an older one, which knows no RunProgress).
func TestOutboxProgressIntervalIsTheWelcomedStreams(t *testing.T) {
	o := NewOutbox()
	s := &session{ch: make(chan *agentv1.ConnectRequest, 1), done: make(chan struct{})}
	o.attach(s)
	if got := o.ProgressInterval(); got != 0 {
		t.Fatalf("before the Welcome: %v, want 0", got)
	}
	o.welcomed(s, time.Second)
	if got := o.ProgressInterval(); got != time.Second {
		t.Fatalf("after a Welcome of 1000 ms: %v", got)
	}
	o.welcomed(&session{}, 5*time.Second) // a stream that is no longer current
	o.detach(s)
	if got := o.ProgressInterval(); got != 0 {
		t.Fatalf("after the stream ended: %v, want 0", got)
	}
}
