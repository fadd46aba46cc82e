package kernels

// goroutine.memory (family goroutine) measures the memory one parked goroutine keeps: stack spans
// (StackInuse) plus heap spans (HeapInuse: its g struct, the sudog it waits with) grown after N goroutines
// block on one channel, divided by N, both read after a forced GC. No switches are timed. Seed 002
// reports about 300 MB for 30000 goroutines, each also holding two buffered channels, on a Windows home
// machine: ~10 KB per goroutine.
//
// Why not testing.Benchmark: this is a size, not a time. Why a child process per sample: the runtime
// never frees a g struct (dead goroutines wait on a free list for reuse), so a second measurement in the
// same process would reuse the first one's g structs and miss their size. Each sample re-executes this
// executable with ctxbenchChildEnv set, which measures once in a fresh runtime and prints JSON.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"

	"github.com/ctxbench/ctxbench/kernels/go/internal/harness"
	"github.com/ctxbench/ctxbench/kernels/go/internal/spec"
)

// ctxbenchChildEnv, when set to "goroutine_memory:N", turns this executable into a one-sample child.
const ctxbenchChildEnv = "CTXBENCH_GO_KERNEL_CHILD"

func goroutineMemory() Kernel {
	return Kernel{
		Spec: spec.Kernel{
			ID:     "goroutine.memory",
			Title:  "Memory per parked goroutine",
			Family: "goroutine",
			Unit:   "bytes/goroutine",
			Description: "Parks N goroutines on one channel and reports the growth of the Go runtime's stack " +
				"and heap spans in use (runtime.MemStats StackInuse + HeapInuse, each read after a forced GC) " +
				"divided by N. Each sample runs in a fresh child process because the runtime keeps and reuses " +
				"the g structs of exited goroutines; iterations is N and --min-time does not apply. No switches " +
				"are timed; counters split the figure into stack and heap and add the resident-set growth.",
			Params: []spec.Param{
				spec.IntParam("goroutines", 10000, 1, 100000, []int64{1000, 10000, 30000, 100000},
					"goroutines parked at once; small counts are quantised by span sizes (8 KiB heap, 32 KiB stack)"),
			},
			SeedReference: &spec.SeedReference{
				Seed:    "002",
				Value:   10486,
				Unit:    "bytes/goroutine",
				Machine: "the author's Windows home machine (CPU not named), Go of about 2017",
				Params:  map[string]string{"goroutines": "30000"},
				Note: "\"30000 goroutines use only 300MB\": 300 MiB / 30000; process memory as the write-up " +
					"saw it, with each goroutine also holding two buffered channels.",
			},
		},
		New: func(v spec.Values) (*harness.Case, error) {
			n := v.Int("goroutines")
			exe, err := os.Executable()
			if err != nil {
				return nil, &UnsupportedError{Why: fmt.Sprintf("goroutine.memory cannot find its own executable to re-run: %v", err)}
			}
			return &harness.Case{Measure: func() (float64, int64, map[string]float64, error) {
				return memoryChildSample(exe, n)
			}}, nil
		},
	}
}

// memoryReport is what a child prints: growth in bytes while N goroutines are parked.
type memoryReport struct {
	Goroutines    int64   `json:"goroutines"`
	StackBytes    float64 `json:"stack_bytes"`
	HeapBytes     float64 `json:"heap_bytes"`
	RSSBytes      float64 `json:"rss_bytes"`
	HasRSS        bool    `json:"has_rss"`
	StartingStack float64 `json:"starting_stack"`
}

func memoryChildSample(exe string, n int64) (float64, int64, map[string]float64, error) {
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=goroutine_memory:%d", ctxbenchChildEnv, n))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		line, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return 0, 0, nil, &harness.CheckError{Msg: fmt.Sprintf("goroutine.memory child failed: %v: %s", err, line)}
	}
	var r memoryReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return 0, 0, nil, &harness.CheckError{Msg: fmt.Sprintf("goroutine.memory child printed no report: %v", err)}
	}
	if r.Goroutines != n {
		return 0, 0, nil, &harness.CheckError{Msg: fmt.Sprintf("goroutine.memory child parked %d goroutines, want %d", r.Goroutines, n)}
	}
	per := float64(n)
	counters := map[string]float64{
		"stack_bytes_per_goroutine": r.StackBytes / per,
		"heap_bytes_per_goroutine":  r.HeapBytes / per,
		"stack_starting_size_bytes": r.StartingStack,
	}
	if r.HasRSS {
		counters["rss_bytes_per_goroutine"] = r.RSSBytes / per
	}
	return (r.StackBytes + r.HeapBytes) / per, n, counters, nil
}

// RunChild runs the one-sample child when this process was started as one; ok is false otherwise.
func RunChild(stdout, stderr io.Writer) (code int, ok bool) {
	val, set := os.LookupEnv(ctxbenchChildEnv)
	if !set {
		return 0, false
	}
	kind, count, _ := strings.Cut(val, ":")
	n, err := strconv.ParseInt(count, 10, 64)
	if kind != "goroutine_memory" || err != nil || n < 1 {
		fmt.Fprintf(stderr, "bad %s=%q\n", ctxbenchChildEnv, val)
		return 2, true
	}
	r := measureParked(n)
	if err := json.NewEncoder(stdout).Encode(r); err != nil {
		fmt.Fprintf(stderr, "write report: %v\n", err)
		return 1, true
	}
	return 0, true
}

type memUse struct{ stack, heap, rss float64 }

func readMemUse() (memUse, bool) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	u := memUse{stack: float64(ms.StackInuse), heap: float64(ms.HeapInuse)}
	rss, ok := residentBytes()
	u.rss = rss
	return u, ok
}

// residentBytes reads the resident set size from /proc/self/statm (Linux); ok is false elsewhere.
func residentBytes() (float64, bool) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseFloat(fields[1], 64)
	if err != nil {
		return 0, false
	}
	return pages * float64(os.Getpagesize()), true
}

func measureParked(n int64) memoryReport {
	runtime.GC()
	before, rssOK := readMemUse()
	release := make(chan struct{})
	var started, exited sync.WaitGroup
	started.Add(int(n))
	exited.Add(int(n))
	for i := int64(0); i < n; i++ {
		go parked(&started, &exited, release)
	}
	started.Wait()
	runtime.GC()
	after, _ := readMemUse()
	alive := int64(runtime.NumGoroutine()) - 1 // less this one
	close(release)
	exited.Wait()

	r := memoryReport{
		Goroutines: min(alive, n),
		StackBytes: after.stack - before.stack,
		HeapBytes:  after.heap - before.heap,
		RSSBytes:   after.rss - before.rss,
		HasRSS:     rssOK,
	}
	s := []metrics.Sample{{Name: "/gc/stack/starting-size:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		r.StartingStack = float64(s[0].Value.Uint64())
	}
	return r
}

func parked(started, exited *sync.WaitGroup, release <-chan struct{}) {
	started.Done()
	<-release
	exited.Done()
}
