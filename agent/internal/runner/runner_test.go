package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

func TestKernelArgs(t *testing.T) {
	it := &agentv1.RunItem{KernelId: "ctx.pingpong", Repetitions: 5, MinTimeS: 0.2}
	got := strings.Join(kernelArgs(it, map[string]string{"threads": "4", "placement": "same_core"}), " ")
	want := "--run ctx.pingpong --param placement=same_core --param threads=4 --repetitions 5 --min-time 0.2"
	if got != want {
		t.Errorf("args = %q, want %q", got, want)
	}
	if got := strings.Join(kernelArgs(&agentv1.RunItem{KernelId: "k"}, nil), " "); got != "--run k" {
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

func TestTailAndLimitBuffers(t *testing.T) {
	tb := tailBuf{limit: 8}
	_, _ = tb.Write([]byte("0123456789"))
	_, _ = tb.Write([]byte("ab"))
	if tb.String() != "456789ab" {
		t.Errorf("tail = %q", tb.String())
	}
	lb := limitedBuf{limit: 4}
	_, _ = lb.Write([]byte("abc"))
	_, _ = lb.Write([]byte("def"))
	if string(lb.buf) != "abcd" || !lb.over {
		t.Errorf("limited = %q over=%v", lb.buf, lb.over)
	}
	if got := lastLine("one\ntwo\n\n"); got != "two" {
		t.Errorf("lastLine = %q", got)
	}
}

func TestCoefficientOfVariation(t *testing.T) {
	if cv := coefficientOfVariation([]float64{10, 10, 10}); cv != 0 {
		t.Errorf("cv of constants = %v", cv)
	}
	if cv := coefficientOfVariation([]float64{5}); cv != 0 {
		t.Errorf("cv of one sample = %v", cv)
	}
	// mean 11, sample stddev sqrt(4/3)... for {10, 12, 10, 12}: mean 11, ss 4, var 4/3
	got := coefficientOfVariation([]float64{10, 12, 10, 12})
	if want := 1.1547005383792515 / 11; got < want-1e-12 || got > want+1e-12 {
		t.Errorf("cv = %v, want %v", got, want)
	}
}

func TestTooManySamplesFail(t *testing.T) {
	samples := make([]string, MaxSamples+1)
	for i := range samples {
		samples[i] = "1"
	}
	out := `{"kernel": "k", "samples": [` + strings.Join(samples, ",") + `]}`
	err := fillFromOutput(&agentv1.ResultReport{}, spec(), nil, []byte(out))
	if err == nil || !strings.Contains(err.Error(), "more than the 100000") {
		t.Errorf("err = %v", err)
	}
}

// The report's span comes from execKernel: the end must be set on every return path, and after the start.
func TestExecKernelRecordsItsSpan(t *testing.T) {
	for _, path := range []string{"/bin/true", "/nonexistent/kernel"} {
		res := execKernel(context.Background(), path, "", nil, 10*time.Second, time.Second)
		if res.end.IsZero() || res.end.Before(res.started) {
			t.Errorf("%s: started %v, end %v: the end time is missing", path, res.started, res.end)
		}
	}
}
