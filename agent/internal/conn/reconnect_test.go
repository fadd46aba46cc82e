package conn

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// retries records the waits the agent logs between attempts ("retry_in").
type retries struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *retries) Enabled(context.Context, slog.Level) bool { return true }
func (r *retries) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *retries) WithGroup(string) slog.Handler            { return r }
func (r *retries) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "retry_in" {
			r.mu.Lock()
			r.waits = append(r.waits, a.Value.Duration())
			r.mu.Unlock()
		}
		return true
	})
	return nil
}

// await returns once n waits are logged, or after timeout.
func (r *retries) await(n int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		got := len(r.waits)
		r.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A server that accepts TCP connections and closes them at once (no HTTP/2): every attempt fails. With
// one backoff, each attempt is exactly one connection, made only after the logged wait; grpc-go's own
// channel backoff stacked under it would dial on its own schedule in the background and fail attempts
// without dialing while the channel sits in TRANSIENT_FAILURE.
func TestOneBackoffOneDialPerAttempt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var dials []time.Time
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			dials = append(dials, time.Now())
			mu.Unlock()
			c.Close()
		}
	}()
	rec := &retries{}
	stop := runClient(t, Options{Server: ln.Addr().String(), Log: slog.New(rec),
		MinBackoff: 80 * time.Millisecond, MaxBackoff: 160 * time.Millisecond})
	time.Sleep(2 * time.Second)
	stop()
	mu.Lock()
	defer mu.Unlock()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	// Cancelling may land between a dial and its logged end, or in a wait: one of either unmatched.
	if n, w := len(dials), len(rec.waits); w < 5 || n < w || n > w+1 {
		t.Fatalf("%d connections for %d attempts (waits %v): want one connection per attempt", n, w, rec.waits)
	}
	for i := 1; i < len(dials); i++ {
		gap, wait := dials[i].Sub(dials[i-1]), rec.waits[i-1]
		if wait < 40*time.Millisecond || wait > 160*time.Millisecond {
			t.Errorf("wait %d = %v, outside the backoff's [40ms, 160ms]", i, wait)
		}
		if gap < wait-5*time.Millisecond {
			t.Errorf("connection %d came %v after the previous one, before the logged wait of %v", i, gap, wait)
		}
	}
}

// holdServer welcomes each stream and ends it after the next hold in line (then at once).
type holdServer struct {
	agentv1.UnimplementedAgentServiceServer
	mu    sync.Mutex
	holds []time.Duration
}

func (s *holdServer) Connect(stream agentv1.AgentService_ConnectServer) error {
	if _, err := welcome(stream); err != nil {
		return err
	}
	s.mu.Lock()
	var hold time.Duration
	if len(s.holds) > 0 {
		hold, s.holds = s.holds[0], s.holds[1:]
	}
	s.mu.Unlock()
	time.Sleep(hold)
	return nil
}

// Streams that end at once grow the backoff; one that lived StableAfter resets it to MinBackoff.
func TestBackoffResetsAfterAHealthyStream(t *testing.T) {
	addr := serveAgentService(t, &holdServer{holds: []time.Duration{0, 0, 0, 0, 0, 300 * time.Millisecond}})
	rec := &retries{}
	stop := runClient(t, Options{Server: addr, Log: slog.New(rec),
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 5 * time.Second, StableAfter: 200 * time.Millisecond})
	rec.await(6, 10*time.Second)
	stop()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.waits) < 6 {
		t.Fatalf("%d reconnects logged, want 6: %v", len(rec.waits), rec.waits)
	}
	// Attempt n waits within [d/2, d], d = 20 ms·2ⁿ: the fifth quick end waits at least 160 ms.
	if w := rec.waits[4]; w < 160*time.Millisecond || w > 320*time.Millisecond {
		t.Errorf("fifth wait %v, want the grown backoff [160ms, 320ms] (waits %v)", w, rec.waits)
	}
	if w := rec.waits[5]; w > 20*time.Millisecond {
		t.Errorf("wait after a stream that lived StableAfter = %v, want reset to at most 20ms (waits %v)", w, rec.waits)
	}
}

// busyServer refuses each Hello as the server does while it records other agents' connects:
// UNAVAILABLE with gRPC's pushback trailer naming when to come back.
type busyServer struct {
	agentv1.UnimplementedAgentServiceServer
	after string
}

func (s *busyServer) Connect(stream agentv1.AgentService_ConnectServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	stream.SetTrailer(metadata.Pairs(pushbackKey, s.after))
	return status.Error(codes.Unavailable, "the server is recording other agents' Hellos; retry")
}

// The server's pushback replaces the backoff (it is already spread over the agents it turned away),
// capped by MaxBackoff; a malformed one is ignored.
func TestPushbackSetsTheWait(t *testing.T) {
	for _, tc := range []struct {
		after    string
		min, max time.Duration
	}{
		{"700", 700 * time.Millisecond, 700 * time.Millisecond},
		{"900000", 2 * time.Second, 2 * time.Second},           // capped by MaxBackoff
		{"soon", 10 * time.Millisecond, 20 * time.Millisecond}, // the backoff's first wait
	} {
		addr := serveAgentService(t, &busyServer{after: tc.after})
		rec := &retries{}
		stop := runClient(t, Options{Server: addr, Log: slog.New(rec),
			MinBackoff: 20 * time.Millisecond, MaxBackoff: 2 * time.Second})
		rec.await(1, 5*time.Second)
		stop()
		rec.mu.Lock()
		if len(rec.waits) == 0 {
			t.Fatalf("pushback %q: no reconnect logged", tc.after)
		}
		if w := rec.waits[0]; w < tc.min || w > tc.max {
			t.Errorf("pushback %q: waited %v, want [%v, %v]", tc.after, w, tc.min, tc.max)
		}
		rec.mu.Unlock()
	}
}

func TestPushbackKeepsTheStatus(t *testing.T) {
	err := withPushback(status.Error(codes.Unavailable, "busy"), metadata.Pairs(pushbackKey, "1500"))
	if after, ok := pushbackOf(err); !ok || after != 1500*time.Millisecond {
		t.Fatalf("pushbackOf = %v, %v; want 1.5s", after, ok)
	}
	if status.Code(err) != codes.Unavailable || !Retryable(err) {
		t.Fatalf("wrapped error lost its status: %v", err)
	}
	if withPushback(nil, metadata.Pairs(pushbackKey, "1")) != nil {
		t.Fatal("nil error gained a pushback")
	}
}
