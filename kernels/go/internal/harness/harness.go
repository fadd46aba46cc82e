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
	// the sample in the kernel's unit, the ops it covers, and per-op counters.
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

// Sampling is a result's `sampling` object (kernels/contract/README.md "Short samples").
type Sampling struct {
	Estimator            string  `json:"estimator"`
	SampleTimeS          float64 `json:"sample_time_s"`
	SampleOps            int64   `json:"sample_ops"`
	SamplesPerRepetition int     `json:"samples_per_repetition"`
	// Disturbed counts, per repetition, the short samples during which the process's involuntary
	// context switches (getrusage ru_nivcsw) grew between Meter.Begin and Meter.End.
	Disturbed []int `json:"disturbed"`
}

// Short-sample constants.
const (
	// Estimator is the estimator a repetition's value is with short samples.
	Estimator = "p5"
	// estimatorPercentile is that estimator's percentile.
	estimatorPercentile = 5
	// MaxSamplesPerRepetition caps a block's short samples (the schema's samples_per_repetition maximum).
	MaxSamplesPerRepetition = 1000
	// MaxShortSamples bounds a process's short samples in all (kernels/contract/README.md).
	MaxShortSamples = 100000
	// maxSampleIters caps one short sample's b.N while calibrating.
	maxSampleIters = 1_000_000_000
	// maxCalibrationTries bounds the calibration loop; its last count is kept if it is still short.
	maxCalibrationTries = 40
)

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
	for rep := -1; rep < repetitions; rep++ { // rep -1 is the untimed warm-up
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
	setupNs int64              // the rest of the body: entry to Begin, End to return
	deltas  map[string]float64 // counter growth over the timed part
}

// benchOnce is one testing.Benchmark call of a Bench case, checked.
func benchOnce(c *Case) (benchRun, error) {
	m := &Meter{}
	r := testing.Benchmark(func(b *testing.B) {
		m.reset()
		m.entered = time.Now()
		c.Bench(b, m)
		m.left = time.Now()
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
	setup := m.begun.Sub(m.entered) + m.left.Sub(m.stopped)
	return benchRun{n: r.N, timedNs: r.T.Nanoseconds(), setupNs: setup.Nanoseconds(), deltas: m.deltas}, nil
}

// RunSampled is Run with short samples of at least sampleTime seconds of timed work
// (kernels/contract/README.md "Short samples"): after the warm-up it calibrates once the iterations of
// one short sample, N (timed part >= sampleTime and >= the set-up one run spends outside its timed
// part); each repetition is then a block of K = max(1, floor(minTime / one sample's timed length))
// short samples, K <= 1000, of exactly N iterations each, and its sample is the block's 5th percentile
// of time per op. sampleTime <= 0 is Run.
//
// A Measure case (goroutine.memory: bytes per goroutine) is not a time measurement, so sampleTime does
// not apply to it: it runs as Run does and its result has no Sampling.
func RunSampled(c *Case, repetitions int, minTime, sampleTime float64) (*Result, error) {
	if c.Measure != nil || sampleTime <= 0 {
		return Run(c, repetitions, minTime)
	}
	if err := setBenchtime(minTime); err != nil {
		return nil, fmt.Errorf("set benchtime: %w", err)
	}
	if c.Procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.Procs))
	}
	warm, err := benchOnce(c) // the untimed warm-up, as Run's: one run of about minTime
	if err != nil {
		return nil, err
	}
	n, calib, err := calibrateSample(c, sampleTime, warm)
	if err != nil {
		return nil, err
	}
	k := min(samplesPerBlock(minTime, calib.timedNs), max(1, MaxShortSamples/repetitions))
	sampleOps := int64(n) * c.OpsPerIter
	res := &Result{
		Counters: map[string]float64{},
		Sampling: &Sampling{Estimator: Estimator, SampleTimeS: sampleTime, SampleOps: sampleOps,
			SamplesPerRepetition: k, Disturbed: make([]int, 0, repetitions)},
		Harness: Info{Name: HarnessName, Version: runtime.Version(), MinTimeS: minTime},
	}
	totals := map[string]float64{}
	var totalOps, totalNs float64
	perOp := make([]float64, k)
	switches := make([]float64, 0, repetitions*k) // involuntary switches of every short sample, in order
	for rep := 0; rep < repetitions; rep++ {
		for i := range perOp {
			r, err := benchOnce(c)
			if err != nil {
				return nil, err
			}
			if r.n != n {
				return nil, &CheckError{Msg: fmt.Sprintf("a short sample ran %d iterations, want %d", r.n, n)}
			}
			perOp[i] = float64(r.timedNs) / float64(sampleOps)
			switches = append(switches, r.deltas[involuntaryKey])
			for key, v := range r.deltas {
				totals[key] += v
			}
			totalOps += float64(sampleOps)
			totalNs += float64(r.timedNs)
		}
		sample := Percentile(perOp, estimatorPercentile)
		if math.IsNaN(sample) || math.IsInf(sample, 0) {
			return nil, &CheckError{Msg: fmt.Sprintf("repetition %d gave no usable sample (%v over %d ops)", rep+1, sample, sampleOps)}
		}
		res.Samples = append(res.Samples, sample)
		res.Iterations = append(res.Iterations, sampleOps*int64(k))
	}
	res.Sampling.Disturbed = disturbedPerBlock(switches, k)
	for key, v := range totals {
		res.Counters[key] = v / totalOps
	}
	res.Counters["sustained_ns_per_op"] = totalNs / totalOps
	res.Counters["gomaxprocs"] = float64(runtime.GOMAXPROCS(0))
	return res, nil
}

// calibrateSample finds N, the iterations of one short sample: the least count tried whose timed part
// lasts at least sampleTime and at least the run's set-up time (outside the timed part). It starts from
// the warm-up's time per iteration and grows N as testing.Benchmark does (aim 10-20 % past the target,
// at most 100x per step). It returns N and the run that met the target.
func calibrateSample(c *Case, sampleTime float64, warm benchRun) (int, benchRun, error) {
	target := func(r benchRun) float64 { return math.Max(sampleTime*1e9, float64(r.setupNs)) }
	n := predictIters(warm, target(warm)*1.1, 1)
	for try := 1; ; try++ {
		if err := setBenchIters(n); err != nil {
			return 0, benchRun{}, fmt.Errorf("set benchtime: %w", err)
		}
		r, err := benchOnce(c)
		if err != nil {
			return 0, benchRun{}, err
		}
		if r.n != n {
			return 0, benchRun{}, &CheckError{Msg: fmt.Sprintf("a short sample ran %d iterations, want %d", r.n, n)}
		}
		if float64(r.timedNs) >= target(r) || n >= maxSampleIters || try >= maxCalibrationTries {
			return n, r, nil
		}
		n = predictIters(r, target(r)*1.2, n+1)
	}
}

// predictIters is the iterations that would time aimNs at r's time per iteration: at least least, at
// most 100x r's, at most maxSampleIters.
func predictIters(r benchRun, aimNs float64, least int) int {
	next := float64(100 * int64(r.n))
	if r.timedNs > 0 {
		next = math.Min(next, math.Ceil(aimNs*float64(r.n)/float64(r.timedNs)))
	}
	next = math.Min(math.Max(next, float64(least)), maxSampleIters)
	return int(next)
}

// samplesPerBlock is K = max(1, floor(minTime / one sample's timed length)), at most 1000.
func samplesPerBlock(minTime float64, timedNs int64) int {
	if timedNs <= 0 {
		return MaxSamplesPerRepetition
	}
	k := math.Floor(minTime * 1e9 / float64(timedNs))
	return int(math.Max(1, math.Min(k, MaxSamplesPerRepetition)))
}

// Percentile is the p-th percentile (0 <= p <= 100) of xs by linear interpolation between the order
// statistics, as numpy.percentile's default method ("linear") computes it; xs is not modified.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	q := p / 100
	// numpy: virtual index n*q + (1-q) - 1 (alpha = beta = 1), i.e. (n-1)*q.
	idx := float64(len(s))*q + (1 - q) - 1
	lo := math.Floor(idx)
	i := int(lo)
	if i < 0 {
		return s[0]
	}
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	a, b, t := s[i], s[i+1], idx-lo
	// numpy's _lerp: a + (b-a)t, computed from the nearer end for t >= 0.5.
	if t >= 0.5 {
		return b - (b-a)*(1-t)
	}
	return a + (b-a)*t
}

// Meter brackets the timed loop of one benchmark run: it resets the timer and snapshots the OS and
// runtime counters at Begin, stops the timer and snapshots them again at End.
type Meter struct {
	before snapshot
	deltas map[string]float64
	n      int64
	ended  bool
	err    error
	// When the body was entered, reached Begin, passed End and returned: the run's set-up time
	// outside its timed part is (begun - entered) + (left - stopped).
	entered, begun, stopped, left time.Time
}

func (m *Meter) reset() { *m = Meter{} }

// Begin starts the timed part of a run (after the body's set-up).
func (m *Meter) Begin(b *testing.B) {
	m.begun = time.Now()
	m.before = takeSnapshot()
	b.ResetTimer()
}

// End stops the timed part of a run; call it after the loop, before any tear-down.
func (m *Meter) End(b *testing.B) {
	b.StopTimer()
	m.stopped = time.Now()
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

// disturbedPerBlock counts, per block of k samples, those the host disturbed: switched out involuntarily
// more than the kernel does by itself. A kernel whose typical (median) sample has no involuntary switch
// counts every one; one whose own goroutines preempt each other counts a sample only above median +
// 3·sqrt(median) (kernels/contract/README.md "Short samples"), so its own switching is never blamed on
// the host.
func disturbedPerBlock(switches []float64, k int) []int {
	typical := Percentile(switches, 50)
	limit := math.Floor(typical + 3*math.Sqrt(typical))
	out := make([]int, 0, len(switches)/k)
	for start := 0; start+k <= len(switches); start += k {
		n := 0
		for _, v := range switches[start : start+k] {
			if v > limit {
				n++
			}
		}
		out = append(out, n)
	}
	return out
}
