package conn

import (
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestBackoffGrowsJittersCapsAndResets(t *testing.T) {
	b := Backoff{Initial: 500 * time.Millisecond, Max: 60 * time.Second}
	var prevHi time.Duration
	for i := 0; i < 12; i++ {
		hi := min(500*time.Millisecond<<i, 60*time.Second)
		d := b.Next()
		if d < hi/2 || d > hi {
			t.Fatalf("attempt %d: wait %v outside [%v, %v]", i, d, hi/2, hi)
		}
		if hi < prevHi {
			t.Fatalf("bound shrank")
		}
		prevHi = hi
	}
	b.Reset()
	if d := b.Next(); d > 500*time.Millisecond {
		t.Fatalf("after reset wait %v", d)
	}
	lo := Backoff{Initial: time.Second, Max: 4 * time.Second, rand: func() float64 { return 0 }}
	hi := Backoff{Initial: time.Second, Max: 4 * time.Second, rand: func() float64 { return 0.999999 }}
	for i := 0; i < 5; i++ {
		l, h := lo.Next(), hi.Next()
		if h-l < time.Duration(float64(l)*0.99) {
			t.Fatalf("no jitter spread: %v vs %v", l, h)
		}
	}
	if got := lo.Next(); got != 2*time.Second {
		t.Fatalf("capped low bound = %v, want 2s", got)
	}
}

func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, true},
		{io.EOF, true},
		{fmt.Errorf("wrapped: %w", io.EOF), true},
		{status.Error(codes.Unavailable, "down"), true},
		{status.Error(codes.Internal, "bug"), true},
		{status.Error(codes.DeadlineExceeded, "slow"), true},
		{status.Error(codes.ResourceExhausted, "busy"), true},
		{errors.New("plain"), true},
		{status.Error(codes.Unauthenticated, "bad token"), false},
		{status.Error(codes.PermissionDenied, "revoked"), false},
		{status.Error(codes.Unimplemented, "not a ctxbench server"), false},
	} {
		if got := Retryable(c.err); got != c.want {
			t.Errorf("Retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
