#include "process_gang.h"

#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <new>
#include <vector>

namespace ctxbench {
namespace {

struct ChildSlot {
  int64_t start_ns = 0, end_ns = 0;
  int64_t voluntary = 0, involuntary = 0;
  int32_t init_ok = 0, done = 0;
};

struct GangShared {
  std::atomic<uint32_t> ready{0};  // futex word (shared): children parked, waiting for the release
  std::atomic<int64_t> arrived{0};
  std::atomic<uint32_t> release{0};  // futex word (shared): 0 parked, 1 go, 2 abort
  ChildSlot slots[kMaxGangProcesses];
};

int64_t NowNs() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

long Futex(std::atomic<uint32_t>* word, int op, uint32_t val) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, nullptr, nullptr, 0);
}

[[noreturn]] void ChildMain(GangShared* g, int64_t index, int64_t total, int64_t ops, pid_t parent,
                            const std::function<bool(int64_t)>& init,
                            const std::function<void(int64_t, int64_t)>& loop) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  ChildSlot& slot = g->slots[index];
  slot.init_ok = init(index) ? 1 : 0;
  if (g->ready.fetch_add(1) + 1 == static_cast<uint32_t>(total)) Futex(&g->ready, FUTEX_WAKE, 1);
  while (g->release.load() == 0) Futex(&g->release, FUTEX_WAIT, 0);
  if (g->release.load() != 1 || !slot.init_ok) _exit(1);
  // Start together: nobody begins until every child has been woken and scheduled once.
  g->arrived.fetch_add(1);
  while (g->arrived.load() < total) sched_yield();
  struct rusage before {}, after {};
  getrusage(RUSAGE_SELF, &before);
  slot.start_ns = NowNs();
  loop(index, ops);
  slot.end_ns = NowNs();
  getrusage(RUSAGE_SELF, &after);
  slot.voluntary = after.ru_nvcsw - before.ru_nvcsw;
  slot.involuntary = after.ru_nivcsw - before.ru_nivcsw;
  slot.done = 1;
  _exit(0);
}

}  // namespace

ProcessGangResult RunProcessGang(int64_t processes, int64_t ops_per_process,
                                 const std::function<bool(int64_t)>& init,
                                 const std::function<void(int64_t, int64_t)>& loop) {
  ProcessGangResult result;
  void* page = mmap(nullptr, sizeof(GangShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    result.error = "mmap failed";
    return result;
  }
  auto* g = new (page) GangShared();
  const pid_t parent = getpid();
  std::vector<pid_t> pids;
  for (int64_t i = 0; i < processes; ++i) {
    pid_t pid = fork();
    if (pid == 0) ChildMain(g, i, processes, ops_per_process, parent, init, loop);
    if (pid < 0) {
      result.error = "unsupported: cannot fork " + std::to_string(processes) + " processes: " + std::strerror(errno);
      break;
    }
    pids.push_back(pid);
  }
  // Wait until every child is parked (the last one wakes this process) or one is gone (looked for every
  // millisecond); a child that died early fails the run.
  const timespec tick{0, 1000000};
  for (uint32_t r; result.error.empty() && (r = g->ready.load()) < static_cast<uint32_t>(processes);) {
    for (pid_t pid : pids) {
      siginfo_t info{};
      if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0)
        result.error = "a child process died before the start";
    }
    if (result.error.empty())
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g->ready), FUTEX_WAIT, r, &tick, nullptr, 0);
  }
  for (int64_t i = 0; result.error.empty() && i < processes; ++i)
    if (!g->slots[i].init_ok) result.error = "a child process could not set up its lock";
  g->release.store(result.error.empty() ? 1 : 2);
  Futex(&g->release, FUTEX_WAKE, INT_MAX);
  if (!result.error.empty())
    for (pid_t pid : pids) kill(pid, SIGKILL);
  for (pid_t pid : pids) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (result.error.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      result.error = "a child process failed";
  }
  if (result.error.empty()) {
    int64_t first = g->slots[0].start_ns, last = g->slots[0].end_ns;
    for (int64_t i = 0; i < processes; ++i) {
      const ChildSlot& s = g->slots[i];
      first = std::min(first, s.start_ns);
      last = std::max(last, s.end_ns);
      result.switches.voluntary += s.voluntary;
      result.switches.involuntary += s.involuntary;
    }
    result.seconds = static_cast<double>(last - first) / 1e9;
  }
  g->~GangShared();
  munmap(page, sizeof(GangShared));
  return result;
}

}  // namespace ctxbench
