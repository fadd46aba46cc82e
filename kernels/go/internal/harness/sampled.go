// Short samples (--sample-time; kernels/contract/README.md "Short samples"): blocks of samples shorter
// than a scheduler slice, each block reported as its 5th percentile.
package harness

import (
	"fmt"
	"math"
	"runtime"
	"sort"
)

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
	// calibrationProbes is how many runs judge each count tried while calibrating.
	calibrationProbes = 3
)

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
	if err := setBenchtime(warmUpTime(minTime)); err != nil {
		return nil, fmt.Errorf("set benchtime: %w", err)
	}
	if c.Procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.Procs))
	}
	warm, err := benchOnce(c) // the untimed warm-up
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

// warmUpTime is how long the untimed warm-up before short samples runs: min(minTime/2, 0.1 s), as the
// C++ harness's (Google Benchmark's MinWarmUpTime there). A block's 5th percentile does not see the
// first samples' cold caches anyway; the warm-up is for the calibration that follows.
func warmUpTime(minTime float64) float64 {
	return math.Min(minTime/2, 0.1)
}

// calibrateSample finds N, the iterations of one short sample: the least count tried whose timed part
// lasts at least sampleTime and at least the run's set-up time (outside the timed part). It starts from
// the warm-up's time per iteration and grows N as testing.Benchmark does (aim 10-20 % past the target,
// at most 100x per step). Each count is probed calibrationProbes times and the least disturbed probe
// judges it (the shortest timed part, the shortest set-up), as the C++ harness does: on a busy host one
// stall in a probe's set-up (testing.Benchmark's GC before each run, descheduled) would otherwise stretch
// every short sample to cover it, and how long the samples came out would vary from launch to launch
// with the host's load (goroutine.create: 270 or 400-1800 ns by launch beside a build). It returns N and
// the least disturbed run at N.
func calibrateSample(c *Case, sampleTime float64, warm benchRun) (int, benchRun, error) {
	// The warm-up calibrated its b.N over several runs, so its set-up is no sample's: aim at the sample
	// time first; the fixed-N calls below measure what one short sample's call costs.
	n := predictIters(warm, sampleTime*1e9*1.1, 1)
	setupNs := int64(math.MaxInt64)
	for try := 1; ; try++ {
		if err := setBenchIters(n); err != nil {
			return 0, benchRun{}, fmt.Errorf("set benchtime: %w", err)
		}
		var best benchRun
		for p := 0; p < calibrationProbes; p++ {
			r, err := benchOnce(c)
			if err != nil {
				return 0, benchRun{}, err
			}
			if r.n != n {
				return 0, benchRun{}, &CheckError{Msg: fmt.Sprintf("a short sample ran %d iterations, want %d", r.n, n)}
			}
			if p == 0 || r.timedNs < best.timedNs {
				best = r
			}
			setupNs = min(setupNs, r.setupNs)
		}
		target := math.Max(sampleTime*1e9, float64(setupNs))
		if float64(best.timedNs) >= target || n >= maxSampleIters || try >= maxCalibrationTries {
			return n, best, nil
		}
		n = predictIters(best, target*1.2, n+1)
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
