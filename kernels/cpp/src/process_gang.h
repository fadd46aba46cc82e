// A gang of N forked processes released together, for kernels whose op runs in N processes at once
// (lock.* across processes). Each child dies with the parent (PR_SET_PDEATHSIG) and is reaped on every
// path. Used with UseManualTime: the time is from the first child's start to the last one's finish.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <string>

#include "host.h"

namespace ctxbench {

constexpr int64_t kMaxGangProcesses = 128;

struct ProcessGangResult {
  double seconds = 0;     // earliest child start to latest child finish
  SwitchCounts switches;  // summed over the children's timed loops
  std::string error;      // empty when every child ran its loop
};

// Forks `processes` children. Each runs init(index) (false: it cannot take part, e.g. a file would not
// open), waits for the release, then loop(index, ops). Children must not return from loop by throwing.
ProcessGangResult RunProcessGang(int64_t processes, int64_t ops_per_process,
                                 const std::function<bool(int64_t)>& init,
                                 const std::function<void(int64_t, int64_t)>& loop);

// Ops each process does per benchmark iteration (a floor under the work per process).
constexpr int64_t kProcessOpsPerIteration = 16;

}  // namespace ctxbench
