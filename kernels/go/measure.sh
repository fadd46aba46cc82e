#!/bin/bash
# Takes the figures kernels/go/README.md quotes: each kernel at its defaults (5 repetitions, 0.2 s) and
# at the seeds' parameter points, with the built executable. Prints median, min, max and the counters.
# Usage (from the repository root, after `make kernels-go`): kernels/go/measure.sh
set -euo pipefail
E=${CTXBENCH_KERNELS_GO:-build/kernels/ctxbench-kernels-go}
m() {
  echo "## $* (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  "$E" --run "$@" | python3 -c '
import json, statistics, sys
d = json.load(sys.stdin)
s = d["samples"]
print("median", round(statistics.median(s), 1), "min", round(min(s), 1), "max", round(max(s), 1), d["unit"],
      [round(x, 1) for x in s])
print("  counters", {k: round(v, 4) for k, v in d["counters"].items()})'
}
m goroutine.create
m goroutine.create --param batch=10000
m sched.gosched
m sched.gosched --param goroutines=16384
m channel.pingpong
m channel.pingpong --param goroutines=30000
m channel.pingpong --param goroutines=30000 --param procs=2
m channel.pingpong --param goroutines=30000 --param topology=pairs
m lock.go_mutex
m lock.go_mutex --param procs=2
m goroutine.memory
m goroutine.memory --param goroutines=30000
