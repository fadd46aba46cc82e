package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ctxbench/ctxbench/kernels/go/internal/harness"
	"github.com/ctxbench/ctxbench/kernels/go/internal/kernels"
	"github.com/ctxbench/ctxbench/kernels/go/internal/spec"
)

// TestMain lets goroutine.memory re-execute the test binary as its one-sample child.
func TestMain(m *testing.M) {
	if code, ok := kernels.RunChild(os.Stdout, os.Stderr); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func TestParseRun(t *testing.T) {
	c, err := Parse([]string{"--run", "lock.go_mutex", "--param", "goroutines=4", "--param=procs=2",
		"--repetitions=3", "--min-time", "0.05"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Run != "lock.go_mutex" || c.Repetitions != 3 || c.MinTime != 0.05 || c.List {
		t.Fatalf("parsed %+v", c)
	}
	if c.Params["goroutines"] != "4" || c.Params["procs"] != "2" || len(c.Params) != 2 {
		t.Fatalf("params %v", c.Params)
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := Parse([]string{"--run=sched.gosched"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Repetitions != DefaultRepetitions || c.MinTime != DefaultMinTime || len(c.Params) != 0 {
		t.Fatalf("parsed %+v", c)
	}
	c, err = Parse([]string{"--list"})
	if err != nil || !c.List {
		t.Fatalf("--list: %+v, %v", c, err)
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string][]string{
		"nothing":             {},
		"unknown option":      {"--run", "lock.go_mutex", "--frobnicate"},
		"single dash":         {"-run", "lock.go_mutex"},
		"stray argument":      {"lock.go_mutex"},
		"run without value":   {"--run"},
		"run empty":           {"--run="},
		"run twice":           {"--run", "lock.go_mutex", "--run", "sched.gosched"},
		"param without =":     {"--run", "lock.go_mutex", "--param", "goroutines"},
		"param empty name":    {"--run", "lock.go_mutex", "--param", "=3"},
		"param twice":         {"--run", "lock.go_mutex", "--param", "procs=1", "--param", "procs=2"},
		"repetitions zero":    {"--run", "lock.go_mutex", "--repetitions", "0"},
		"repetitions text":    {"--run", "lock.go_mutex", "--repetitions", "five"},
		"repetitions float":   {"--run", "lock.go_mutex", "--repetitions", "2.5"},
		"min-time zero":       {"--run", "lock.go_mutex", "--min-time", "0"},
		"min-time negative":   {"--run", "lock.go_mutex", "--min-time", "-1"},
		"min-time text":       {"--run", "lock.go_mutex", "--min-time", "soon"},
		"min-time nan":        {"--run", "lock.go_mutex", "--min-time", "NaN"},
		"min-time huge":       {"--run", "lock.go_mutex", "--min-time", "1e9"},
		"list with run":       {"--list", "--run", "lock.go_mutex"},
		"list with a value":   {"--list=yes"},
		"list with min-time":  {"--list", "--min-time", "1"},
		"min-time no value":   {"--run", "lock.go_mutex", "--min-time"},
		"repetitions no val":  {"--run", "lock.go_mutex", "--repetitions"},
		"param no value":      {"--run", "lock.go_mutex", "--param"},
		"list with a param":   {"--list", "--param", "procs=1"},
		"repetitions too big": {"--run", "lock.go_mutex", "--repetitions", "100000000"},
	}
	for name, args := range cases {
		if c, err := Parse(args); err == nil {
			t.Errorf("%s: %v parsed as %+v, want an error", name, args, c)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q spans lines", name, err)
		}
	}
}

func run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestMainBadArgumentsExit2(t *testing.T) {
	cases := [][]string{
		{"--run", "go.nope"},
		{"--run", "lock.go_mutex", "--param", "threads=2"},
		{"--run", "lock.go_mutex", "--param", "goroutines=many"},
		{"--run", "lock.go_mutex", "--param", "goroutines=0"},
		{"--run", "lock.go_mutex", "--param", "goroutines=16385"},
		{"--run", "sched.gosched", "--param", "procs=1025"},
		{"--run", "channel.pingpong", "--param", "topology=ring"},
		{"--run", "goroutine.memory", "--param", "goroutines=100001"},
		{"--run", "lock.go_mutex", "--repetitions", "0"},
		{"--bogus"},
	}
	for _, args := range cases {
		code, stdout, stderr := run(args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
		if stdout != "" {
			t.Errorf("%v: stdout %q, want nothing", args, stdout)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
			t.Errorf("%v: stderr %q, want exactly one line", args, stderr)
		}
	}
}

func TestMainList(t *testing.T) {
	code, stdout, stderr := run("--list")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var specs []map[string]any
	if err := json.Unmarshal([]byte(stdout), &specs); err != nil {
		t.Fatal(err)
	}
	want := []string{"goroutine.create", "goroutine.memory", "sched.gosched", "channel.pingpong", "lock.go_mutex"}
	if len(specs) != len(want) {
		t.Fatalf("%d specs, want %d", len(specs), len(want))
	}
	for i, id := range want {
		if specs[i]["id"] != id {
			t.Errorf("spec %d is %v, want %s", i, specs[i]["id"], id)
		}
	}
}

// TestMainRunsEveryKernel runs each kernel once, tiny, through the CLI.
func TestMainRunsEveryKernel(t *testing.T) {
	runs := [][]string{
		{"--run", "goroutine.create", "--param", "batch=3"},
		{"--run", "sched.gosched", "--param", "goroutines=3"},
		{"--run", "channel.pingpong", "--param", "goroutines=3", "--param", "topology=pairs"},
		{"--run", "channel.pingpong", "--param", "goroutines=3"},
		{"--run", "lock.go_mutex", "--param", "goroutines=3", "--param", "procs=2"},
		{"--run", "goroutine.memory", "--param", "goroutines=200"},
	}
	for _, args := range runs {
		args = append(args, "--repetitions", "2", "--min-time", "0.002")
		code, stdout, stderr := run(args...)
		if code != ExitOK {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
			continue
		}
		var res struct {
			Kernel     string
			Samples    []float64
			Iterations []int64
			Harness    struct {
				Name string
			}
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Errorf("%v: %v", args, err)
			continue
		}
		if res.Kernel != args[1] || len(res.Samples) != 2 || len(res.Iterations) != 2 || res.Harness.Name != "go-testing" {
			t.Errorf("%v: result %+v", args, res)
		}
	}
}

// withKernel makes the CLI see only k while the test runs.
func withKernel(t *testing.T, k kernels.Kernel) {
	t.Helper()
	all, find := allKernels, findKernel
	t.Cleanup(func() { allKernels, findKernel = all, find })
	allKernels = func() []kernels.Kernel { return []kernels.Kernel{k} }
	findKernel = func(id string) (kernels.Kernel, bool) { return k, id == k.Spec.ID }
}

func TestMainExitCodesOfFailingKernels(t *testing.T) {
	cases := []struct {
		name string
		new  func(spec.Values) (*harness.Case, error)
		code int
	}{
		{"unsupported", func(spec.Values) (*harness.Case, error) {
			return nil, &kernels.UnsupportedError{Why: "no such primitive here"}
		}, ExitUnsupported},
		{"self-check", func(spec.Values) (*harness.Case, error) {
			return &harness.Case{OpsPerIter: 1, Bench: func(b *testing.B, m *harness.Meter) {
				m.Begin(b)
				m.End(b)
				m.Fail("counted %d, want %d", 0, b.N)
			}}, nil
		}, ExitCheckFailed},
	}
	for _, tc := range cases {
		withKernel(t, kernels.Kernel{Spec: spec.Kernel{ID: "test.fail", Unit: "ns/op"}, New: tc.new})
		code, stdout, stderr := run("--run", "test.fail", "--min-time", "0.001")
		if code != tc.code || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and one stderr line", tc.name, code, stdout, stderr, tc.code)
		}
	}
}

func TestParseSampleTime(t *testing.T) {
	c, err := Parse([]string{"--run", "lock.go_mutex", "--sample-time", "0.001"})
	if err != nil || c.SampleTime != 0.001 || c.MinTime != DefaultMinTime {
		t.Fatalf("parsed %+v, %v", c, err)
	}
	// Checked against the --min-time in effect, given before or after it.
	for _, args := range [][]string{
		{"--run", "lock.go_mutex", "--sample-time=0.5", "--min-time", "0.5"},
		{"--run", "lock.go_mutex", "--min-time=2", "--sample-time", "1"},
	} {
		if _, err := Parse(args); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	c, err = Parse([]string{"--run", "lock.go_mutex"})
	if err != nil || c.SampleTime != 0 {
		t.Fatalf("without --sample-time: %+v, %v", c, err)
	}
}

func TestMainSampleTimeErrorsExit2NamingIt(t *testing.T) {
	cases := map[string][]string{
		"zero":              {"--sample-time", "0"},
		"negative":          {"--sample-time", "-0.001"},
		"over one second":   {"--sample-time", "2", "--min-time", "5"},
		"over min-time":     {"--sample-time", "0.5", "--min-time", "0.1"},
		"over default min":  {"--sample-time", "0.3"},
		"min-time after":    {"--sample-time=0.05", "--min-time=0.01"},
		"twice":             {"--sample-time", "0.001", "--sample-time", "0.001"},
		"twice, = form":     {"--sample-time=0.001", "--sample-time=0.002"},
		"text":              {"--sample-time", "short"},
		"nan":               {"--sample-time", "NaN"},
		"inf":               {"--sample-time", "inf"},
		"no value":          {"--sample-time"},
		"empty":             {"--sample-time="},
		"with list":         {"--list", "--sample-time", "0.001"},
		"list, no run opts": {"--sample-time", "0.001", "--list"},
	}
	for name, opts := range cases {
		args := append([]string{"--run", "lock.go_mutex"}, opts...)
		if opts[0] == "--list" || opts[len(opts)-1] == "--list" {
			args = opts
		}
		code, stdout, stderr := run(args...)
		if code != ExitUsage || stdout != "" {
			t.Errorf("%s: %v: exit %d, stdout %q; want exit %d and no stdout", name, args, code, stdout, ExitUsage)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
			t.Errorf("%s: %v: stderr %q, want exactly one line", name, args, stderr)
		}
		if !strings.Contains(stderr, "--sample-time") && !strings.Contains(name, "list") {
			t.Errorf("%s: %v: stderr %q does not name --sample-time", name, args, stderr)
		}
	}
}

// TestMainSampleTimeRun runs a cheap kernel with short samples through the CLI and checks the result.
func TestMainSampleTimeRun(t *testing.T) {
	code, stdout, stderr := run("--run", "channel.pingpong", "--repetitions", "2", "--min-time", "0.01",
		"--sample-time", "0.001")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Samples    []float64
		Iterations []int64
		Counters   map[string]float64
		Sampling   *struct {
			Estimator            string  `json:"estimator"`
			SampleTimeS          float64 `json:"sample_time_s"`
			SampleOps            int64   `json:"sample_ops"`
			SamplesPerRepetition int64   `json:"samples_per_repetition"`
			Disturbed            []int64 `json:"disturbed"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	s := res.Sampling
	if s == nil || s.Estimator != "p5" || s.SampleTimeS != 0.001 || s.SampleOps < 2 || s.SampleOps%2 != 0 {
		t.Fatalf("sampling %+v", s)
	}
	if s.SamplesPerRepetition < 1 || s.SamplesPerRepetition > 10 || len(s.Disturbed) != 2 {
		t.Fatalf("sampling %+v: want 1..10 samples (0.01 s / >= 0.001 s) and 2 blocks", s)
	}
	// The keys come in the contract's order: sampling after counters, before harness.
	if i, j, k := strings.Index(stdout, `"counters"`), strings.Index(stdout, `"sampling"`), strings.Index(stdout, `"harness"`); !(i < j && j < k) {
		t.Errorf("key order in %s", stdout)
	}
	sustained := res.Counters["sustained_ns_per_op"]
	if !(sustained > 0) || res.Counters["replies_per_op"] != 0.5 {
		t.Errorf("counters %v", res.Counters)
	}
	// sustained is the mean over both blocks; each block's mean is at least its p5, so the smaller p5
	// cannot exceed it.
	if len(res.Samples) != 2 || len(res.Iterations) != 2 || min(res.Samples[0], res.Samples[1]) > sustained*(1+1e-9) {
		t.Errorf("samples %v, sustained %v", res.Samples, sustained)
	}
	for i := range res.Iterations {
		if res.Iterations[i] != s.SampleOps*s.SamplesPerRepetition {
			t.Errorf("iterations[%d] = %d, want sample_ops %d x %d", i, res.Iterations[i], s.SampleOps, s.SamplesPerRepetition)
		}
		if !(res.Samples[i] > 0) || s.Disturbed[i] < 0 || s.Disturbed[i] > s.SamplesPerRepetition {
			t.Errorf("repetition %d: sample %v, %d disturbed", i, res.Samples[i], s.Disturbed[i])
		}
	}
}

// TestMainWithoutSampleTimeHasNoSampling: without --sample-time the result is what it always was.
func TestMainWithoutSampleTimeHasNoSampling(t *testing.T) {
	code, stdout, stderr := run("--run", "channel.pingpong", "--repetitions", "1", "--min-time", "0.002")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "sampling") || strings.Contains(stdout, "sustained_ns_per_op") {
		t.Errorf("result %s has short-sample keys", stdout)
	}
}

// TestMainSampleTimeIgnoredForMemory: goroutine.memory is not a time, so --sample-time leaves it alone.
func TestMainSampleTimeIgnoredForMemory(t *testing.T) {
	code, stdout, stderr := run("--run", "goroutine.memory", "--param", "goroutines=200", "--repetitions", "1",
		"--min-time", "0.01", "--sample-time", "0.001")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "sampling") || strings.Contains(stdout, "sustained_ns_per_op") {
		t.Errorf("result %s has short-sample keys", stdout)
	}
}
