// A gang of N forked processes released together, for kernels whose op runs in N processes at once
// (lock.* across processes). Each child dies with the parent (PR_SET_PDEATHSIG) and is reaped on every
// path. Used with UseManualTime: the time is from the first child's start to the last one's finish.
#pragma once

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host.h"

namespace ctxbench {

constexpr int64_t kMaxGangProcesses = 128;

struct ProcessGangResult {
  double seconds = 0;     // earliest child start to latest child finish
  SwitchCounts switches;  // summed over the children's timed loops
  std::string error;      // empty when every child ran its loop
};

// A gang forked once and released for each round (a short sample is one round): forking and reaping
// `processes` children for every sample made a sample cost several times its timed work in wall time.
// Each child runs init(index) once (false: it cannot take part, e.g. a file would not open), then, per
// round, waits for the release and runs loop(index, ops). init and loop are kept, so what they refer to
// must live as long as the gang. Children must not return from loop by throwing.
struct ProcessGangShared;

class ProcessGang {
 public:
  ProcessGang(int64_t processes, std::function<bool(int64_t)> init, std::function<void(int64_t, int64_t)> loop);
  ~ProcessGang();  // the children told to exit, and reaped
  ProcessGang(const ProcessGang&) = delete;
  ProcessGang& operator=(const ProcessGang&) = delete;

  // One round of ops_per_process on every child. After an error the gang is gone (its children killed):
  // every later round returns that error.
  ProcessGangResult Round(int64_t ops_per_process);
  int64_t processes() const { return processes_; }

 private:
  void Fail(const std::string& why);
  bool Wait(std::atomic<uint32_t>* word, uint32_t want);

  int64_t processes_;
  std::function<bool(int64_t)> init_;
  std::function<void(int64_t, int64_t)> loop_;
  struct ProcessGangShared* shared_ = nullptr;
  std::vector<int> pids_;
  uint32_t rounds_ = 0;
  std::string error_;
};

// Ops each process does per benchmark iteration (a floor under the work per process).
constexpr int64_t kProcessOpsPerIteration = 16;

}  // namespace ctxbench
