// Command fakekernel is a kernel executable for the agent's tests. It speaks the kernel CLI
// (DESIGN 3.1) and misbehaves on request: each kernel id is one behaviour. Its file name changes what
// --list does: a name containing "broken" fails, one containing "dup" lists a clashing fake.ok.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	args := os.Args[1:]
	if len(args) == 1 && args[0] == "--grandchild" {
		time.Sleep(time.Hour)
		return
	}
	if len(args) == 1 && args[0] == "--list" {
		list()
		return
	}
	if len(args) < 2 || args[0] != "--run" {
		fmt.Fprintln(os.Stderr, "usage: fakekernel --list | --run ID [--param K=V]... [--repetitions N] [--min-time S]")
		os.Exit(2)
	}
	run(args[1], args[2:])
}

func list() {
	name := filepath.Base(os.Args[0])
	if strings.Contains(name, "broken") {
		fmt.Fprintln(os.Stderr, "fakekernel: cannot list, broken on purpose")
		os.Exit(1)
	}
	if strings.Contains(name, "dup") {
		fmt.Println(`[{"id": "fake.ok", "title": "clash", "family": "fake", "unit": "ns/op", "params": []},
		              {"id": "fake.dup_only", "title": "dup only", "family": "fake", "unit": "ns/op"}]`)
		return
	}
	pidfile := `{"name": "pidfile", "type": "string", "default": "", "help": "write pids here"}`
	fmt.Printf(`[
 {"id": "fake.ok", "title": "OK", "family": "fake", "unit": "ns/op", "description": "Prints a valid result.",
  "params": [
   {"name": "n", "type": "int", "default": 3, "min": 1, "max": 100, "sweep": [1, 2, 4], "help": "a count"},
   {"name": "ratio", "type": "float", "default": 0.5, "min": 0, "max": 1, "sweep": [0.25, 1], "help": "a ratio"},
   {"name": "flavor", "type": "choice", "default": "plain", "choices": ["plain", "spicy"], "help": "a choice"},
   {"name": "verbose", "type": "bool", "default": false, "help": "a switch"},
   {"name": "label", "type": "string", "default": "x", "help": "free text"}],
  "seed_reference": {"seed": "000", "value": 49.47, "unit": "ns/op", "machine": "Pentium G2030", "params": {"n": 3}}},
 {"id": "fake.noisy", "title": "noisy until attempt quiet_after+1", "family": "fake", "unit": "ns/op",
  "params": [{"name": "counter", "type": "string", "default": ""},
             {"name": "quiet_after", "type": "int", "default": 0, "min": 0, "max": 100}]},
 {"id": "fake.spin", "title": "spins on one CPU", "family": "fake", "unit": "ms",
  "params": [{"name": "ms", "type": "int", "default": 300, "min": 1, "max": 10000}]},
 {"id": "fake.exit2", "title": "exit 2", "family": "fake", "unit": "ns/op"},
 {"id": "fake.exit3", "title": "exit 3", "family": "fake", "unit": "ns/op"},
 {"id": "fake.badjson", "title": "bad JSON", "family": "fake", "unit": "ns/op"},
 {"id": "fake.crash", "title": "crash", "family": "fake", "unit": "ns/op"},
 {"id": "fake.sleep", "title": "sleeps with a grandchild", "family": "fake", "unit": "ns/op", "params": [%s]},
 {"id": "fake.stubborn", "title": "ignores SIGTERM", "family": "fake", "unit": "ns/op", "params": [%s]},
 {"id": "fake.write", "title": "writes a scratch file in dir", "family": "fake", "unit": "ns/op",
  "params": [{"name": "dir", "type": "string", "default": "/tmp", "help": "scratch directory"}]}
]
`, pidfile, pidfile)
}

func run(id string, rest []string) {
	if os.Getenv("CTXBENCH_AGENT_TOKEN") != "" || os.Getenv("CTXBENCH_AGENT_JOIN_TOKEN") != "" {
		fmt.Fprintln(os.Stderr, "the agent leaked its token into the kernel's environment")
		os.Exit(1)
	}
	params, reps, minTime := parseArgs(rest)
	switch id {
	case "fake.ok":
		fakeOK(id, params, reps, minTime)
	case "fake.write":
		if err := os.WriteFile(filepath.Join(params["dir"], "fake-write.txt"), []byte("x"), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		_ = json.NewEncoder(os.Stdout).Encode(map[string]any{
			"kernel": id, "params": map[string]any{"dir": params["dir"]}, "unit": "ns/op",
			"samples": []float64{1, 2, 3}, "iterations": []int64{1, 1, 1},
			"harness": map[string]any{"name": "fake", "version": "1", "min_time_s": minTime},
		})
	case "fake.noisy":
		// Attempt k (counted in the counter file) prints samples with spread k, so the first attempt
		// has the lowest CV; attempts after quiet_after print identical samples (CV 0).
		b, _ := os.ReadFile(params["counter"])
		k, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		k++
		_ = os.WriteFile(params["counter"], []byte(strconv.Itoa(k)), 0o600)
		quietAfter, _ := strconv.Atoi(params["quiet_after"])
		spread := float64(k)
		if k > quietAfter {
			spread = 0
		}
		samples := []float64{10, 10 + spread, 10, 10 + spread}
		_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"kernel": id, "unit": "ns/op", "samples": samples,
			"params": map[string]any{"attempt": k}})
	case "fake.spin":
		fakeSpin(id, params, reps)
	case "fake.exit2":
		fmt.Fprintln(os.Stderr, "warming up")
		fmt.Fprintln(os.Stderr, "bad argument: --param threads=0 is below 1")
		os.Exit(2)
	case "fake.exit3":
		fmt.Fprintln(os.Stderr, "greenlet is not installed")
		os.Exit(3)
	case "fake.badjson":
		fmt.Println(`{"kernel": "fake.badjson", "samples": [1, 2,`)
	case "fake.crash":
		debug.SetTraceback("crash") // the runtime dies by SIGABRT instead of exiting 2
		panic("about to crash")
	case "fake.sleep", "fake.stubborn":
		sleepWithGrandchild(id, params)
	default:
		fmt.Fprintf(os.Stderr, "unknown kernel %s\n", id)
		os.Exit(2)
	}
}

// sampleTime is --sample-time as given (0: not given); fake.ok then reports short samples.
var sampleTime float64

// parseArgs reads --param, --repetitions, --min-time and --sample-time (exit 2 on anything else).
func parseArgs(rest []string) (map[string]string, int, float64) {
	params := map[string]string{}
	reps, minTime := 3, 0.0
	for i := 0; i < len(rest); i++ {
		if i+1 >= len(rest) {
			fmt.Fprintf(os.Stderr, "flag %s needs a value\n", rest[i])
			os.Exit(2)
		}
		v := rest[i+1]
		switch rest[i] {
		case "--param":
			k, val, ok := strings.Cut(v, "=")
			if !ok {
				fmt.Fprintf(os.Stderr, "bad --param %q\n", v)
				os.Exit(2)
			}
			params[k] = val
		case "--repetitions":
			reps, _ = strconv.Atoi(v)
		case "--min-time":
			minTime, _ = strconv.ParseFloat(v, 64)
		case "--sample-time":
			sampleTime, _ = strconv.ParseFloat(v, 64)
		default:
			fmt.Fprintf(os.Stderr, "unknown flag %s\n", rest[i])
			os.Exit(2)
		}
		i++
	}
	return params, reps, minTime
}

func fakeOK(id string, params map[string]string, reps int, minTime float64) {
	n, _ := strconv.Atoi(params["n"])
	ratio, _ := strconv.ParseFloat(params["ratio"], 64)
	samples := make([]float64, reps)
	iters := make([]int64, reps)
	for i := range samples {
		samples[i] = 10 + float64(i)
		iters[i] = 1000
	}
	out := map[string]any{
		"kernel": id,
		"params": map[string]any{"n": n, "ratio": ratio, "flavor": params["flavor"],
			"verbose": params["verbose"] == "true", "label": params["label"]},
		"unit":       "ns/op",
		"samples":    samples,
		"iterations": iters,
		"counters":   map[string]float64{"voluntary_ctxsw_per_op": 0},
		"harness":    map[string]any{"name": "fake", "version": "1", "min_time_s": minTime},
	}
	if sampleTime > 0 {
		// blocks of 10 short samples of 100 ops, the first block's samples 3 of them disturbed
		disturbed := make([]int, reps)
		disturbed[0] = 3
		for i := range iters {
			iters[i] = 1000
		}
		out["sampling"] = map[string]any{"estimator": "p5", "sample_time_s": sampleTime, "sample_ops": 100,
			"samples_per_repetition": 10, "disturbed": disturbed}
	}
	fmt.Fprintln(os.Stderr, "fake.ok: some chatter on stderr")
	_ = json.NewEncoder(os.Stdout).Encode(out)
}

// fakeSpin spins for ms of wall time per repetition; cpu_wall_ratio is the process's CPU over wall.
func fakeSpin(id string, params map[string]string, reps int) {
	ms, _ := strconv.Atoi(params["ms"])
	samples := make([]float64, reps)
	start := time.Now()
	for i := range samples {
		t0 := time.Now()
		for x := 0; time.Since(t0) < time.Duration(ms)*time.Millisecond; x++ {
		}
		samples[i] = float64(time.Since(t0).Microseconds()) / 1000
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"kernel": id, "unit": "ms", "samples": samples,
		"counters": map[string]float64{"cpu_wall_ratio": cpu.Seconds() / time.Since(start).Seconds()}})
}

// sleepWithGrandchild starts a grandchild that holds the stderr pipe, writes both pids, and sleeps
// (fake.stubborn ignores SIGTERM).
func sleepWithGrandchild(id string, params map[string]string) {
	if id == "fake.stubborn" {
		signal.Ignore(syscall.SIGTERM)
	}
	gc := exec.Command(os.Args[0], "--grandchild")
	gc.Stderr = os.Stderr // holds the kernel's stderr pipe open, like a real helper process would
	if err := gc.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "start grandchild:", err)
		os.Exit(1)
	}
	if pf := params["pidfile"]; pf != "" {
		data := fmt.Sprintf("%d\n%d\n", os.Getpid(), gc.Process.Pid)
		if err := os.WriteFile(pf+".tmp", []byte(data), 0o600); err == nil {
			_ = os.Rename(pf+".tmp", pf)
		}
	}
	time.Sleep(time.Hour)
}
