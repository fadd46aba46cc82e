package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

func decodeKernels(t *testing.T) []Kernel {
	t.Helper()
	data, _ := json.Marshal(someKernels)
	var ks []Kernel
	if err := json.Unmarshal(data, &ks); err != nil {
		t.Fatal(err)
	}
	return ks
}

func TestParseItemTypesValuesByTheKernelsDeclaration(t *testing.T) {
	ks := decodeKernels(t)
	for _, tc := range []struct {
		spec string
		want Item
	}{
		{"syscall.getppid", Item{Kernel: "syscall.getppid"}},
		{"ctxswitch.pipe:placement=same_core,threads=4,ratio=0.5,pin=true,dir=/tmp/x",
			Item{Kernel: "ctxswitch.pipe", Params: map[string]any{
				"placement": "same_core", "threads": int64(4), "ratio": 0.5, "pin": true, "dir": "/tmp/x"}}},
		{"old.pipe:threads=1|2|4", Item{Kernel: "old.pipe", Sweep: map[string][]any{"threads": {int64(1), int64(2), int64(4)}}}},
		// Undeclared: typed by its look (the server names it if it is wrong).
		{"new.kernel:n=3,x=1.5,b=false,s=abc", Item{Kernel: "new.kernel", Params: map[string]any{
			"n": int64(3), "x": 1.5, "b": false, "s": "abc"}}},
	} {
		got, err := parseItem(tc.spec, ks)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %#v %v", tc.spec, got, err)
		}
	}
	for _, bad := range []string{
		":x=1", "ctxswitch.pipe:threads=four", "ctxswitch.pipe:placement=elsewhere", "ctxswitch.pipe:pin=maybe",
		"ctxswitch.pipe:ratio=nan", "ctxswitch.pipe:novalue",
	} {
		if _, err := parseItem(bad, ks); exitCode(err) != ExitUsage {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func runJSON(id, machine, status string, done, failed int, items ...map[string]any) map[string]any {
	if items == nil {
		items = []map[string]any{}
	}
	return map[string]any{"id": id, "machine_id": machine, "batch_id": "b1", "status": status, "error": nil,
		"items": items, "progress": map[string]int{"total": 1, "done": done, "failed": failed, "running": 0}}
}

func TestRunPostsOneRunOrABatch(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/machines", 200, twoMachines)
	f.answer("GET /api/v1/kernels", 200, someKernels)
	f.answer("POST /api/v1/runs", 201, map[string]any{"batch_id": "b1", "runs": []any{
		runJSON("r1", "m-a", "running", 0, 0), runJSON("r2", "m-b", "queued", 0, 0)}})
	got := runCLI(t, f, nil, "", "run", "--machine", "alpha", "--machine", "m-b",
		"--kernel", "ctxswitch.pipe:threads=2", "--kernel", "syscall.getppid", "--profile", "quick")
	if got.code != 0 {
		t.Fatalf("%+v", got)
	}
	want := "batch b1\nrun r1 on alpha: running\nrun r2 on beta: queued\n"
	if got.stdout != want {
		t.Errorf("stdout %q", got.stdout)
	}
	post := f.seen("POST", "/api/v1/runs")[0]
	var body map[string]any
	json.Unmarshal(post.body, &body)
	wantBody := map[string]any{"machine_ids": []any{"m-a", "m-b"}, "profile": "quick", "items": []any{
		map[string]any{"kernel": "ctxswitch.pipe", "params": map[string]any{"threads": 2.0}},
		map[string]any{"kernel": "syscall.getppid"}}}
	if !reflect.DeepEqual(body, wantBody) || post.query != "items=false" {
		t.Errorf("posted %s ?%s", post.body, post.query)
	}

	for _, args := range [][]string{
		{"run", "--kernel", "syscall.getppid"},
		{"run", "--machine", "alpha"},
		{"run", "--machine", "nobody", "--kernel", "syscall.getppid"},
		{"run", "--machine", "alpha", "--kernel", "syscall.getppid", "--profile", "fast"},
		{"run", "--machine", "alpha", "--kernel", "syscall.getppid", "extra"},
	} {
		if got := runCLI(t, f, nil, "", args...); got.code != ExitUsage || strings.Count(got.stderr, "\n") != 1 {
			t.Errorf("%v: %+v", args, got)
		}
	}
}

func TestServer422IsShownAsLocAndMsg(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/machines", 200, twoMachines)
	f.answer("GET /api/v1/kernels", 200, someKernels)
	f.answer("POST /api/v1/runs", 422, `{"detail":[{"loc":["body","items",0,"params","x"],"msg":"unknown parameter","type":"x"},`+
		`{"loc":["body","repetitions"],"msg":"too many","type":"y"}]}`)
	got := runCLI(t, f, nil, "", "run", "--machine", "alpha", "--kernel", "syscall.getppid:x=1")
	want := "ctxbench: POST /api/v1/runs: 422 body.items.0.params.x: unknown parameter; body.repetitions: too many\n"
	if got.code != ExitUsage || got.stderr != want {
		t.Errorf("%+v", got)
	}
}

func sse(event string, data any) string {
	b, _ := json.Marshal(data)
	return fmt.Sprintf("event: %s\ndata: %s\n\n", event, b)
}

// resultJSON: a result whose figure is `figure` (its median 3 above: what is printed is the figure).
func resultJSON(run, machine string, figure float64) map[string]any {
	return map[string]any{"id": "res-" + run, "run_id": run, "machine_id": machine, "kernel": "syscall.getppid",
		"params_key": "", "unit": "ns/op", "n": 6, "median": figure + 3, "figure": figure, "ci_low": figure - 1,
		"ci_high": figure + 1, "ci_method": "minmax", "cv": 0.012}
}

func TestRunFollowReadsEventsReconnectsAndPrintsResults(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/machines", 200, twoMachines)
	f.answer("GET /api/v1/kernels", 200, someKernels)
	f.answer("POST /api/v1/runs", 201, runJSON("r1", "m-a", "queued", 0, 0))
	var conns atomic.Int32
	f.mux.HandleFunc("GET /api/v1/runs/r1/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if conns.Add(1) == 1 { // the first stream drops before the end (as a slow reader's does)
			fmt.Fprint(w, sse("run", runJSON("r1", "m-a", "running", 0, 0)), ": keepalive\n\n")
			return
		}
		fmt.Fprint(w, sse("run", runJSON("r1", "m-a", "running", 0, 0)), sse("result", resultJSON("r1", "m-a", 77.05)),
			sse("end", runJSON("r1", "m-a", "succeeded", 1, 0)))
	})
	f.answer("GET /api/v1/runs/r1/results", 200, []any{resultJSON("r1", "m-a", 77.05)})
	got := runCLI(t, f, nil, "", "run", "--machine", "alpha", "--kernel", "syscall.getppid", "--follow")
	if got.code != 0 {
		t.Fatalf("%+v", got)
	}
	if conns.Load() != 2 {
		t.Errorf("%d connections, want 2 (a reconnect)", conns.Load())
	}
	wantOut := "KERNEL           PARAMS  FIGURE  CI                      CV    N  UNIT\n" +
		"syscall.getppid  -       77.05   [76.05, 78.05] min-max  1.2%  6  ns/op\n"
	if got.stdout != wantOut {
		t.Errorf("stdout:\n%s\nwant:\n%s", got.stdout, wantOut)
	}
	for _, line := range []string{
		"run r1 on alpha: running, 0/1 items done", "result syscall.getppid -: 77.05 ns/op",
		"run r1 on alpha: succeeded, 1/1 items done", "run r1 on alpha: succeeded",
	} {
		if !strings.Contains(got.stderr, line+"\n") {
			t.Errorf("stderr lacks %q:\n%s", line, got.stderr)
		}
	}
	if strings.Contains(got.stderr, "\r") {
		t.Errorf("a progress bar without a terminal: %q", got.stderr)
	}
}

func TestRunFollowExits1WhenARunFails(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/machines", 200, twoMachines)
	f.answer("GET /api/v1/kernels", 200, someKernels)
	f.answer("POST /api/v1/runs", 201, map[string]any{"batch_id": "b1", "runs": []any{
		runJSON("r1", "m-a", "running", 0, 0), runJSON("r2", "m-b", "running", 0, 0)}})
	failedItem := map[string]any{"index": 0, "kernel": "syscall.getppid", "params": map[string]any{},
		"state": "failed", "error": "kernel exited 3:\nno pyperf"}
	f.answer("GET /api/v1/runs/r1/events", 200, sse("end", runJSON("r1", "m-a", "succeeded", 1, 0)))
	f.answer("GET /api/v1/runs/r2/events", 200, sse("end", runJSON("r2", "m-b", "failed", 0, 1, failedItem)))
	f.answer("GET /api/v1/runs/r1/results", 200, []any{resultJSON("r1", "m-a", 70)})
	f.answer("GET /api/v1/runs/r2/results", 200, []any{})
	got := runCLI(t, f, nil, "", "run", "--machine", "alpha,beta", "--kernel", "syscall.getppid", "--follow")
	if got.code != ExitFailed {
		t.Fatalf("exit %d: %+v", got.code, got)
	}
	if !strings.HasPrefix(got.stdout, "MACHINE  KERNEL") || !strings.Contains(got.stdout, "alpha    syscall.getppid") {
		t.Errorf("stdout %q", got.stdout)
	}
	if !strings.Contains(got.stderr, "run r2 on beta: failed\n  item 0 syscall.getppid failed: kernel exited 3: no pyperf\n") {
		t.Errorf("stderr %q", got.stderr)
	}
}

func TestRunFollowDrawsABarOnATerminal(t *testing.T) {
	var stderr strings.Builder
	p := &progress{out: &stderr, tty: true, names: map[string]string{}, last: map[string]string{}}
	r := &Run{ID: "r", Status: "running", Progress: Progress{Total: 4, Done: 1, Failed: 1, Running: 1}}
	p.draw(map[string]*Run{"r": r}, []string{"r"})
	p.clear()
	out := stderr.String()
	if !strings.HasPrefix(out, "\r\x1b[K[###############---------------] 2/4 items, 1 failed, 1 running, running") ||
		!strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("%q", out)
	}
}

func TestUnknownRunEventsGiveUp(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/machines", 200, twoMachines)
	f.answer("GET /api/v1/kernels", 200, someKernels)
	f.answer("POST /api/v1/runs", 201, runJSON("r1", "m-a", "queued", 0, 0))
	f.answer("GET /api/v1/runs/r1/events", 404, `{"detail":"unknown run"}`)
	got := runCLI(t, f, nil, "", "run", "--machine", "alpha", "--kernel", "syscall.getppid", "--follow")
	if got.code != ExitUsage || !strings.Contains(got.stderr, "follow run r1: GET /api/v1/runs/r1/events: 404 unknown run") {
		t.Errorf("%+v", got)
	}
}
