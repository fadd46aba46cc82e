package kernels

// Family sched: the Go scheduler's own switch.
//
// sched.gosched measures one runtime.Gosched call while `goroutines` goroutines all loop on it. With
// procs=1 and two or more goroutines each call is one goroutine switch (the caller goes to the global run
// queue and the next runnable goroutine runs); with one goroutine it is a trip through the scheduler
// that picks the caller again (no switch). Seed 000 (g_sched.go) plots this up to 16K goroutines and
// reads "only about 250 ns even at 16K" on a Pentium G2030 (Go of 2014, GOMAXPROCS 1); seed 003 runs
// two goroutines under GOMAXPROCS(1) and says only "under 1 µs".

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/ctxbench/ctxbench/kernels/go/internal/harness"
	"github.com/ctxbench/ctxbench/kernels/go/internal/spec"
)

func gosched() Kernel {
	return Kernel{
		Spec: spec.Kernel{
			ID:     "sched.gosched",
			Title:  "Goroutine switch by runtime.Gosched",
			Family: "sched",
			Unit:   "ns/op",
			Description: "`goroutines` goroutines each call runtime.Gosched() in a loop, the same number of times " +
				"each; one op is one Gosched call. With procs=1 and two or more goroutines every op is one " +
				"goroutine switch through the global run queue; with one goroutine it is a scheduler pass with " +
				"no switch. Goroutine switches stay inside one OS thread, so the OS context-switch counters " +
				"stay near zero at procs=1.",
			Params: []spec.Param{
				goroutinesParam("goroutines calling Gosched concurrently (seed 003 used 2, seed 000 up to 16K)"),
				procsParam(),
			},
			SeedReference: seed000(250, map[string]string{"goroutines": "16384", "procs": "1"},
				"read off the g_sched.go chart: latency rises only slowly with concurrency, \"about 250 ns "+
					"even at 16K\". Seed 003 (2 goroutines, GOMAXPROCS(1), 2.8 GHz CPU) gives only \"under 1 µs\"."),
		},
		New: perCount("goroutines", func(g int64) func(*testing.B, *harness.Meter) {
			return func(b *testing.B, m *harness.Meter) {
				var calls atomic.Int64
				n := b.N
				released(b, m, int(g), func(int) {
					for i := 0; i < n; i++ {
						runtime.Gosched()
					}
					calls.Add(int64(n))
				})
				m.Count("gosched_calls", calls.Load())
				if got, want := calls.Load(), int64(b.N)*g; got != want {
					m.Fail("sched.gosched: %d Gosched calls, want %d", got, want)
				}
			}
		}),
	}
}
