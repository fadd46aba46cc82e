// A gang of worker threads released together, for kernels whose op runs on N threads at once
// (sched.yield, sleep.usleep0, lock.pthread_mutex). Used with UseManualTime: one benchmark iteration
// is kGangOpsPerIteration ops on every worker, and the time is from the first worker's start to the
// last one's finish.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <string>

#include "host.h"
#include "registry.h"

namespace ctxbench {

// Ops each worker does per benchmark iteration: a floor under the work per worker, so the start and
// finish skew of many threads stays small even when Google Benchmark settles on a few iterations.
constexpr int64_t kGangOpsPerIteration = 16;

// Ops in one benchmark iteration of a gang kernel (for Kernel::ops_per_iteration).
double GangOpsPerIteration(const Params& params);

struct GangResult {
  double seconds = 0;       // earliest worker start to latest worker finish
  double busy_seconds = 0;  // sum of each worker's own start-to-finish time
  double cpu_seconds = 0;   // sum of each worker's own CPU time over its loop
  SwitchCounts switches;    // summed over the workers (RUSAGE_THREAD around each worker's loop)
  std::string error;        // empty when every worker ran
};

// Starts `threads` workers (pinned to `cpu` unless it is -1), releases them together, and has each call
// loop(worker_index, ops_per_worker) once.
GangResult RunGang(int64_t threads, int cpu, int64_t ops_per_worker,
                   const std::function<void(int64_t, int64_t)>& loop);

// The common body: runs the gang for state.max_iterations * kGangOpsPerIteration ops per worker, sets the manual time and the
// switch counters (per op, op = one loop step on one worker), `overlap`: the workers' summed
// start-to-finish time over the wall time (about `threads` when all ran side by side, 1 when they ran
// one after another), and, one thread pinned to one CPU, `cpu_share`: its CPU time over the wall time.
// Returns false after SkipWithError.
bool RunGangBenchmark(benchmark::State& state, int64_t threads, int cpu,
                      const std::function<void(int64_t, int64_t)>& loop);

// A gang kernel's body: places the gang by its "placement" parameter and runs RunGangBenchmark with
// "threads" workers. Returns false after SkipWithError.
bool RunGangKernel(benchmark::State& state, const Params& params,
                   const std::function<void(int64_t, int64_t)>& loop);

// A gang kernel: parameters ThreadsParam and GangPlacementParam (before any in spec.params), manual time,
// GangOpsPerIteration ops per benchmark iteration, GangUnsupported; never_blocks: Kernel::never_blocks.
Kernel GangKernel(KernelSpec spec, std::function<void(benchmark::State&, const Params&)> body,
                  bool never_blocks = false);

// Seed 000's figure for a gang kernel: its t_*.c programs ran `threads` threads, unpinned.
SeedReference GangSeed000(double value, std::string threads, std::string note);

// "threads" (1..1024, swept 1, 2, 4, ..., 1024) and "placement" (same_core | unpinned) parameters.
ParamSpec ThreadsParam();
ParamSpec GangPlacementParam();
// CPU for the gang's placement (-1 unpinned); empty return = ok, else why not (exit 3).
std::string GangCpu(const Params& params, int* cpu);
std::string GangUnsupported(const Params& params);

}  // namespace ctxbench
