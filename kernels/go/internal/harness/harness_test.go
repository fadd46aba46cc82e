package harness

import (
	"math"
	"testing"
	"time"
)

func TestRunCollectsSamples(t *testing.T) {
	var sum int64
	c := &Case{OpsPerIter: 3, Procs: 1, Bench: func(b *testing.B, m *Meter) {
		m.Begin(b)
		for i := 0; i < b.N*3; i++ {
			sum += int64(i)
		}
		m.End(b)
	}}
	res, err := Run(c, 3, 0.001)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Samples) != 3 || len(res.Iterations) != 3 {
		t.Fatalf("result %+v", res)
	}
	for i, s := range res.Samples {
		if !(s > 0) || res.Iterations[i] <= 0 || res.Iterations[i]%3 != 0 {
			t.Errorf("sample %d: %v ns over %d ops", i, s, res.Iterations[i])
		}
	}
	if res.Counters["gomaxprocs"] != 1 || res.Harness.Name != HarnessName || res.Harness.MinTimeS != 0.001 {
		t.Errorf("counters %v, harness %+v", res.Counters, res.Harness)
	}
}

func TestRunTakesMeasureSamplesWithoutWarmUp(t *testing.T) {
	calls := 0
	c := &Case{Measure: func() (float64, int64, map[string]float64, error) {
		calls++
		return float64(1000 + calls), 10, map[string]float64{"stack_bytes_per_goroutine": 8}, nil
	}}
	res, err := Run(c, 2, 0.001)
	if err != nil {
		t.Fatal(err)
	}
	// Each Measure sample stands alone: the first one is kept, not thrown away as a warm-up.
	if calls != 2 || len(res.Samples) != 2 || res.Samples[0] != 1001 || res.Samples[1] != 1002 {
		t.Fatalf("%d calls, samples %v", calls, res.Samples)
	}
	if res.Counters["stack_bytes_per_goroutine"] != 8 {
		t.Errorf("counters %v", res.Counters)
	}
}

func TestRunReportsSelfCheckFailure(t *testing.T) {
	c := &Case{OpsPerIter: 1, Bench: func(b *testing.B, m *Meter) {
		m.Begin(b)
		m.End(b)
		m.Fail("count is %d, want %d", 1, 2)
	}}
	_, err := Run(c, 1, 0.001)
	if err == nil || !IsCheck(err) {
		t.Fatalf("err = %v, want a self-check failure", err)
	}
}

func TestRunRejectsBodyWithoutEnd(t *testing.T) {
	c := &Case{OpsPerIter: 1, Bench: func(b *testing.B, m *Meter) { m.Begin(b) }}
	if _, err := Run(c, 1, 0.001); err == nil || !IsCheck(err) {
		t.Fatalf("err = %v, want a self-check failure", err)
	}
}

func TestPercentileMatchesNumpy(t *testing.T) {
	cases := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{[]float64{7}, 5, 7},                            // K = 1: the one sample
		{[]float64{10, 20}, 5, 10.5},                    // K = 2: 5 % of the way from the lower
		{[]float64{20, 10}, 5, 10.5},                    // order does not matter
		{[]float64{1, 2, 3, 4, 5}, 5, 1.2},              // numpy.percentile([1..5], 5)
		{[]float64{1, 2, 3, 4, 5}, 50, 3},               // the median
		{[]float64{1, 2, 3, 4, 5}, 100, 5},              // the maximum
		{[]float64{1, 2, 3, 4, 5}, 0, 1},                // the minimum
		{[]float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, 5, 1}, // index 0.45 between two 1s
		{[]float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, 25, 2.25},
		{[]float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, 90, 6.3},
	}
	// Twenty-one values 0, 10, …, 200: the 5th percentile is exactly the second one.
	var ramp []float64
	for i := 0; i <= 20; i++ {
		ramp = append(ramp, float64(10*i))
	}
	cases = append(cases, struct {
		xs   []float64
		p    float64
		want float64
	}{ramp, 5, 10})
	for _, tc := range cases {
		in := append([]float64(nil), tc.xs...)
		if got := Percentile(tc.xs, tc.p); math.Abs(got-tc.want) > 1e-12*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.xs, tc.p, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.xs[i] {
				t.Fatalf("Percentile reordered its input: %v, was %v", tc.xs, in)
			}
		}
	}
	if got := Percentile(nil, 5); !math.IsNaN(got) {
		t.Errorf("Percentile(nil) = %v, want NaN", got)
	}
}

func TestSamplesPerBlock(t *testing.T) {
	cases := []struct {
		minTime float64
		timedNs int64
		want    int
	}{
		{0.1, 500_000, 200},
		{0.1, 300_000, 333},
		{0.1, 200_000_000, 1}, // a sample longer than min-time: still one
		{60, 1_000, 1000},     // capped
		{0.1, 0, 1000},
	}
	for _, tc := range cases {
		if got := samplesPerBlock(tc.minTime, tc.timedNs); got != tc.want {
			t.Errorf("samplesPerBlock(%v, %d) = %d, want %d", tc.minTime, tc.timedNs, got, tc.want)
		}
	}
}

func TestRunSampledTimesBlocksOfShortSamples(t *testing.T) {
	var sum int64
	var bodies, setups int
	c := &Case{OpsPerIter: 3, Procs: 1, Bench: func(b *testing.B, m *Meter) {
		bodies++
		m.Begin(b)
		for i := 0; i < b.N*3; i++ {
			sum += int64(i)
		}
		m.End(b)
		setups++
	}}
	res, err := RunSampled(c, 3, 0.01, 0.001)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Sampling
	if s == nil || s.Estimator != "p5" || s.SampleTimeS != 0.001 || s.SampleOps < 3 || s.SampleOps%3 != 0 {
		t.Fatalf("sampling %+v", s)
	}
	if s.SamplesPerRepetition < 1 || s.SamplesPerRepetition > 10 || len(s.Disturbed) != 3 {
		t.Fatalf("sampling %+v: want 1..10 samples per repetition (0.01 s / >= 0.001 s) and 3 blocks", s)
	}
	if len(res.Samples) != 3 || len(res.Iterations) != 3 {
		t.Fatalf("result %+v", res)
	}
	for i := range res.Samples {
		if !(res.Samples[i] > 0) || res.Iterations[i] != s.SampleOps*int64(s.SamplesPerRepetition) {
			t.Errorf("repetition %d: %v ns/op over %d ops", i, res.Samples[i], res.Iterations[i])
		}
		if s.Disturbed[i] < 0 || s.Disturbed[i] > s.SamplesPerRepetition {
			t.Errorf("repetition %d: %d disturbed of %d", i, s.Disturbed[i], s.SamplesPerRepetition)
		}
	}
	if !(res.Counters["sustained_ns_per_op"] > 0) || res.Counters["gomaxprocs"] != 1 {
		t.Errorf("counters %v", res.Counters)
	}
	if bodies != setups || bodies < 3*s.SamplesPerRepetition {
		t.Errorf("%d bodies entered, %d left: want every body to run through", bodies, setups)
	}
}

func TestRunSampledCoversSetupTime(t *testing.T) {
	// A body that spends 3 ms outside its timed part gets samples of at least 3 ms of timed work.
	var sum int64
	c := &Case{OpsPerIter: 1, Procs: 1, Bench: func(b *testing.B, m *Meter) {
		time.Sleep(3 * time.Millisecond)
		m.Begin(b)
		for i := 0; i < b.N; i++ {
			sum += int64(i)
		}
		m.End(b)
	}}
	res, err := RunSampled(c, 1, 0.02, 0.0001)
	if err != nil {
		t.Fatal(err)
	}
	timed := res.Counters["sustained_ns_per_op"] * float64(res.Sampling.SampleOps)
	if timed < 3e6 {
		t.Errorf("one sample times %.0f ns, want >= the 3 ms set-up (sampling %+v)", timed, res.Sampling)
	}
	if k := res.Sampling.SamplesPerRepetition; k > 6 {
		t.Errorf("%d samples per repetition of >= 3 ms in 0.02 s, want <= 6", k)
	}
}

func TestRunSampledIgnoresMeasureCases(t *testing.T) {
	c := &Case{Measure: func() (float64, int64, map[string]float64, error) {
		return 2048, 10, map[string]float64{"stack_bytes_per_goroutine": 1024}, nil
	}}
	res, err := RunSampled(c, 2, 0.01, 0.001)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sampling != nil || len(res.Samples) != 2 || res.Samples[0] != 2048 || res.Iterations[1] != 10 {
		t.Fatalf("result %+v, want Run's without sampling", res)
	}
	if _, ok := res.Counters["sustained_ns_per_op"]; ok {
		t.Errorf("counters %v: a memory figure has no sustained_ns_per_op", res.Counters)
	}
}

func TestRunSampledReportsSelfCheckFailure(t *testing.T) {
	c := &Case{OpsPerIter: 1, Bench: func(b *testing.B, m *Meter) {
		m.Begin(b)
		m.End(b)
		m.Fail("count is %d, want %d", 1, 2)
	}}
	if _, err := RunSampled(c, 1, 0.01, 0.001); err == nil || !IsCheck(err) {
		t.Fatalf("err = %v, want a self-check failure", err)
	}
}

func TestDisturbedCountsOnlySwitchesBeyondTheKernelsOwn(t *testing.T) {
	// A kernel that keeps to itself: every involuntary switch is the host's.
	if got := disturbedPerBlock([]float64{0, 0, 1, 0, 0, 3}, 3); got[0] != 1 || got[1] != 1 {
		t.Errorf("quiet kernel: got %v, want [1 1]", got)
	}
	// A kernel that switches ~16 times a sample by itself: only more than 16 + 3*4 = 28 counts.
	got := disturbedPerBlock([]float64{16, 15, 17, 16, 28, 29, 16, 40}, 4)
	if len(got) != 2 || got[0] != 0 || got[1] != 2 {
		t.Errorf("self-switching kernel: got %v, want [0 2]", got)
	}
}

func TestRunSampledIgnoresOneStalledSetup(t *testing.T) {
	// A host that stalls one call's set-up by 30 ms while the samples are calibrated (a descheduled
	// GC, a busy neighbour): the least disturbed probe sizes the samples, so they stay near the
	// 0.5 ms asked for rather than stretching to cover the stall (goroutine.create beside a build).
	var sum int64
	ones := 0
	c := &Case{OpsPerIter: 1, Procs: 1, Bench: func(b *testing.B, m *Meter) {
		// Every testing.Benchmark call starts with one run of N=1: the first is the warm-up's, the
		// second the first calibration probe's, whose set-up this stalls.
		if b.N == 1 {
			ones++
		}
		if b.N == 1 && ones == 2 {
			time.Sleep(30 * time.Millisecond)
		}
		m.Begin(b)
		for i := 0; i < b.N; i++ {
			sum += int64(i)
		}
		m.End(b)
	}}
	res, err := RunSampled(c, 1, 0.05, 0.0005)
	if err != nil {
		t.Fatal(err)
	}
	timed := res.Counters["sustained_ns_per_op"] * float64(res.Sampling.SampleOps)
	if timed > 10e6 {
		t.Errorf("one sample times %.1f ms after one 30 ms stall, want about 0.5 ms (sampling %+v)", timed/1e6, res.Sampling)
	}
}
