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

// A gang's threads live as long as the process measures the same point: started once, parked on a futex
// between rounds, and released together for each round (a short sample is one round). Starting and
// joining `threads` threads for every sample made a gang's samples cost up to twice their timed work in
// wall time. A round's timed window is what it was with fresh threads: every worker woken from the same
// park, none starting before all have been scheduled once.
struct Gang;

struct Worker {
  Gang* gang = nullptr;
  int64_t index = 0;
  bool pinned = false;
  Clock::time_point start, end;
  double cpu_seconds = 0;  // this thread's CPU time around its loop
  SwitchCounts switches;
};

struct Gang {
  int64_t threads = 0;  // workers asked for (set before any starts)
  int cpu = -1;
  int64_t total = 0;  // workers started (set before the first round)
  std::vector<Worker> workers;
  std::vector<pthread_t> tids;
  // This round's work, written before `round` moves on.
  const std::function<void(int64_t, int64_t)>* loop = nullptr;
  int64_t ops = 0;
  bool quit = false;
  // Counters over the gang's life (round r is done when each reaches total * r): no reset between
  // rounds, so a worker late to see one round's counter cannot be confused by the next's.
  std::atomic<uint32_t> parked{0};    // futex word: workers waiting for the next round
  std::atomic<uint32_t> round{0};     // futex word: bumped to release a round
  std::atomic<int64_t> arrived{0};    // released and running
  std::atomic<uint32_t> finished{0};  // futex word: done with their loop
};

void WakeIfLast(std::atomic<uint32_t>* word, uint32_t last) {
  if (word->fetch_add(1) + 1 == last) FutexOp(word, FUTEX_WAKE_PRIVATE, 1);
}

// Waits until *word reaches `want` (a wake from the last one to count, or a 1 ms tick for a gang cut
// short by a failed start).
void WaitFor(std::atomic<uint32_t>* word, uint32_t want) {
  const timespec tick{0, 1000000};
  for (uint32_t v; (v = word->load()) < want;)
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, v, &tick, nullptr, 0);
}

void* WorkerMain(void* arg) {
  auto* w = static_cast<Worker*>(arg);
  Gang& g = *w->gang;
  w->pinned = g.cpu < 0 || PinSelfTo(g.cpu);
  for (uint32_t seen = 0;; ++seen) {
    WakeIfLast(&g.parked, static_cast<uint32_t>(g.threads) * (seen + 1));
    while (g.round.load() == seen) FutexOp(&g.round, FUTEX_WAIT_PRIVATE, seen);
    if (g.quit) return nullptr;
    // Start together: nobody begins until every worker has been woken and scheduled once, so the first
    // ones do not run alone while the rest are still being woken.
    const int64_t all = g.total * static_cast<int64_t>(seen + 1);
    g.arrived.fetch_add(1);
    while (g.arrived.load() < all) sched_yield();
    SwitchCounts before = SwitchesNow(RUSAGE_THREAD);
    const double cpu_before = ThreadCpuSeconds();  // (outside the timed window, as the switch counts are)
    w->start = Clock::now();
    (*g.loop)(w->index, g.ops);
    w->end = Clock::now();
    w->cpu_seconds = ThreadCpuSeconds() - cpu_before;
    w->switches = SwitchesNow(RUSAGE_THREAD) - before;
    WakeIfLast(&g.finished, static_cast<uint32_t>(all));
  }
}

// Releases the parked workers to quit and joins them.
void Disband(Gang* g) {
  WaitFor(&g->parked, static_cast<uint32_t>(g->total) * (g->round.load() + 1));
  g->quit = true;
  g->round.fetch_add(1);
  FutexOp(&g->round, FUTEX_WAKE_PRIVATE, INT32_MAX);
  for (pthread_t t : g->tids) pthread_join(t, nullptr);
  delete g;
}

// The gang of this point, started on first use; empty error when all its workers run (pinned).
Gang* Muster(int64_t threads, int cpu, std::string* error) {
  static Gang* current = nullptr;  // left running at exit: parked threads end with the process
  if (current != nullptr && current->threads == threads && current->cpu == cpu) return current;
  if (current != nullptr) Disband(current);
  current = nullptr;
  auto* g = new Gang;
  g->threads = threads;
  g->cpu = cpu;
  g->workers.resize(static_cast<size_t>(threads));
  g->tids.reserve(g->workers.size());
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);  // 1024 workers need not reserve 8 MiB each
  for (int64_t i = 0; i < threads; ++i) {
    g->workers[i].gang = g;
    g->workers[i].index = i;
    pthread_t t;
    int rc = pthread_create(&t, &attr, WorkerMain, &g->workers[i]);
    if (rc != 0) {
      *error = "unsupported: cannot start " + std::to_string(threads) + " threads: " + std::strerror(rc);
      break;
    }
    g->tids.push_back(t);
  }
  pthread_attr_destroy(&attr);
  g->total = static_cast<int64_t>(g->tids.size());
  // All parked (outside any timing): the last of the planned workers wakes this thread.
  WaitFor(&g->parked, static_cast<uint32_t>(g->total));
  for (int64_t i = 0; i < g->total && error->empty(); ++i)
    if (!g->workers[i].pinned) *error = "unsupported: cannot pin a thread to CPU " + std::to_string(cpu);
  if (!error->empty()) {
    Disband(g);
    return nullptr;
  }
  return current = g;
}

}  // namespace

GangResult RunGang(int64_t threads, int cpu, int64_t ops_per_worker,
                   const std::function<void(int64_t, int64_t)>& loop) {
  GangResult result;
  Gang* g = Muster(threads, cpu, &result.error);
  if (g == nullptr) return result;
  const uint32_t r = g->round.load();
  // All parked again after the last round (outside any timing), then released together.
  WaitFor(&g->parked, static_cast<uint32_t>(g->total) * (r + 1));
  g->loop = &loop;
  g->ops = ops_per_worker;
  g->round.store(r + 1);
  FutexOp(&g->round, FUTEX_WAKE_PRIVATE, INT32_MAX);
  WaitFor(&g->finished, static_cast<uint32_t>(g->total) * (r + 1));

  const std::vector<Worker>& workers = g->workers;
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
