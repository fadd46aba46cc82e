package conn

import (
	"errors"
	"strconv"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// pushbackKey is gRPC's "come back after this many milliseconds" trailer (gRFC A6). The server sends it
// with UNAVAILABLE when it is recording other agents' connects (a fleet reconnecting after a restart):
// the wait it names is already spread over the refused agents, so it replaces this agent's backoff.
const pushbackKey = "grpc-retry-pushback-ms"

// pushbackError is a stream or RPC error that carries the server's pushback.
type pushbackError struct {
	err   error
	after time.Duration
}

func (e *pushbackError) Error() string { return e.err.Error() }
func (e *pushbackError) Unwrap() error { return e.err }

// GRPCStatus keeps status.Code and status.Convert working on the wrapped error.
func (e *pushbackError) GRPCStatus() *status.Status { return status.Convert(e.err) }

// withPushback attaches the trailer's pushback, if any and well formed, to err (nil stays nil).
func withPushback(err error, trailer metadata.MD) error {
	if err == nil {
		return nil
	}
	v := trailer.Get(pushbackKey)
	if len(v) == 0 {
		return err
	}
	ms, perr := strconv.ParseInt(v[0], 10, 64)
	if perr != nil || ms < 0 {
		return err
	}
	return &pushbackError{err: err, after: time.Duration(ms) * time.Millisecond}
}

// pushbackOf returns the server's pushback carried by err, if any.
func pushbackOf(err error) (time.Duration, bool) {
	var p *pushbackError
	if errors.As(err, &p) {
		return p.after, true
	}
	return 0, false
}
