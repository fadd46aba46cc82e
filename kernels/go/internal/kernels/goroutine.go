package kernels

// Family goroutine: what a goroutine costs to start and to keep.
//
// goroutine.create measures one goroutine created, scheduled, run to completion (an atomic
// increment) and exited, with the creator waiting for each batch on a WaitGroup. With procs=1 and
// batch=1 one op is two goroutine switches (creator -> child when the creator blocks in Wait, child ->
// creator when Done wakes it); with batch=B it is B+1 switches per B ops. Seed 000 (g_goroutine.go) timed
// 10M `go` statements without waiting for them and reports 568 ns "creation (and destruction)" on a
// Pentium G2030 with Go of 2014 (GOMAXPROCS 1).
//
// goroutine.memory measures the stack + heap a parked goroutine keeps. Seed 002 reports about
// 300 MB for 30000 goroutines (each with two channels) on a Windows home machine: ~10 KB each.

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxbench/ctxbench/kernels/go/internal/harness"
	"github.com/ctxbench/ctxbench/kernels/go/internal/spec"
)

func goroutineCreate() Kernel {
	return Kernel{
		Spec: spec.Kernel{
			ID:     "goroutine.create",
			Title:  "Goroutine create, run and exit",
			Family: "goroutine",
			Unit:   "ns/op",
			Description: "One op is one goroutine created with `go`, scheduled, run to completion (an atomic " +
				"increment that the self-check counts) and exited; the creator starts `batch` goroutines and " +
				"waits for them on a sync.WaitGroup. With procs=1 one op makes 2 goroutine switches at batch=1 " +
				"(creator to child, child back to the waiting creator) and (batch+1)/batch at larger batches; " +
				"goroutine switches do not show in the OS context-switch counters, which only count threads " +
				"that block or are preempted.",
			Params: []spec.Param{
				spec.IntParam("batch", 1, 1, 10000, []int64{1, 10, 100, 1000, 10000},
					"goroutines started before waiting for them all; large batches approach seed 000, which never waited"),
				procsParam(),
			},
			SeedReference: seed000(568, map[string]string{"batch": "10000", "procs": "1"},
				"g_goroutine.go: 10M goroutines in 5.68 s of wall time, called creation (and destruction) "+
					"cost; the write-up notes the code did not wait for the goroutines to finish. Go of 2014 ran "+
					"with GOMAXPROCS 1 by default."),
		},
		New: perCount("batch", func(batch int64) func(*testing.B, *harness.Meter) {
			return func(b *testing.B, m *harness.Meter) {
				var wg sync.WaitGroup
				var ran atomic.Int64
				m.Begin(b)
				for i := 0; i < b.N; i++ {
					wg.Add(int(batch))
					for j := int64(0); j < batch; j++ {
						go createdChild(&wg, &ran)
					}
					wg.Wait()
				}
				m.End(b)
				m.Count("goroutines_run", ran.Load())
				if got, want := ran.Load(), int64(b.N)*batch; got != want {
					m.Fail("goroutine.create: %d goroutines ran, want %d", got, want)
				}
				sink = ran.Load()
			}
		}),
	}
}

func createdChild(wg *sync.WaitGroup, ran *atomic.Int64) {
	ran.Add(1)
	wg.Done()
}
