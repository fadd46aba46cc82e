// Package kernels holds the Go kernels, one file per family. Each kernel is a spec (what `--list`
// prints) and a constructor that turns parameter values into a harness case.
package kernels

import (
	"testing"

	"github.com/ctxbench/ctxbench/kernels/go/internal/harness"
	"github.com/ctxbench/ctxbench/kernels/go/internal/spec"
)

// Kernel is one measured primitive.
type Kernel struct {
	Spec spec.Kernel
	// New prepares a case from resolved parameter values. An *UnsupportedError means the kernel cannot
	// run on this host.
	New func(v spec.Values) (*harness.Case, error)
}

// UnsupportedError says why a kernel cannot run on this host (the CLI exits 3).
type UnsupportedError struct{ Why string }

func (e *UnsupportedError) Error() string { return e.Why }

// All lists every kernel in `--list` order.
func All() []Kernel {
	return []Kernel{
		goroutineCreate(),
		goroutineMemory(),
		gosched(),
		chanPingPong(),
		mutex(),
	}
}

// Find returns the kernel with this id.
func Find(id string) (Kernel, bool) {
	for _, k := range All() {
		if k.Spec.ID == id {
			return k, true
		}
	}
	return Kernel{}, false
}

// seed000Machine is the machine of seed 000's Go figures (g_*.go), cited by three kernels.
const seed000Machine = "Intel Pentium G2030 @ 3.00GHz (2 cores, no HT), 8 GB, Debian jessie, Linux 3.16-2-amd64, 2014-10-27"

// Shared parameters.

// concurrencySweep is the default goroutine-count sweep of the switch kernels: it reaches seed 000's
// 16K goroutines in nine points.
var concurrencySweep = []int64{1, 2, 4, 16, 64, 256, 1024, 4096, 16384}

// goroutinesParam is the contending goroutines of the switch kernels: 2 by default, swept up to 16K.
func goroutinesParam(help string) spec.Param {
	return spec.IntParam("goroutines", 2, 1, 16384, concurrencySweep, help)
}

// seed000 is a figure of seed 000's Go programs (g_*.go, run under GOMAXPROCS 1), in ns/op.
func seed000(value float64, params map[string]string, note string) *spec.SeedReference {
	return &spec.SeedReference{Seed: "000", Value: value, Unit: "ns/op", Machine: seed000Machine, Params: params, Note: note}
}

// perCount is New for a kernel whose count parameter (goroutines, batch) is also the ops one b.N
// iteration makes, run under GOMAXPROCS procs; bench makes the body for that count.
func perCount(param string, bench func(n int64) func(b *testing.B, m *harness.Meter)) func(spec.Values) (*harness.Case, error) {
	return func(v spec.Values) (*harness.Case, error) {
		n := v.Int(param)
		return &harness.Case{OpsPerIter: n, Procs: int(v.Int("procs")), Bench: bench(n)}, nil
	}
}

func procsParam() spec.Param {
	return spec.IntParam("procs", 1, 1, 1024, []int64{1, 2, 4, 8},
		"GOMAXPROCS while measuring; 1 as in the seeds (Go before 1.5 defaulted to 1, seed 003 sets it)")
}

// sink keeps results from being optimised away.
var sink int64
