package process

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func sh(script string) Spec {
	return Spec{Path: "/bin/sh", Args: []string{"-c", script}, Timeout: 10 * time.Second, Grace: time.Second,
		MaxStdout: 1 << 20, StderrTail: 1 << 10}
}

func TestExitCodeOutputAndSpan(t *testing.T) {
	res := Run(context.Background(), sh("echo out; echo one >&2; echo two >&2; exit 3"))
	if res.ExitCode != 3 || res.Signal != 0 || res.TimedOut || res.Interrupted || res.StartErr != nil {
		t.Fatalf("result %+v", res)
	}
	if string(res.Stdout) != "out\n" || LastLine(res.StderrTail) != "two" {
		t.Errorf("stdout %q, stderr %q", res.Stdout, res.StderrTail)
	}
	if res.End.Before(res.Started) || res.Describe(time.Second) != "exit status 3" {
		t.Errorf("span %v..%v, %q", res.Started, res.End, res.Describe(time.Second))
	}
	missing := Run(context.Background(), Spec{Path: "/nonexistent/kernel", Timeout: time.Second})
	if missing.StartErr == nil || missing.ExitCode != -1 || missing.End.IsZero() {
		t.Errorf("missing executable: %+v", missing)
	}
}

func TestOutputLimits(t *testing.T) {
	s := sh("head -c 100000 /dev/zero; head -c 5000 /dev/zero | tr '\\0' e >&2; echo tail >&2")
	s.MaxStdout, s.StderrTail = 1000, 10
	res := Run(context.Background(), s)
	if res.ExitCode != 0 || len(res.Stdout) != 1000 || !res.StdoutOver {
		t.Errorf("exit %d, %d bytes kept, over=%v", res.ExitCode, len(res.Stdout), res.StdoutOver)
	}
	if res.StderrTail != "eeeeetail\n" {
		t.Errorf("stderr tail %q", res.StderrTail)
	}
}

// gone reports whether pid has ended within the given time (a zombie has: whoever adopted it may be
// slow to reap it).
func gone(pid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		if fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(fields) > 0 && fields[0] == "Z" {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func TestNoGrandchildOutlivesTheChild(t *testing.T) {
	res := Run(context.Background(), sh("sleep 30 >/dev/null 2>&1 & echo $!"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("stdout %q, exit %d", res.Stdout, res.ExitCode)
	}
	if !gone(pid, 5*time.Second) {
		t.Errorf("grandchild %d still runs after its parent exited", pid)
	}
}

func TestTimeoutTerminatesTheGroup(t *testing.T) {
	s := sh("trap '' TERM; sleep 30 & wait")
	s.Timeout, s.Grace = 200*time.Millisecond, 200*time.Millisecond
	start := time.Now()
	res := Run(context.Background(), s)
	if !res.TimedOut || res.Signal != syscall.SIGKILL || time.Since(start) > 5*time.Second {
		t.Errorf("result %+v after %s", res, time.Since(start))
	}
	if got := res.Describe(s.Timeout); got != "timed out after 200ms" {
		t.Errorf("Describe = %q", got)
	}
	s = sh("sleep 30")
	s.Timeout = 200 * time.Millisecond
	if res := Run(context.Background(), s); !res.TimedOut || res.Signal != syscall.SIGTERM {
		t.Errorf("a child that obeys SIGTERM: %+v", res)
	}
}

func TestCancelInterrupts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res := Run(ctx, sh("sleep 30"))
	if !res.Interrupted || res.TimedOut || res.Signal != syscall.SIGTERM {
		t.Errorf("result %+v", res)
	}
}

func TestBuffersAndNames(t *testing.T) {
	tb := TailBuffer{Limit: 8}
	_, _ = tb.Write([]byte("0123456789"))
	_, _ = tb.Write([]byte("ab"))
	if tb.String() != "456789ab" {
		t.Errorf("tail = %q", tb.String())
	}
	lb := LimitedBuffer{Limit: 4}
	_, _ = lb.Write([]byte("abc"))
	_, _ = lb.Write([]byte("def"))
	if string(lb.Bytes()) != "abcd" || !lb.Over {
		t.Errorf("limited = %q over=%v", lb.Bytes(), lb.Over)
	}
	if got := LastLine("one\ntwo\n\n"); got != "two" {
		t.Errorf("LastLine = %q", got)
	}
	if SignalName(syscall.SIGSEGV) != "SIGSEGV" || SignalName(syscall.SIGTERM) != "SIGTERM" {
		t.Errorf("names %q %q", SignalName(syscall.SIGSEGV), SignalName(syscall.SIGTERM))
	}
	if got := SignalName(syscall.Signal(40)); !strings.HasPrefix(got, "40 (") {
		t.Errorf("SignalName(40) = %q", got)
	}
}
