package conn

import (
	"errors"
	"io"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Backoff is jittered exponential backoff: the n-th wait is uniformly drawn from [d/2, d] where
// d = min(Max, Initial·2ⁿ). Jitter keeps a fleet of agents from reconnecting in lockstep after a
// server restart.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	attempt int
	rand    func() float64 // [0,1); math/rand/v2 when nil
}

// Next returns the wait before the next attempt and advances.
func (b *Backoff) Next() time.Duration {
	d := b.Initial
	for i := 0; i < b.attempt && d < b.Max; i++ {
		d *= 2
	}
	if d > b.Max {
		d = b.Max
	}
	b.attempt++
	r := rand.Float64
	if b.rand != nil {
		r = b.rand
	}
	return d/2 + time.Duration(r()*float64(d/2))
}

// Reset starts over from Initial (after a stream that lived a while).
func (b *Backoff) Reset() { b.attempt = 0 }

// Retryable decides how a stream's end is treated: true means reconnect with the normal backoff;
// false means the server refused this agent (wrong token, no permission, incompatible server), which
// retrying will not fix by itself, so the agent logs it loudly and waits the longest backoff between
// tries.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, io.EOF) {
		return true
	}
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied, codes.Unimplemented,
		codes.InvalidArgument, codes.FailedPrecondition:
		return false
	}
	return true
}
