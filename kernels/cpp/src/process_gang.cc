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

struct ChildSlot {
  int64_t start_ns = 0, end_ns = 0;
  int64_t voluntary = 0, involuntary = 0;
  int32_t init_ok = 0;
};

// In memory shared with the children. The counters run over the gang's life (round r is done when
// each reaches processes * r): nothing is reset between rounds.
struct ProcessGangShared {
  std::atomic<uint32_t> parked{0};    // futex word: children waiting for the next round
  std::atomic<uint32_t> round{0};     // futex word: bumped to release a round
  std::atomic<int64_t> arrived{0};    // released and running
  std::atomic<uint32_t> finished{0};  // futex word: done with their loop
  int64_t ops = 0;                    // this round's ops per child, written before the release
  int32_t quit = 0;                   // set before the last release: the children exit
  ChildSlot slots[kMaxGangProcesses];
};

namespace {

int64_t NowNs() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

long Futex(std::atomic<uint32_t>* word, int op, uint32_t val) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, nullptr, nullptr, 0);
}

void WakeIfLast(std::atomic<uint32_t>* word, uint32_t last) {
  if (word->fetch_add(1) + 1 == last) Futex(word, FUTEX_WAKE, 1);
}

[[noreturn]] void ChildMain(ProcessGangShared* g, int64_t index, int64_t total, pid_t parent,
                            const std::function<bool(int64_t)>& init,
                            const std::function<void(int64_t, int64_t)>& loop) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  ChildSlot& slot = g->slots[index];
  slot.init_ok = init(index) ? 1 : 0;
  for (uint32_t seen = 0;; ++seen) {
    WakeIfLast(&g->parked, static_cast<uint32_t>(total) * (seen + 1));
    while (g->round.load() == seen) Futex(&g->round, FUTEX_WAIT, seen);
    if (g->quit || !slot.init_ok) _exit(g->quit ? 0 : 1);
    // Start together: nobody begins until every child has been woken and scheduled once.
    const int64_t all = total * static_cast<int64_t>(seen + 1);
    g->arrived.fetch_add(1);
    while (g->arrived.load() < all) sched_yield();
    struct rusage before {}, after {};
    getrusage(RUSAGE_SELF, &before);
    slot.start_ns = NowNs();
    loop(index, g->ops);
    slot.end_ns = NowNs();
    getrusage(RUSAGE_SELF, &after);
    slot.voluntary = after.ru_nvcsw - before.ru_nvcsw;
    slot.involuntary = after.ru_nivcsw - before.ru_nivcsw;
    WakeIfLast(&g->finished, static_cast<uint32_t>(all));
  }
}

}  // namespace

ProcessGang::ProcessGang(int64_t processes, std::function<bool(int64_t)> init,
                         std::function<void(int64_t, int64_t)> loop)
    : processes_(processes), init_(std::move(init)), loop_(std::move(loop)) {
  void* page = mmap(nullptr, sizeof(ProcessGangShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    error_ = "mmap failed";
    return;
  }
  shared_ = new (page) ProcessGangShared();
  const pid_t parent = getpid();
  for (int64_t i = 0; i < processes; ++i) {
    pid_t pid = fork();
    if (pid == 0) ChildMain(shared_, i, processes, parent, init_, loop_);
    if (pid < 0) {
      Fail("unsupported: cannot fork " + std::to_string(processes) + " processes: " + std::strerror(errno));
      return;
    }
    pids_.push_back(pid);
  }
  if (!Wait(&shared_->parked, static_cast<uint32_t>(processes))) return;
  for (int64_t i = 0; i < processes && error_.empty(); ++i)
    if (!shared_->slots[i].init_ok) Fail("a child process could not set up its lock");
}

ProcessGang::~ProcessGang() {
  if (error_.empty() && Wait(&shared_->parked, static_cast<uint32_t>(processes_) * (rounds_ + 1))) {
    shared_->quit = 1;
    shared_->round.store(rounds_ + 1);
    Futex(&shared_->round, FUTEX_WAKE, INT_MAX);
    for (pid_t pid : pids_) {
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  if (shared_ != nullptr) {
    shared_->~ProcessGangShared();
    munmap(shared_, sizeof(ProcessGangShared));
  }
}

// Kills and reaps every child; the gang is unusable after.
void ProcessGang::Fail(const std::string& why) {
  if (error_.empty()) error_ = why;
  for (pid_t pid : pids_) kill(pid, SIGKILL);
  for (pid_t pid : pids_) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pids_.clear();
}

// Waits until *word reaches `want` (the last child to count wakes this process), looking every
// millisecond for a child that is gone: that fails the gang (false).
bool ProcessGang::Wait(std::atomic<uint32_t>* word, uint32_t want) {
  const timespec tick{0, 1000000};
  for (uint32_t v; (v = word->load()) < want;) {
    for (pid_t pid : pids_) {
      siginfo_t info{};
      if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0) {
        Fail(rounds_ == 0 ? "a child process died before the start" : "a child process failed");
        return false;
      }
    }
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, v, &tick, nullptr, 0);
  }
  return true;
}

ProcessGangResult ProcessGang::Round(int64_t ops_per_process) {
  ProcessGangResult result;
  const uint32_t r = rounds_;
  // All parked (outside any timing), then released together.
  if (error_.empty() && Wait(&shared_->parked, static_cast<uint32_t>(processes_) * (r + 1))) {
    shared_->ops = ops_per_process;
    shared_->round.store(r + 1);
    rounds_ = r + 1;
    Futex(&shared_->round, FUTEX_WAKE, INT_MAX);
    Wait(&shared_->finished, static_cast<uint32_t>(processes_) * (r + 1));
  }
  if (!error_.empty()) {
    result.error = error_;
    return result;
  }
  const ProcessGangShared* g = shared_;
  int64_t first = g->slots[0].start_ns, last = g->slots[0].end_ns;
  for (int64_t i = 0; i < processes_; ++i) {
    const ChildSlot& s = g->slots[i];
    first = std::min(first, s.start_ns);
    last = std::max(last, s.end_ns);
    result.switches.voluntary += s.voluntary;
    result.switches.involuntary += s.involuntary;
  }
  result.seconds = static_cast<double>(last - first) / 1e9;
  return result;
}

}  // namespace ctxbench
