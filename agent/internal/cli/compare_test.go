package cli

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func f64(v float64) *float64 { return &v }

// comparison builds a compare answer: baseline "m-b" (beta) and "m-a" (alpha), one row per spec.
func comparison(rows ...map[string]any) map[string]any {
	return map[string]any{
		"machines": []any{map[string]any{"id": "m-b", "name": "beta"}, map[string]any{"id": "m-a", "name": "alpha"}},
		"baseline": "m-b", "rows": rows, "geomean": map[string]any{}, "warnings": []any{},
	}
}

// row: a kernel point where alpha's figure is ratio times beta's 100, with the rule given (the medians
// 5 % above: what is printed is the figure).
func row(kernel, key, unit string, ratio float64, rule string, significant bool) map[string]any {
	return map[string]any{
		"kernel": kernel, "params_key": key, "unit": unit, "higher_is_better": strings.HasSuffix(unit, "/s"),
		"cells": map[string]any{
			"m-b": map[string]any{"figure": 100.0, "median": 105.0, "ci_low": 99.0, "ci_high": 101.0, "run_id": "rb"},
			"m-a": map[string]any{"figure": 100 * ratio, "median": 105 * ratio, "ci_low": 99 * ratio, "ci_high": 101 * ratio,
				"run_id": "ra"},
		},
		"ratios": map[string]any{
			"m-b": map[string]any{"ratio": 1.0, "ci_low": nil, "ci_high": nil, "significant": false, "significance": nil},
			"m-a": map[string]any{"ratio": ratio, "ci_low": ratio * 0.98, "ci_high": ratio * 1.02, "significant": significant,
				"significance": map[string]any{"significant": significant, "rule": rule, "noise": 0.05,
					"noise_source": "default", "ci_level": 0.95, "n_launches": []int{3, 3}}},
		},
	}
}

func compareFake(t *testing.T, answer map[string]any) *fakeAPI {
	f := newFake(t)
	f.answer("GET /api/v1/machines", 200, twoMachines)
	f.answer("GET /api/v1/compare", 200, answer)
	return f
}

func TestCompareTable(t *testing.T) {
	f := compareFake(t, comparison(
		row("syscall.getppid", "", "ns/op", 1.25, "ci_excludes_noise", true),
		row("ctxswitch.pipe", "placement=same_core&threads=2", "ns/op", 1.01, "ci_includes_1", false),
	))
	got := runCLI(t, f, nil, "", "compare", "--machines", "beta,alpha", "--kernels", "syscall.*,ctxswitch.pipe")
	if got.code != 0 {
		t.Fatalf("%+v", got)
	}
	want := `KERNEL           PARAMS                         beta (baseline)  alpha      alpha/beta [CI]      SIGNIFICANT
syscall.getppid  -                              100 ns/op        125 ns/op  1.25 [1.225, 1.275]  * ci_excludes_noise (noise 5%, default)
ctxswitch.pipe   placement=same_core,threads=2  100 ns/op        101 ns/op  1.01 [0.9898, 1.03]    ci_includes_1 (noise 5%, default)
`
	if !strings.HasPrefix(got.stdout, want) {
		t.Errorf("stdout:\n%s\nwant:\n%s", got.stdout, want)
	}
	q, _ := url.ParseQuery(f.seen("GET", "/api/v1/compare")[0].query)
	if q.Get("machines") != "m-b,m-a" || q.Get("kernels") != "syscall.*,ctxswitch.pipe" || q.Has("baseline") {
		t.Errorf("query %v", q)
	}
	runCLI(t, f, nil, "", "compare", "--machines", "m-a", "--machines", "beta", "--baseline", "beta")
	q, _ = url.ParseQuery(f.seen("GET", "/api/v1/compare")[1].query)
	if q.Get("machines") != "m-a,m-b" || q.Get("baseline") != "m-b" {
		t.Errorf("query %v", q)
	}
}

func TestCompareJSONIsTheRawAnswer(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/machines", 200, twoMachines)
	raw := `{"machines":[],"baseline":"m-a","rows":[],"extra_field":{"kept":true}}`
	f.answer("GET /api/v1/compare", 200, raw)
	got := runCLI(t, f, nil, "", "compare", "--machines", "alpha", "--json")
	if got.code != 0 || got.stdout != raw+"\n" {
		t.Errorf("%+v", got)
	}
}

func TestCompareCSV(t *testing.T) {
	f := compareFake(t, comparison(row("syscall.getppid", "a=1&b=x", "ns/op", 1.25, "ci_excludes_noise", true)))
	got := runCLI(t, f, nil, "", "compare", "--machines", "beta,alpha", "--csv")
	want := "kernel,params,unit,beta figure,beta ci_low,beta ci_high,alpha figure,alpha ci_low,alpha ci_high," +
		"alpha/beta ratio,alpha/beta ci_low,alpha/beta ci_high,alpha/beta significant,alpha/beta rule,alpha/beta noise\n" +
		"syscall.getppid,a=1&b=x,ns/op,100,99,101,125,123.75,126.25,1.25,1.225,1.275,true,ci_excludes_noise,0.05\n"
	if got.code != 0 || got.stdout != want {
		t.Errorf("%+v\nwant %s", got, want)
	}
}

func TestCompareBencherMetricFormat(t *testing.T) {
	f := compareFake(t, comparison(
		row("syscall.getppid", "", "ns/op", 1.25, "ci_excludes_noise", true),
		row("coroutine.switch", "impl=ucontext", "us/op", 2, "ci_excludes_noise", true),
		row("storage.write", "bytes=4096", "MB/s", 0.5, "ci_excludes_noise", true),
	))
	got := runCLI(t, f, nil, "", "compare", "--machines", "beta,alpha", "--format", "bencher")
	var bmf map[string]map[string]map[string]float64
	if err := json.Unmarshal([]byte(got.stdout), &bmf); err != nil || got.code != 0 {
		t.Fatalf("%+v %v", got, err)
	}
	want := map[string]map[string]map[string]float64{
		// alpha's figures (the first machine that is not the baseline); us/op is latency in ns
		"syscall.getppid":                 {"latency": {"value": 125, "lower_value": 123.75, "upper_value": 126.25}},
		"coroutine.switch[impl=ucontext]": {"latency": {"value": 200000, "lower_value": 198000, "upper_value": 202000}},
		"storage.write[bytes=4096]":       {"mb-per-s": {"value": 50, "lower_value": 49.5, "upper_value": 50.5}},
	}
	if !reflect.DeepEqual(bmf, want) {
		t.Errorf("got %v\nwant %v", bmf, want)
	}
	got = runCLI(t, f, nil, "", "compare", "--machines", "beta,alpha", "--format", "bencher", "--bencher-machine", "beta")
	json.Unmarshal([]byte(got.stdout), &bmf)
	if bmf["syscall.getppid"]["latency"]["value"] != 100 {
		t.Errorf("beta's column: %v", bmf)
	}
	if got := runCLI(t, f, nil, "", "compare", "--machines", "beta", "--format", "yaml"); got.code != ExitUsage {
		t.Errorf("%+v", got)
	}
}

func TestBencherMeasure(t *testing.T) {
	for unit, want := range map[string]struct {
		measure string
		factor  float64
	}{
		"ns/op": {"latency", 1}, "ns/goroutine": {"latency", 1}, "us/op": {"latency", 1e3}, "ms/op": {"latency", 1e6},
		"ops/s": {"throughput", 1}, "MB/s": {"mb-per-s", 1}, "bytes/goroutine": {"bytes-per-goroutine", 1},
	} {
		m, f := bencherMeasure(unit)
		if m != want.measure || f != want.factor {
			t.Errorf("%s: %s %g", unit, m, f)
		}
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 2560.14: "2560", 256: "256", 77.049: "77.05", 1.0: "1", 0.99696: "0.997", 123456.7: "123457",
		0.0001234: "0.0001234", 10: "10", 1000: "1000",
	} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %s, want %s", v, got, want)
		}
	}
}

// A server from before figures sends only the median: it is what is shown.
func TestFigureFallsBackToTheMedian(t *testing.T) {
	m, f := 7.0, 5.0
	if got := (Cell{Median: &m}).figure(); got == nil || *got != 7 {
		t.Errorf("figure of a median-only cell = %v, want 7", got)
	}
	if got := (Cell{Median: &m, Figure: &f}).figure(); got == nil || *got != 5 {
		t.Errorf("figure = %v, want 5", got)
	}
}
