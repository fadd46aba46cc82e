//go:build unix

package harness

import "syscall"

// readRusage adds the process's context switches so far (getrusage RUSAGE_SELF, all threads): voluntary
// ones (a thread blocked, e.g. an idle P's thread parking on a futex) and involuntary ones (preempted).
// Goroutine switches inside one OS thread do not show here.
func readRusage(into map[string]float64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return
	}
	into["voluntary_ctxsw_per_op"] = float64(ru.Nvcsw)
	into[involuntaryKey] = float64(ru.Nivcsw)
}
