package conn

import (
	"testing"

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
