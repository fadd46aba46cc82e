package harness

import "runtime/metrics"

// runtimeCounters are the runtime/metrics counters a snapshot reads, by the name results report
// (per op) and the scale applied to the metric's value. A metric this Go release lacks is left out.
var runtimeCounters = []struct {
	metric string
	name   string
	scale  float64
}{
	{"/sched/goroutines-created:goroutines", "goroutines_created_per_op", 1},
	{"/sync/mutex/wait/total:seconds", "mutex_wait_ns_per_op", 1e9},
	{"/gc/cycles/total:gc-cycles", "gc_cycles_per_op", 1},
}

// snapshot holds cumulative OS and runtime counters at one instant.
type snapshot struct {
	values map[string]float64
}

func takeSnapshot() snapshot {
	s := snapshot{values: map[string]float64{}}
	samples := make([]metrics.Sample, len(runtimeCounters))
	for i, c := range runtimeCounters {
		samples[i].Name = c.metric
	}
	metrics.Read(samples)
	for i, c := range runtimeCounters {
		switch samples[i].Value.Kind() {
		case metrics.KindUint64:
			s.values[c.name] = float64(samples[i].Value.Uint64()) * c.scale
		case metrics.KindFloat64:
			s.values[c.name] = samples[i].Value.Float64() * c.scale
		}
	}
	readRusage(s.values)
	return s
}

// sub returns the counters' growth from before to s.
func (s snapshot) sub(before snapshot) map[string]float64 {
	d := make(map[string]float64, len(s.values))
	for k, v := range s.values {
		if b, ok := before.values[k]; ok {
			d[k] = v - b
		}
	}
	return d
}

// involuntaryKey is the counter of involuntary context switches (getrusage ru_nivcsw); a short sample
// whose delta of it is > 0 is disturbed.
const involuntaryKey = "involuntary_ctxsw_per_op"
