package kernels

// Family lock: sync.Mutex under N goroutines.
//
// lock.go_mutex measures one Lock + shared-counter increment + Unlock while `goroutines` goroutines all do
// the same on one sync.Mutex. With procs=1 the goroutines run one at a time (a holder is only switched
// out by preemption, every ~10 ms), so the lock is nearly never contended and an op makes no switch;
// with procs>1 contended Locks spin, then park (a goroutine switch out and one back when woken). Seed 000
// (g_lock.go) reads "a bit over 30 ns at first, strong fluctuation around 256 goroutines, about 20 ns
// beyond" on a Pentium G2030 (Go of 2014, GOMAXPROCS 1).

import (
	"sync"
	"testing"

	"github.com/ctxbench/ctxbench/kernels/go/internal/harness"
	"github.com/ctxbench/ctxbench/kernels/go/internal/spec"
)

func mutex() Kernel {
	return Kernel{
		Spec: spec.Kernel{
			ID:     "lock.go_mutex",
			Title:  "sync.Mutex Lock/Unlock under N goroutines",
			Family: "lock",
			Unit:   "ns/op",
			Description: "`goroutines` goroutines each Lock one shared sync.Mutex, increment a shared counter " +
				"and Unlock, the same number of times each; one op is one Lock+increment+Unlock, and the " +
				"counter must equal the op count. With procs=1 the goroutines take turns at preemption, so ops " +
				"are uncontended and make no switch; with procs>1 contended Locks spin and then park, two " +
				"goroutine switches per parked waiter (mutex_wait_ns_per_op shows the blocked time).",
			Params: []spec.Param{
				goroutinesParam("goroutines contending for the one mutex"),
				procsParam(),
			},
			SeedReference: seed000(30, map[string]string{"procs": "1"},
				"read off the g_lock.go chart: \"a bit over 30 ns\" at low concurrency, strong fluctuation "+
					"around 256 goroutines, about 20 ns beyond. Go of 2014 ran with GOMAXPROCS 1 by default."),
		},
		New: perCount("goroutines", func(g int64) func(*testing.B, *harness.Meter) {
			return func(b *testing.B, m *harness.Meter) {
				var mu sync.Mutex
				var counter int64
				n := b.N
				released(b, m, int(g), func(int) {
					for i := 0; i < n; i++ {
						mu.Lock()
						counter++
						mu.Unlock()
					}
				})
				mu.Lock()
				got := counter
				mu.Unlock()
				m.Count("increments", got)
				if want := int64(b.N) * g; got != want {
					m.Fail("lock.go_mutex: shared counter is %d after %d increments", got, want)
				}
				sink = got
			}
		}),
	}
}
