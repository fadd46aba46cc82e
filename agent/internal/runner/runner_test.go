package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

func TestKernelArgs(t *testing.T) {
	it := &agentv1.RunItem{KernelId: "ctx.pingpong", Repetitions: 15, MinTimeS: 0.2}
	got := strings.Join(kernelArgs(it, map[string]string{"threads": "4", "placement": "same_core"}, 5), " ")
	want := "--run ctx.pingpong --param placement=same_core --param threads=4 --repetitions 5 --min-time 0.2"
	if got != want {
		t.Errorf("args = %q, want %q", got, want)
	}
	if got := strings.Join(kernelArgs(&agentv1.RunItem{KernelId: "k"}, nil, 0), " "); got != "--run k" {
		t.Errorf("defaults: args = %q", got)
	}
}

func spec() *agentv1.KernelSpec {
	return &agentv1.KernelSpec{Id: "k", Unit: "ns/op", Params: []*agentv1.ParamSpec{
		{Name: "threads", Type: agentv1.ParamType_PARAM_TYPE_INT},
		{Name: "scale", Type: agentv1.ParamType_PARAM_TYPE_FLOAT},
	}}
}

func TestFillFromOutput(t *testing.T) {
	r := &agentv1.ResultReport{}
	out := `{"kernel": "k", "params": {"threads": 4, "scale": 2}, "samples": [1.5, 2.5],
	         "iterations": [1000, 2000.0], "counters": {"c": 0.5},
	         "harness": {"name": "google-benchmark", "version": "1.7.1", "min_time_s": 0.2}}` + "\n"
	if err := fillFromOutput(r, spec(), map[string]string{"threads": "4", "scale": "2.0"}, []byte(out)); err != nil {
		t.Fatal(err)
	}
	if r.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK || r.GetUnit() != "ns/op" || r.GetParams()["scale"] != "2.0" ||
		r.GetParams()["threads"] != "4" || r.GetIterations()[1] != 2000 || r.GetHarness().GetVersion() != "1.7.1" {
		t.Errorf("report = %v", r)
	}
}

func TestFillFromOutputRejects(t *testing.T) {
	for in, want := range map[string]string{
		``:                                    "invalid JSON",
		`{"kernel": "k", "samples": []}`:      "no samples",
		`{"kernel": "other", "samples": [1]}`: `for "other"`,
		`{"kernel": "k", "samples": [1]} {}`:  "more than one JSON value",
		`{"kernel": "k", "samples": [1, 2], "iterations": [1]}`:       "2 samples but 1 iteration counts",
		`{"kernel": "k", "samples": [1], "iterations": [1.5]}`:        "not a whole number",
		`{"kernel": "k", "samples": [1], "params": {"threads": 1.5}}`: "parameter threads",
		`{"kernel": "k", "samples": ["fast"]}`:                        "invalid JSON",
	} {
		err := fillFromOutput(&agentv1.ResultReport{}, spec(), nil, []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("output %q: err %v, want %q", in, err, want)
		}
	}
}

func TestPlanSharesRepetitionsOverLaunches(t *testing.T) {
	r := New(Options{})
	for _, c := range []struct {
		launches, reps     int32
		wantL, wantPerLnch int
	}{
		{0, 6, DefaultLaunches, 2}, // the agent's default launches
		{3, 9, 3, 3},
		{3, 10, 3, 4},      // ceil
		{5, 5, 5, 2},       // at least MinRepsPerLaunch
		{3, 1, 3, 1},       // never more than asked per launch
		{3, 0, 3, 0},       // 0: the kernel's own default per launch
		{1000, 10, 100, 2}, // bounded
	} {
		l, per := r.plan(&agentv1.RunItem{Launches: uint32(c.launches), Repetitions: c.reps})
		if l != c.wantL || per != c.wantPerLnch {
			t.Errorf("launches %d reps %d: plan %d x %d, want %d x %d", c.launches, c.reps, l, per, c.wantL, c.wantPerLnch)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	in := "cpu  30 0 20 1000 5 1 2 7 0 0\ncpu0 10 1 10 500 2 1 1 3 4 0\ncpu1 20 0 10 500 3 0 1 4 0 0\nintr 5\n"
	got := parseProcStat([]byte(in))
	if len(got) != 2 || got[0] != (CPUTicks{Busy: 23, Steal: 3}) || got[1] != (CPUTicks{Busy: 31, Steal: 4}) {
		t.Errorf("parsed %v", got)
	}
}

// The meter subtracts the kernel's own CPU time from the busy time of the CPUs it could use.
func TestMeterSubtractsTheKernelsOwnCPU(t *testing.T) {
	calls := 0
	stat := func() (map[int]CPUTicks, error) {
		calls++
		if calls == 1 {
			return map[int]CPUTicks{0: {Busy: 1000}, 1: {Busy: 1000}}, nil
		}
		// 1 s of wall on 2 CPUs: 100 ticks of the kernel on cpu0, 60 of someone else on cpu1, 10 of steal
		return map[int]CPUTicks{0: {Busy: 1100}, 1: {Busy: 1060, Steal: 10}}, nil
	}
	m := &meter{stat: stat, cpus: []int{0, 1}}
	s := m.begin()
	load := m.end(s, time.Second, time.Second)
	if !load.ok || load.otherBusyFrac < 0.29 || load.otherBusyFrac > 0.30 || load.stealFrac != 0.05 {
		t.Errorf("load = %+v, want other ≈ 0.30 (minus the agent's own few ms), steal 0.05", load)
	}
}

// contractMaxSamples reads the limit from the kernel contract itself (not from runresult), so a limit
// written again anywhere on the agent's path with another number fails the test below.
func contractMaxSamples(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "kernels", "contract", "kernel-cli.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs struct {
			Run struct {
				Properties struct {
					Samples struct {
						MaxItems int `json:"maxItems"`
					} `json:"samples"`
				} `json:"properties"`
			} `json:"run"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &s); err != nil || s.Defs.Run.Properties.Samples.MaxItems < 1 {
		t.Fatalf("kernel contract: run.samples maxItems: %v", err)
	}
	return s.Defs.Run.Properties.Samples.MaxItems
}

// A result of exactly the contract's limit passes; one more sample is refused, naming the limit.
func TestSampleLimitIsTheContracts(t *testing.T) {
	limit := contractMaxSamples(t)
	output := func(n int) []byte {
		return []byte(`{"kernel": "k", "samples": [` + strings.TrimSuffix(strings.Repeat("1,", n), ",") + `]}`)
	}
	if err := fillFromOutput(&agentv1.ResultReport{}, spec(), nil, output(limit)); err != nil {
		t.Errorf("%d samples (the contract's limit): %v", limit, err)
	}
	err := fillFromOutput(&agentv1.ResultReport{}, spec(), nil, output(limit+1))
	if want := fmt.Sprintf("kernel result has %d samples, more than the %d a result may carry", limit+1, limit); err == nil || err.Error() != want {
		t.Errorf("%d samples: err = %v, want %q", limit+1, err, want)
	}
	if err := samplesOverLimit(limit); err != nil {
		t.Errorf("launches' check refuses %d samples: %v", limit, err)
	}
	if err := samplesOverLimit(limit + 1); err == nil {
		t.Errorf("launches' check takes %d samples", limit+1)
	}
}

// The report's span comes from execKernel: the end must be set on every return path, and after the start.
func TestExecKernelRecordsItsSpan(t *testing.T) {
	for _, path := range []string{"/bin/true", "/nonexistent/kernel"} {
		res := execKernel(context.Background(), path, "", nil, 10*time.Second, time.Second)
		if res.End.IsZero() || res.End.Before(res.Started) {
			t.Errorf("%s: started %v, end %v: the end time is missing", path, res.Started, res.End)
		}
	}
}
