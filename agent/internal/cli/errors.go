package cli

import (
	"errors"
	"fmt"
)

// Exit codes, the same for every command (docs/cli.md "Exit codes"). CI scripts branch on them, so they
// are contract: 1 is reserved for "what was measured is bad" (a failed run, a slower row).
const (
	ExitOK       = 0
	ExitFailed   = 1 // a run failed or was cancelled; gate: a row is significantly slower
	ExitUsage    = 2 // bad flags or arguments, including ones the server refused (400, 404, 409, 422)
	ExitServer   = 3 // the server could not be reached or answered badly (401, 403, 429, 5xx, garbage)
	ExitInterrup = 130
)

// exitError carries the exit code an error should end the command with.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &exitError{ExitUsage, fmt.Errorf(format, args...)}
}

func serverErrorf(format string, args ...any) error {
	return &exitError{ExitServer, fmt.Errorf(format, args...)}
}

// failure is an error whose message was already printed (a failed run, a gate that found regressions):
// the command only exits with its code.
type failure struct{ code int }

func (f *failure) Error() string { return fmt.Sprintf("exit %d", f.code) }

// exitCode maps an error to the process's exit code.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var f *failure
	if errors.As(err, &f) {
		return f.code
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.exitCode()
	}
	return ExitServer
}
