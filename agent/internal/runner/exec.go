package runner

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

	"github.com/ctxbench/ctxbench/agent/internal/catalog"
)

const (
	maxStdout     = 16 << 20 // a kernel result is a few KiB; more is a broken kernel
	stderrTailLen = 4 << 10
)

// execResult is what one kernel process did.
type execResult struct {
	stdout       []byte
	stdoutOver   bool
	stderrTail   string
	exitCode     int // -1 when killed by a signal or never started
	signal       syscall.Signal
	timedOut     bool
	interrupted  bool // ctx ended (run cancelled or agent stopping)
	startErr     error
	started, end time.Time
	cpu          time.Duration // user + system of the kernel and the children it waited for (wait4 rusage)
}

// execKernel runs path with args directly (no shell) in its own process group. When the timeout
// passes or ctx ends, the whole group gets SIGTERM, then SIGKILL after grace. Whatever happens, the
// group is SIGKILLed once the kernel has exited, so no grandchild outlives its item.
// workDir is the kernel's working directory ("" = the agent's): the first scratch root, where a
// storage kernel with an empty `dir` writes.
func execKernel(ctx context.Context, path, workDir string, args []string, timeout, grace time.Duration) (res execResult) {
	res = execResult{exitCode: -1, started: time.Now()}
	defer func() { res.end = time.Now() }() // res is the named result, so every return carries the end time

	outR, outW, err := os.Pipe()
	if err != nil {
		res.startErr = fmt.Errorf("create stdout pipe: %w", err)
		return res
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		res.startErr = fmt.Errorf("create stderr pipe: %w", err)
		return res
	}
	cmd := &exec.Cmd{
		Path:        path,
		Dir:         workDir,
		Args:        append([]string{path}, args...),
		Env:         catalog.KernelEnv(),
		Stdin:       nil, // /dev/null
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	// *os.File writers go to the child as-is: Wait does not wait for pipe copies, so the kernel's
	// exit is seen at once even if a grandchild still holds the pipe.
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		res.startErr = err
		return res
	}
	pgid := cmd.Process.Pid

	stdoutDone := make(chan struct{})
	var stdout limitedBuf
	stdout.limit = maxStdout
	go func() { defer close(stdoutDone); _, _ = io.Copy(&stdout, outR) }()
	stderrDone := make(chan struct{})
	var stderr tailBuf
	stderr.limit = stderrTailLen
	go func() { defer close(stderrDone); _, _ = io.Copy(&stderr, errR) }()

	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	select {
	case waitErr = <-waitDone:
	case <-timer.C:
		res.timedOut = true
		waitErr = terminateGroup(pgid, grace, waitDone)
	case <-ctx.Done():
		res.interrupted = true
		waitErr = terminateGroup(pgid, grace, waitDone)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // strays in the group; ESRCH when none

	// The pipes close when the last holder dies. A process that left the group (setsid) could keep
	// them open; do not wait for it forever.
	drain := time.NewTimer(2 * time.Second)
	defer drain.Stop()
	for _, done := range []chan struct{}{stdoutDone, stderrDone} {
		select {
		case <-done:
		case <-drain.C:
			outR.Close()
			errR.Close()
			<-done
		}
	}
	outR.Close()
	errR.Close()

	if ps := cmd.ProcessState; ps != nil {
		res.cpu = ps.UserTime() + ps.SystemTime()
	}
	res.stdout, res.stdoutOver = stdout.buf, stdout.over
	res.stderrTail = stderr.String()
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.signal = ws.Signal()
		} else {
			res.exitCode = ee.ExitCode()
		}
	} else if waitErr == nil {
		res.exitCode = 0
	}
	return res
}

// terminateGroup sends SIGTERM to the group, waits up to grace for the kernel to exit, then SIGKILLs.
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

// limitedBuf keeps the first limit bytes and notes that more came (the rest is drained and dropped so
// the kernel never blocks on a full pipe).
type limitedBuf struct {
	buf   []byte
	limit int
	over  bool
}

func (b *limitedBuf) Write(p []byte) (int, error) {
	room := b.limit - len(b.buf)
	if room < len(p) {
		b.over = true
		if room > 0 {
			b.buf = append(b.buf, p[:room]...)
		}
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// tailBuf keeps the last limit bytes written.
type tailBuf struct {
	buf   []byte
	limit int
}

func (b *tailBuf) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuf) String() string { return string(b.buf) }

// lastLine is the last non-empty line of s, trimmed and capped, for a one-line error.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if len(line) > 500 {
		line = line[:500] + "…"
	}
	return line
}

func sigName(s syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGABRT: "SIGABRT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGKILL: "SIGKILL",
		syscall.SIGTERM: "SIGTERM", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
		syscall.SIGILL: "SIGILL", syscall.SIGINT: "SIGINT", syscall.SIGPIPE: "SIGPIPE",
	}
	if n, ok := names[s]; ok {
		return n
	}
	return fmt.Sprintf("%d (%s)", int(s), s.String())
}
