package agent

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// readPids waits for the fake kernel's pidfile: the kernel's pid, then its grandchild's.
func readPids(t *testing.T, path string) []int {
	t.Helper()
	var pids []int
	waitFor(t, "pidfile "+path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pids = nil
		for _, f := range strings.Fields(string(b)) {
			p, _ := strconv.Atoi(f)
			pids = append(pids, p)
		}
		return len(pids) == 2
	})
	return pids
}

// gone says the process no longer runs: it does not exist, or it is a zombie awaiting its reaper
// (in a container, PID 1 may never reap the kernel's orphaned grandchild).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

// waitPidsGone waits until the processes a fake kernel wrote to pidfile are gone (skipped, with a log
// line, when the kernel was killed before it wrote them).
func waitPidsGone(t *testing.T, pidfile string) {
	t.Helper()
	if _, err := os.Stat(pidfile); err != nil {
		t.Log("the stubborn kernel was killed before it wrote its pids; process-group check skipped")
		return
	}
	for _, pid := range readPids(t, pidfile) {
		waitFor(t, "timed-out kernel process to be gone", func() bool { return gone(pid) })
	}
}
