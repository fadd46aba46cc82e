// Package process runs a child the one way the agent runs children (a kernel executable's --list or
// --run): directly, no shell, in its own process group; stdout kept up to a limit and the tail of
// stderr; on timeout or cancellation the whole group gets SIGTERM, a grace period, then SIGKILL; and
// whatever happens the group is SIGKILLed once the child has exited, so no grandchild outlives it.
package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Spec is one child to run.
type Spec struct {
	Path string
	Args []string // after the program name
	Dir  string   // working directory; "" = the agent's
	Env  []string
	// Timeout ends the child (SIGTERM to its group, Grace, SIGKILL); ctx ending does the same.
	Timeout, Grace time.Duration
	MaxStdout      int // bytes of stdout kept; the rest is read and dropped (Result.StdoutOver)
	StderrTail     int // last bytes of stderr kept
}

// Result is what the child did.
type Result struct {
	Stdout      []byte
	StdoutOver  bool
	StderrTail  string
	ExitCode    int // -1 when killed by a signal or never started
	Signal      syscall.Signal
	TimedOut    bool
	Interrupted bool  // ctx ended (run cancelled, agent stopping)
	StartErr    error // the child never started
	Started     time.Time
	End         time.Time
	CPU         time.Duration // user + system of the child and the children it waited for (wait4 rusage)
}

// Run starts s and waits for it (and for its output, at most 2 s after it exits).
func Run(ctx context.Context, s Spec) (res Result) {
	res = Result{ExitCode: -1, Started: time.Now()}
	defer func() { res.End = time.Now() }() // every return carries the end time

	outR, outW, err := os.Pipe()
	if err != nil {
		res.StartErr = fmt.Errorf("create stdout pipe: %w", err)
		return res
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		res.StartErr = fmt.Errorf("create stderr pipe: %w", err)
		return res
	}
	cmd := &exec.Cmd{
		Path:        s.Path,
		Dir:         s.Dir,
		Args:        append([]string{s.Path}, s.Args...),
		Env:         s.Env,
		Stdin:       nil, // /dev/null
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	// *os.File writers go to the child as they are: Wait does not wait for pipe copies, so the child's
	// exit is seen at once even if a grandchild still holds the pipe.
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		res.StartErr = err
		return res
	}
	pgid := cmd.Process.Pid

	stdout := LimitedBuffer{Limit: s.MaxStdout}
	stdoutDone := make(chan struct{})
	go func() { defer close(stdoutDone); _, _ = io.Copy(&stdout, outR) }()
	stderr := TailBuffer{Limit: s.StderrTail}
	stderrDone := make(chan struct{})
	go func() { defer close(stderrDone); _, _ = io.Copy(&stderr, errR) }()

	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	timer := time.NewTimer(s.Timeout)
	defer timer.Stop()
	var waitErr error
	select {
	case waitErr = <-waitDone:
	case <-timer.C:
		res.TimedOut = true
		waitErr = terminateGroup(pgid, s.Grace, waitDone)
	case <-ctx.Done():
		res.Interrupted = true
		waitErr = terminateGroup(pgid, s.Grace, waitDone)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // strays in the group; ESRCH when none

	drainPipes([]*os.File{outR, errR}, stdoutDone, stderrDone)
	res.Stdout, res.StdoutOver = stdout.Bytes(), stdout.Over
	res.StderrTail = stderr.String()
	res.setExit(cmd.ProcessState, waitErr)
	return res
}

// drainPipes waits for the output copies to end and closes the pipes. The pipes close when the last
// holder dies; a process that left the group (setsid) could keep them open, so it waits at most 2 s.
func drainPipes(pipes []*os.File, copies ...chan struct{}) {
	drain := time.NewTimer(2 * time.Second)
	defer drain.Stop()
	for _, done := range copies {
		select {
		case <-done:
		case <-drain.C:
			for _, p := range pipes {
				p.Close()
			}
			<-done
		}
	}
	for _, p := range pipes {
		p.Close()
	}
}

// setExit records how the child ended: its exit code or signal, and its CPU time.
func (res *Result) setExit(ps *os.ProcessState, waitErr error) {
	if ps != nil {
		res.CPU = ps.UserTime() + ps.SystemTime()
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		} else {
			res.ExitCode = ee.ExitCode()
		}
	} else if waitErr == nil {
		res.ExitCode = 0
	}
}

// terminateGroup sends SIGTERM to the group, waits up to grace for the child to exit, then SIGKILLs.
func terminateGroup(pgid int, grace time.Duration, waitDone <-chan error) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-waitDone:
		return err
	case <-t.C:
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return <-waitDone
}

// Describe says how the child ended, for an error line: "exit status 2", "killed by signal SIGSEGV",
// "timed out after 30s", or why it never started.
func (r Result) Describe(timeout time.Duration) string {
	switch {
	case r.StartErr != nil:
		return "start: " + r.StartErr.Error()
	case r.TimedOut:
		return fmt.Sprintf("timed out after %s", timeout)
	case r.Signal != 0:
		return "killed by signal " + SignalName(r.Signal)
	}
	return fmt.Sprintf("exit status %d", r.ExitCode)
}

// LimitedBuffer keeps the first Limit bytes written and notes that more came; the rest is accepted and
// dropped so the child never blocks on a full pipe. (Not an embedded bytes.Buffer: io.Copy would use
// its ReadFrom and bypass the limit.)
type LimitedBuffer struct {
	buf   []byte
	Limit int
	Over  bool
}

func (b *LimitedBuffer) Write(p []byte) (int, error) {
	room := b.Limit - len(b.buf)
	if room < len(p) {
		b.Over = true
		if room > 0 {
			b.buf = append(b.buf, p[:room]...)
		}
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Bytes returns what was kept.
func (b *LimitedBuffer) Bytes() []byte { return b.buf }

// TailBuffer keeps the last Limit bytes written.
type TailBuffer struct {
	buf   []byte
	Limit int
}

func (b *TailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.Limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *TailBuffer) String() string { return string(b.buf) }

// LastLine is the last non-empty line of s, trimmed and capped at 500 bytes, for a one-line error.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if len(line) > 500 {
		line = line[:500] + "…"
	}
	return line
}

// SignalName is a signal's name ("SIGSEGV"), or its number and description when it has none.
func SignalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return fmt.Sprintf("%d (%s)", int(s), s.String())
}
