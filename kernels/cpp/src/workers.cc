#include "workers.h"

#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <vector>

namespace ctxbench {
namespace {

using Clock = std::chrono::steady_clock;

struct Gang {
  const std::function<void(int64_t, int64_t)>* loop = nullptr;
  int cpu = -1;
  int64_t ops = 0;
  std::mutex mu;
  std::condition_variable cv;
  int64_t ready = 0;
  bool go = false;
  bool abort = false;
};

struct Worker {
  Gang* gang = nullptr;
  int64_t index = 0;
  bool pinned = false;
  Clock::time_point start, end;
  SwitchCounts switches;
};

void* WorkerMain(void* arg) {
  auto* w = static_cast<Worker*>(arg);
  Gang& g = *w->gang;
  w->pinned = g.cpu < 0 || PinSelfTo(g.cpu);
  {
    std::unique_lock<std::mutex> lock(g.mu);
    ++g.ready;
    g.cv.notify_all();
    g.cv.wait(lock, [&] { return g.go || g.abort; });
    if (g.abort || !w->pinned) return nullptr;
  }
  SwitchCounts before = SwitchesNow(RUSAGE_THREAD);
  w->start = Clock::now();
  (*g.loop)(w->index, g.ops);
  w->end = Clock::now();
  w->switches = SwitchesNow(RUSAGE_THREAD) - before;
  return nullptr;
}

}  // namespace

GangResult RunGang(int64_t threads, int cpu, int64_t ops_per_worker,
                   const std::function<void(int64_t, int64_t)>& loop) {
  GangResult result;
  Gang gang;
  gang.loop = &loop;
  gang.cpu = cpu;
  gang.ops = ops_per_worker;
  std::vector<Worker> workers(static_cast<size_t>(threads));
  std::vector<pthread_t> tids;
  tids.reserve(workers.size());
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);  // 1024 workers need not reserve 8 MiB each
  for (int64_t i = 0; i < threads; ++i) {
    workers[i].gang = &gang;
    workers[i].index = i;
    pthread_t t;
    int rc = pthread_create(&t, &attr, WorkerMain, &workers[i]);
    if (rc != 0) {
      result.error = "unsupported: cannot start " + std::to_string(threads) + " threads: " + std::strerror(rc);
      break;
    }
    tids.push_back(t);
  }
  pthread_attr_destroy(&attr);
  {
    std::unique_lock<std::mutex> lock(gang.mu);
    gang.cv.wait(lock, [&] { return gang.ready == static_cast<int64_t>(tids.size()); });
    if (result.error.empty()) gang.go = true;
    else gang.abort = true;
  }
  gang.cv.notify_all();
  for (pthread_t t : tids) pthread_join(t, nullptr);
  if (!result.error.empty()) return result;

  Clock::time_point first = workers[0].start, last = workers[0].end;
  for (const Worker& w : workers) {
    if (!w.pinned) {
      result.error = "unsupported: cannot pin a thread to CPU " + std::to_string(cpu);
      return result;
    }
    first = std::min(first, w.start);
    last = std::max(last, w.end);
    result.switches = result.switches + w.switches;
    result.busy_seconds += std::chrono::duration<double>(w.end - w.start).count();
  }
  result.seconds = std::chrono::duration<double>(last - first).count();
  return result;
}

bool RunGangBenchmark(benchmark::State& state, int64_t threads, int cpu,
                      const std::function<void(int64_t, int64_t)>& loop) {
  const int64_t ops_per_worker = state.max_iterations;
  GangResult r;
  while (state.KeepRunningBatch(ops_per_worker)) {  // one batch of exactly max_iterations
    r = RunGang(threads, cpu, ops_per_worker, loop);
    if (!r.error.empty()) {
      state.SkipWithError(r.error.c_str());
      continue;
    }
    state.SetIterationTime(r.seconds);
  }
  if (state.error_occurred()) return false;
  const double ops = static_cast<double>(threads * ops_per_worker);
  state.counters["voluntary_ctxsw_per_op"] = static_cast<double>(r.switches.voluntary) / ops;
  state.counters["involuntary_ctxsw_per_op"] = static_cast<double>(r.switches.involuntary) / ops;
  state.counters["ctxsw_per_op"] = static_cast<double>(r.switches.voluntary + r.switches.involuntary) / ops;
  state.counters["cpu"] = cpu;
  state.counters["overlap"] = r.seconds > 0 ? r.busy_seconds / r.seconds : 0.0;
  return true;
}

ParamSpec ThreadsParam() {
  return IntParam("threads", 1, 1, 1024, {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024},
                  "threads doing the op at the same time");
}

ParamSpec GangPlacementParam() {
  return ChoiceParam("placement", "same_core", {"same_core", "unpinned"},
                     "same_core: every thread pinned to one CPU; unpinned: the scheduler spreads them");
}

std::string GangCpu(const Params& params, int* cpu) {
  Placement p;
  std::string why = ChoosePlacement(GetString(params, "placement"), &p);
  *cpu = p.cpu_a;
  return why;
}

std::string GangUnsupported(const Params& params) {
  int cpu = -1;
  std::string why = GangCpu(params, &cpu);
  if (!why.empty()) return why;
  if (cpu >= 0 && !PinSelfTo(cpu)) {
    std::string msg = "cannot pin to CPU " + std::to_string(cpu) + ": " + std::strerror(errno);
    RestoreAffinity();
    return msg;
  }
  RestoreAffinity();
  return "";
}

}  // namespace ctxbench
