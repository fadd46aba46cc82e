package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// sidesComparison is a compare answer in sides mode: columns "baseline" and "candidate".
func sidesComparison(rows ...map[string]any) map[string]any {
	for _, r := range rows {
		for _, key := range []string{"cells", "ratios"} {
			m := r[key].(map[string]any)
			m["baseline"], m["candidate"] = m["m-b"], m["m-a"]
			delete(m, "m-b")
			delete(m, "m-a")
		}
	}
	return map[string]any{
		"machines": []any{map[string]any{"id": "baseline", "name": "baseline"}, map[string]any{"id": "candidate", "name": "candidate"}},
		"baseline": "baseline", "rows": rows, "warnings": []any{},
	}
}

func TestGateExits1OnASignificantlySlowerRow(t *testing.T) {
	f := compareFake(t, sidesComparison(
		row("syscall.getppid", "", "ns/op", 1.25, "ci_excludes_noise", true),
		row("call.function", "", "ns/op", 0.7, "ci_excludes_noise", true),          // faster
		row("ctxswitch.pipe", "", "ns/op", 1.04, "within_noise", false),            // not significant
		row("storage.write", "bytes=4096", "MB/s", 0.5, "ci_excludes_noise", true), // throughput halved: slower
	))
	got := runCLI(t, f, nil, "", "gate", "--run", "r2", "--baseline-run", "r1")
	if got.code != ExitFailed {
		t.Fatalf("exit %d: %+v", got.code, got)
	}
	q, _ := url.ParseQuery(f.seen("GET", "/api/v1/compare")[0].query)
	if q.Get("sides") != "baseline:r1;candidate:r2" || q.Get("baseline") != "baseline" {
		t.Errorf("query %v", q)
	}
	for _, want := range []string{
		"SLOWER syscall.getppid -: 100 ns/op -> 125 ns/op, ratio 1.25 [1.225, 1.275] (higher is slower)\n" +
			"  rule ci_excludes_noise: the CI lies outside the noise band [0.9524, 1.05] (noise 5.0%, from default)\n",
		"SLOWER storage.write bytes=4096: 100 MB/s -> 50 MB/s, ratio 0.5 [0.49, 0.51] (lower is slower: MB/s is a throughput)\n",
		"gate: run r2 against run r1: 4 compared, 2 significantly slower, 1 significantly faster, 0 not compared\n",
	} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, got.stdout)
		}
	}
	if strings.Contains(got.stdout, "call.function") || strings.Contains(got.stdout, "ctxswitch.pipe") {
		t.Errorf("a row that is not slower was reported:\n%s", got.stdout)
	}
}

func TestGatePassesWhenNothingIsSignificantlySlower(t *testing.T) {
	f := compareFake(t, sidesComparison(
		row("syscall.getppid", "", "ns/op", 1.04, "within_noise", false),
		row("call.function", "", "ns/op", 0.7, "ci_excludes_noise", true),
		row("storage.write", "", "MB/s", 1.5, "ci_excludes_noise", true), // more throughput: faster
	))
	got := runCLI(t, f, nil, "", "gate", "--run", "r2,r3", "--baseline-run", "r1", "--kernels", "syscall.*")
	if got.code != 0 || !strings.Contains(got.stdout, "3 compared, 0 significantly slower, 2 significantly faster") {
		t.Fatalf("%+v", got)
	}
	q, _ := url.ParseQuery(f.seen("GET", "/api/v1/compare")[0].query)
	if q.Get("sides") != "baseline:r1;candidate:r2,r3" || q.Get("kernels") != "syscall.*" {
		t.Errorf("query %v", q)
	}
}

func TestGateNothingComparedIsAUsageError(t *testing.T) {
	r := row("syscall.getppid", "", "ns/op", 1.5, "ci_excludes_noise", true)
	delete(r["ratios"].(map[string]any), "m-a")
	delete(r["cells"].(map[string]any), "m-a")
	f := compareFake(t, sidesComparison(r))
	got := runCLI(t, f, nil, "", "gate", "--run", "r2", "--baseline-run", "r1")
	if got.code != ExitUsage || !strings.Contains(got.stderr, "nothing compared") {
		t.Errorf("%+v", got)
	}
}

func TestGateARunAgainstItselfPasses(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/runs/r1", 200, runJSON("r1", "m-a", "succeeded", 1, 0))
	got := runCLI(t, f, nil, "", "gate", "--run", "r1", "--baseline-run", "r1")
	if got.code != 0 || !strings.Contains(got.stdout, "its own baseline") {
		t.Errorf("%+v", got)
	}
	if len(f.seen("GET", "/api/v1/compare")) != 0 {
		t.Error("compared a run with itself")
	}
	got = runCLI(t, f, nil, "", "gate", "--run", "nope", "--baseline-run", "nope")
	if got.code != ExitUsage {
		t.Errorf("unknown run: %+v", got)
	}
}

func TestGateByMachinesUsesTheirNewestRuns(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/machines", 200, twoMachines)
	f.mux.HandleFunc("GET /api/v1/runs", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("status") != "succeeded" || q.Get("items") != "false" {
			w.WriteHeader(400)
			return
		}
		runs := map[string][]any{
			"m-a": {runJSON("ra2", "m-a", "succeeded", 1, 0), runJSON("ra1", "m-a", "succeeded", 1, 0)},
			"m-b": {runJSON("rb1", "m-b", "succeeded", 1, 0)},
		}[q.Get("machine_id")]
		n := 1
		fmt.Sscan(q.Get("limit"), &n)
		json.NewEncoder(w).Encode(runs[:min(n, len(runs))])
	})
	f.answer("GET /api/v1/compare", 200, comparison(row("syscall.getppid", "", "ns/op", 1.0, "ci_includes_1", false)))
	got := runCLI(t, f, nil, "", "gate", "--machine", "alpha", "--baseline-machine", "beta")
	if got.code != 0 || !strings.Contains(got.stdout, "gate: alpha against beta: 1 compared, 0 significantly slower") {
		t.Fatalf("%+v", got)
	}
	q, _ := url.ParseQuery(f.seen("GET", "/api/v1/compare")[0].query)
	if q.Get("machines") != "m-b,m-a" || q.Get("baseline") != "m-b" || q.Get("runs") != "ra2,rb1" {
		t.Errorf("query %v", q)
	}
	// One machine against itself: its newest run against the one before.
	got = runCLI(t, f, nil, "", "gate", "--machine", "alpha", "--baseline-machine", "m-a")
	q, _ = url.ParseQuery(f.seen("GET", "/api/v1/compare")[1].query)
	if q.Get("sides") != "baseline:ra1;candidate:ra2" {
		t.Errorf("%+v query %v", got, q)
	}
	got = runCLI(t, f, nil, "", "gate", "--machine", "beta", "--baseline-machine", "beta")
	if got.code != ExitUsage || !strings.Contains(got.stderr, "two are needed") {
		t.Errorf("%+v", got)
	}
}

func TestGateExitCodes(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/compare", 500, "Internal Server Error")
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"gate"}, ExitUsage},
		{[]string{"gate", "--run", "r1"}, ExitUsage},
		{[]string{"gate", "--machine", "a"}, ExitUsage},
		{[]string{"gate", "--run", "r1", "--baseline-run", "r0", "--machine", "a"}, ExitUsage},
		{[]string{"gate", "--run", "r1,r2", "--baseline-run", "r2"}, ExitUsage},
		{[]string{"gate", "--bogus"}, ExitUsage},
		{[]string{"gate", "--run", "r1", "--baseline-run", "r0"}, ExitServer}, // the 500
	} {
		got := runCLI(t, f, nil, "", tc.args...)
		if got.code != tc.code || strings.Count(got.stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, want %d; stderr %q", tc.args, got.code, tc.code, got.stderr)
		}
	}
	// Nothing listening: exit 3.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	got := runCLI(t, nil, map[string]string{"CTXBENCH_SERVER": "http://" + addr}, "", "gate", "--run", "a", "--baseline-run", "b")
	if got.code != ExitServer || !strings.Contains(got.stderr, "reach http://"+addr) {
		t.Errorf("%+v", got)
	}
	for status, code := range map[int]int{401: ExitServer, 403: ExitServer, 429: ExitServer, 404: ExitUsage, 422: ExitUsage, 409: ExitUsage} {
		if got := (&APIError{Status: status}).exitCode(); got != code {
			t.Errorf("%d -> %d, want %d", status, got, code)
		}
	}
}
