// Package harness runs a kernel under Go's own benchmark harness, testing.Benchmark: it calibrates b.N
// until one run lasts at least the benchtime (--min-time), and that last run is one sample. One untimed
// warm-up call comes first, then one testing.Benchmark call per repetition.
//
// With short samples (--sample-time, RunSampled; kernels/contract/README.md "Short samples") the ops of
// one short sample are calibrated once after the warm-up, every short sample is one testing.Benchmark
// call with a fixed iteration count (benchtime "Nx"), and a repetition is the 5th percentile of a block
// of them.
package harness

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"
)

// HarnessName is what results report as harness.name.
const HarnessName = "go-testing"

// Case is one kernel prepared with its parameter values. Exactly one of Bench and Measure is set.
type Case struct {
	// OpsPerIter is how many ops (of the kernel's unit) one b.N iteration performs.
	OpsPerIter int64
	// Procs, when > 0, is the GOMAXPROCS the case runs under.
	Procs int
	// Bench is the testing.Benchmark body. It calls m.Begin after its set-up and m.End after its loop,
	// and m.Fail when its self-check does not add up.
	Bench func(b *testing.B, m *Meter)
	// Measure takes one sample directly, for kernels that are not a timed loop (goroutine memory):
	// the sample in the kernel's unit, the ops it covers, and per-op counters. A Measure sample stands
	// alone (goroutine.memory's runs in a fresh child process), so it has no warm-up.
	Measure func() (sample float64, ops int64, counters map[string]float64, err error)
}

// Result is the kernel JSON of DESIGN 3.1, less kernel, params and unit (the CLI adds them).
type Result struct {
	Samples    []float64          `json:"samples"`
	Iterations []int64            `json:"iterations"`
	Counters   map[string]float64 `json:"counters"`
	// Sampling is set exactly when short samples were taken (RunSampled on a timed case).
	Sampling *Sampling `json:"sampling,omitempty"`
	Harness  Info      `json:"harness"`
}

// Info names the harness.
type Info struct {
	Name     string  `json:"name"`
	Version  string  `json:"version"`
	MinTimeS float64 `json:"min_time_s"`
}

// CheckError is a self-check failure: the kernel's op count or answer did not add up.
type CheckError struct{ Msg string }

func (e *CheckError) Error() string { return e.Msg }

var initOnce sync.Once

// setBenchtime points testing.Benchmark at minTime. testing.Init registers the test.* flags; they are
// set directly, never parsed from our command line.
func setBenchtime(minTime float64) error {
	initOnce.Do(testing.Init)
	d := time.Duration(math.Round(minTime * 1e9))
	if d < 1 {
		d = 1
	}
	return flag.Set("test.benchtime", d.String())
}

// setBenchIters makes every later testing.Benchmark call run exactly n iterations (benchtime "Nx").
// testing.Benchmark still runs the body once with b.N = 1 first; the run with b.N = n is the result.
func setBenchIters(n int) error {
	initOnce.Do(testing.Init)
	return flag.Set("test.benchtime", strconv.Itoa(n)+"x")
}

// Run warms up once and then takes `repetitions` samples.
func Run(c *Case, repetitions int, minTime float64) (*Result, error) {
	if err := setBenchtime(minTime); err != nil {
		return nil, fmt.Errorf("set benchtime: %w", err)
	}
	if c.Procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.Procs))
	}
	res := &Result{
		Counters: map[string]float64{},
		Harness:  Info{Name: HarnessName, Version: runtime.Version(), MinTimeS: minTime},
	}
	totals := map[string]float64{}
	var totalOps float64
	first := -1 // rep -1 is the untimed warm-up
	if c.Measure != nil {
		first = 0
	}
	for rep := first; rep < repetitions; rep++ {
		sample, ops, deltas, err := runOnce(c)
		if err != nil {
			return nil, err
		}
		if rep < 0 {
			continue
		}
		if math.IsNaN(sample) || math.IsInf(sample, 0) || ops <= 0 {
			return nil, &CheckError{Msg: fmt.Sprintf("repetition %d gave no usable sample (%v over %d ops)", rep+1, sample, ops)}
		}
		res.Samples = append(res.Samples, sample)
		res.Iterations = append(res.Iterations, ops)
		for k, v := range deltas {
			totals[k] += v
		}
		totalOps += float64(ops)
	}
	// Counters are totals over the timed repetitions divided by their ops (Bench), or the mean of the
	// repetitions' per-op figures (Measure, whose counters already are per op).
	keys := make([]string, 0, len(totals))
	for k := range totals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if c.Measure != nil {
			res.Counters[k] = totals[k] / float64(repetitions)
		} else {
			res.Counters[k] = totals[k] / totalOps
		}
	}
	res.Counters["gomaxprocs"] = float64(runtime.GOMAXPROCS(0))
	return res, nil
}

// runOnce takes one sample; for Bench cases deltas are counter totals over the sample's ops.
func runOnce(c *Case) (float64, int64, map[string]float64, error) {
	if c.Measure != nil {
		return c.Measure()
	}
	r, err := benchOnce(c)
	if err != nil {
		return 0, 0, nil, err
	}
	ops := int64(r.n) * c.OpsPerIter
	return float64(r.timedNs) / float64(ops), ops, r.deltas, nil
}

// benchRun is the last run of one testing.Benchmark call of a Bench case.
type benchRun struct {
	n       int                // b.N
	timedNs int64              // the timed part, Meter.Begin to Meter.End
	setupNs int64              // the rest of the call: set-up, tear-down, testing.Benchmark's own
	deltas  map[string]float64 // counter growth over the timed part
}

// benchOnce is one testing.Benchmark call of a Bench case, checked.
func benchOnce(c *Case) (benchRun, error) {
	m := &Meter{}
	called := time.Now()
	r := testing.Benchmark(func(b *testing.B) {
		m.reset()
		c.Bench(b, m)
	})
	if m.err != nil {
		return benchRun{}, m.err
	}
	if r.N <= 0 || !m.ended {
		return benchRun{}, &CheckError{Msg: "the benchmark body did not complete a run"}
	}
	if m.n != int64(r.N) {
		return benchRun{}, &CheckError{Msg: fmt.Sprintf("counted %d iterations, harness reports %d", m.n, r.N)}
	}
	// Everything the call cost beside its timed part: the body's set-up and tear-down, and
	// testing.Benchmark's own (a GC before each run, the run with b.N = 1 before the one measured).
	setup := time.Since(called) - r.T
	return benchRun{n: r.N, timedNs: r.T.Nanoseconds(), setupNs: setup.Nanoseconds(), deltas: m.deltas}, nil
}

// Meter brackets the timed loop of one benchmark run: it resets the timer and snapshots the OS and
// runtime counters at Begin, stops the timer and snapshots them again at End.
type Meter struct {
	before snapshot
	deltas map[string]float64
	n      int64
	ended  bool
	err    error
}

func (m *Meter) reset() { *m = Meter{} }

// Begin starts the timed part of a run (after the body's set-up).
func (m *Meter) Begin(b *testing.B) {
	m.before = takeSnapshot()
	b.ResetTimer()
}

// End stops the timed part of a run; call it after the loop, before any tear-down.
func (m *Meter) End(b *testing.B) {
	b.StopTimer()
	after := takeSnapshot()
	m.deltas = after.sub(m.before)
	m.n = int64(b.N)
	m.ended = true
}

// Count records an event total the body counted itself over the timed loop (call it after End); the
// result reports it per op as NAME_per_op, so it shows the op count adds up.
func (m *Meter) Count(name string, total int64) {
	if m.deltas == nil {
		m.deltas = map[string]float64{}
	}
	m.deltas[name+"_per_op"] = float64(total)
}

// Fail records a self-check failure; the CLI exits 1 with it.
func (m *Meter) Fail(format string, args ...any) {
	if m.err == nil {
		m.err = &CheckError{Msg: fmt.Sprintf(format, args...)}
	}
}

// IsCheck reports whether err is a self-check failure.
func IsCheck(err error) bool {
	var ce *CheckError
	return errors.As(err, &ce)
}
