#include "workers.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ctxbench {
namespace {

using Clock = std::chrono::steady_clock;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

long FutexOp(std::atomic<uint32_t>* word, int op, uint32_t val) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, nullptr, nullptr, 0);
}

struct Gang {
  const std::function<void(int64_t, int64_t)>* loop = nullptr;
  int cpu = -1;
  int64_t ops = 0;
  int64_t planned = 0;               // workers to start
  int64_t total = 0;                 // workers started
  std::atomic<uint32_t> ready{0};    // futex word: parked, waiting for the release
  std::atomic<int64_t> arrived{0};   // released and running
  std::atomic<uint32_t> release{0};  // futex word: 0 parked, 1 go, 2 abort
};

struct Worker {
  Gang* gang = nullptr;
  int64_t index = 0;
  bool pinned = false;
  Clock::time_point start, end;
  double cpu_seconds = 0;  // this thread's CPU time around its loop
  SwitchCounts switches;
};

void* WorkerMain(void* arg) {
  auto* w = static_cast<Worker*>(arg);
  Gang& g = *w->gang;
  w->pinned = g.cpu < 0 || PinSelfTo(g.cpu);
  if (g.ready.fetch_add(1) + 1 == static_cast<uint32_t>(g.planned)) FutexOp(&g.ready, FUTEX_WAKE_PRIVATE, 1);
  while (g.release.load() == 0) FutexOp(&g.release, FUTEX_WAIT_PRIVATE, 0);
  if (g.release.load() != 1 || !w->pinned) return nullptr;
  // Start together: nobody begins until every worker has been woken and scheduled once, so the first
  // ones do not run alone while the rest are still being woken.
  g.arrived.fetch_add(1);
  while (g.arrived.load() < g.total) sched_yield();
  SwitchCounts before = SwitchesNow(RUSAGE_THREAD);
  const double cpu_before = ThreadCpuSeconds();  // (outside the timed window, as the switch counts are)
  w->start = Clock::now();
  (*g.loop)(w->index, g.ops);
  w->end = Clock::now();
  w->cpu_seconds = ThreadCpuSeconds() - cpu_before;
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
  gang.planned = threads;
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
  gang.total = static_cast<int64_t>(tids.size());
  // All parked (outside any timing): the last of the planned workers wakes this thread; the timeout
  // covers a gang cut short by a failed start.
  const timespec tick{0, 1000000};
  for (uint32_t r; (r = gang.ready.load()) < static_cast<uint32_t>(gang.total);)
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&gang.ready), FUTEX_WAIT_PRIVATE, r, &tick, nullptr, 0);
  for (const Worker& w : workers)
    if (w.gang && !w.pinned && result.error.empty() && &w - workers.data() < gang.total)
      result.error = "unsupported: cannot pin a thread to CPU " + std::to_string(cpu);
  gang.release.store(result.error.empty() ? 1 : 2);
  FutexOp(&gang.release, FUTEX_WAKE_PRIVATE, INT32_MAX);
  for (pthread_t t : tids) pthread_join(t, nullptr);
  if (!result.error.empty()) return result;

  Clock::time_point first = workers[0].start, last = workers[0].end;
  for (const Worker& w : workers) {
    first = std::min(first, w.start);
    last = std::max(last, w.end);
    result.switches = result.switches + w.switches;
    result.busy_seconds += std::chrono::duration<double>(w.end - w.start).count();
    result.cpu_seconds += w.cpu_seconds;
  }
  result.seconds = std::chrono::duration<double>(last - first).count();
  return result;
}

bool RunGangBenchmark(benchmark::State& state, int64_t threads, int cpu,
                      const std::function<void(int64_t, int64_t)>& loop) {
  const int64_t ops_per_worker = state.max_iterations * kGangOpsPerIteration;
  GangResult r;
  while (state.KeepRunningBatch(state.max_iterations)) {  // one batch of exactly max_iterations
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
  // One thread pinned to one CPU: the share of it the thread ran (its CPU time over the wall), the OS's
  // count of what other tasks took there (about 1 on a quiet CPU for a thread that never blocks). With
  // more threads their start skew and their own switches are accounted to none of them, so the share
  // would not tell the host's part from theirs: not given.
  if (cpu >= 0 && threads == 1 && r.seconds > 0) state.counters["cpu_share"] = r.cpu_seconds / r.seconds;
  return true;
}

bool RunGangKernel(benchmark::State& state, const Params& params,
                   const std::function<void(int64_t, int64_t)>& loop) {
  int cpu = -1;
  std::string why = GangCpu(params, &cpu);
  if (!why.empty()) {
    state.SkipWithError(why.c_str());
    return false;
  }
  return RunGangBenchmark(state, GetInt(params, "threads"), cpu, loop);
}

Kernel GangKernel(KernelSpec spec, std::function<void(benchmark::State&, const Params&)> body, bool never_blocks) {
  spec.params.insert(spec.params.begin(), {ThreadsParam(), GangPlacementParam()});
  return Kernel{.spec = std::move(spec),
                .body = std::move(body),
                .manual_time = true,
                .ops_per_iteration = GangOpsPerIteration,
                .unsupported = GangUnsupported,
                .never_blocks = never_blocks};
}

SeedReference GangSeed000(double value, std::string threads, std::string note) {
  return Seed("000", value, kSeed000MachineCores, {{"threads", std::move(threads)}, {"placement", "unpinned"}},
              std::move(note));
}

double GangOpsPerIteration(const Params& params) {
  return static_cast<double>(GetInt(params, "threads") * kGangOpsPerIteration);
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
