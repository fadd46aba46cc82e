// lock.* across processes — seed 004's cross-process locks: N processes fight for one lock.
//
// lock.spin_shm, lock.posix_sem, lock.flock, lock.fcntl, lock.pthread_mutex_pshared: `processes`
// (1..128) forked processes, released together, each loop: take the lock, increment a plain (non-atomic)
// counter in shared memory, release the lock. One op is one acquire + release by one process, and the
// figure is wall time (first start to last finish) / all acquisitions; acquisitions_per_s is its
// inverse. The kernel checks the counter equals processes x ops: a lower total means two processes
// were inside the lock at once, and the run fails (exit 1). Switches are counted in every child.
//   spin_shm: a CAS spinlock on a shared word (__sync_bool_compare_and_swap, as the seed), pause while
//     spinning and sched_yield after 64 failed tries, so runs with more processes than CPUs finish.
//   posix_sem: a named semaphore (sem_open with a unique name, sem_unlink at once; the children inherit
//     the mapping), sem_wait / sem_post.
//   flock: flock(LOCK_EX) / flock(LOCK_UN); every child opens the file itself (flock locks belong to
//     an open file description) through /proc/<parent>/fd of an O_TMPFILE in /dev/shm (nothing to clean up).
//   fcntl: fcntl(F_SETLKW) write lock / F_UNLCK on the whole file (POSIX locks belong to the process).
//   pthread_mutex_pshared: a PTHREAD_PROCESS_SHARED mutex in shared memory (futex-based).
// Seed 004 (Intel Xeon 2.13GHz, "8核CPU", 1M acquisitions shared by 8..96 processes) measured per
// second with 8 processes: spinlock 52631578.95, POSIX semaphore 15600624.02, flock 1866368.048, fcntl
// 1705029.838 (19.0, 64.1, 535.8, 586.5 ns per acquisition), falling to 16447368.42, 6849315.068,
// 905961.2249, 874202.2904 with 96.
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "host.h"
#include "process_gang.h"
#include "registry.h"

namespace ctxbench {
namespace {

enum class LockKind { kSpin, kSem, kFlock, kFcntl, kMutex };

struct LockShared {
  alignas(64) volatile int spin = 0;
  alignas(64) pthread_mutex_t mutex;
  alignas(64) volatile int64_t counter = 0;  // plain on purpose: only the lock protects it
};

// Everything one lock kind needs, set up in the parent before the children fork.
struct LockSetup {
  LockKind kind;
  LockShared* shared = nullptr;
  sem_t* sem = SEM_FAILED;
  int fd = -1;          // the lock file (flock, fcntl)
  pid_t parent = 0;
  std::string error;

  explicit LockSetup(LockKind k) : kind(k) {
    parent = getpid();
    void* page = mmap(nullptr, sizeof(LockShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
      error = "mmap failed";
      return;
    }
    shared = new (page) LockShared();
    if (kind == LockKind::kMutex) {
      pthread_mutexattr_t attr;
      pthread_mutexattr_init(&attr);
      int rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
      if (rc == 0) rc = pthread_mutex_init(&shared->mutex, &attr);
      pthread_mutexattr_destroy(&attr);
      if (rc != 0) error = std::string("process-shared mutex refused: ") + std::strerror(rc);
    } else if (kind == LockKind::kSem) {
      struct timespec ts {};
      clock_gettime(CLOCK_MONOTONIC, &ts);
      const std::string name = "/ctxbench-lock-" + std::to_string(parent) + "-" + std::to_string(ts.tv_nsec);
      sem = sem_open(name.c_str(), O_CREAT | O_EXCL, 0600, 1);
      if (sem == SEM_FAILED) error = std::string("sem_open failed: ") + std::strerror(errno);
      else sem_unlink(name.c_str());  // the name goes now; the mapping lives on in every child
    } else if (kind == LockKind::kFlock || kind == LockKind::kFcntl) {
      fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
      if (fd < 0) fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
      if (fd < 0) error = std::string("cannot create an unnamed lock file (O_TMPFILE): ") + std::strerror(errno);
    }
  }
  ~LockSetup() {
    if (sem != SEM_FAILED) sem_close(sem);
    if (fd >= 0) close(fd);
    if (shared) {
      if (kind == LockKind::kMutex) pthread_mutex_destroy(&shared->mutex);
      munmap(shared, sizeof(LockShared));
    }
  }
};

// Child-side state: its own open file description for flock.
int g_child_fd = -1;

bool ChildInit(const LockSetup& s) {
  if (s.kind == LockKind::kFlock) {
    const std::string path = "/proc/" + std::to_string(s.parent) + "/fd/" + std::to_string(s.fd);
    g_child_fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    return g_child_fd >= 0;
  }
  g_child_fd = s.fd;
  return true;
}

void Loop(const LockSetup& s, int64_t ops) {
  LockShared* sh = s.shared;
  struct flock whole {};
  whole.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file
  for (int64_t i = 0; i < ops; ++i) {
    switch (s.kind) {
      case LockKind::kSpin:
        for (int tries = 0; !__sync_bool_compare_and_swap(&sh->spin, 0, 1);) {
          CpuRelax();
          if (++tries == 64) tries = 0, sched_yield();
        }
        sh->counter = sh->counter + 1;
        __sync_lock_release(&sh->spin);
        break;
      case LockKind::kSem:
        while (sem_wait(s.sem) != 0) {
        }
        sh->counter = sh->counter + 1;
        sem_post(s.sem);
        break;
      case LockKind::kFlock:
        while (flock(g_child_fd, LOCK_EX) != 0) {
        }
        sh->counter = sh->counter + 1;
        flock(g_child_fd, LOCK_UN);
        break;
      case LockKind::kFcntl:
        whole.l_type = F_WRLCK;
        while (fcntl(g_child_fd, F_SETLKW, &whole) != 0) {
        }
        sh->counter = sh->counter + 1;
        whole.l_type = F_UNLCK;
        fcntl(g_child_fd, F_SETLK, &whole);
        break;
      case LockKind::kMutex:
        pthread_mutex_lock(&sh->mutex);
        sh->counter = sh->counter + 1;
        pthread_mutex_unlock(&sh->mutex);
        break;
    }
  }
}

// The lock of one point and its gang of processes, kept for the process's later calls with the same
// point (a short sample is one call): the children are forked once, and use the same lock every round.
struct KeptGang {
  LockKind kind;
  int64_t processes;
  LockSetup setup;                   // before gang: it outlives the children that use it
  std::unique_ptr<ProcessGang> gang;  // none when the setup failed

  KeptGang(LockKind k, int64_t p) : kind(k), processes(p), setup(k) {
    if (setup.error.empty())
      gang = std::make_unique<ProcessGang>(
          p, [this](int64_t) { return ChildInit(setup); }, [this](int64_t, int64_t ops) { Loop(setup, ops); });
  }
};

KeptGang& Kept(LockKind kind, int64_t processes) {
  static std::unique_ptr<KeptGang> kept;
  if (!kept || kept->kind != kind || kept->processes != processes) {
    kept.reset();  // the old children exit first
    kept = std::make_unique<KeptGang>(kind, processes);
  }
  return *kept;
}

void LockBody(benchmark::State& state, const Params& params, LockKind kind, const char* id) {
  const int64_t processes = GetInt(params, "processes");
  const int64_t ops_per_process = state.max_iterations * kProcessOpsPerIteration;
  KeptGang& kept = Kept(kind, processes);
  if (!kept.setup.error.empty()) return state.SkipWithError(("unsupported: " + kept.setup.error).c_str());
  ProcessGangResult r;
  int64_t expected = 0;
  while (state.KeepRunningBatch(state.max_iterations)) {  // one batch of exactly max_iterations
    kept.setup.shared->counter = 0;
    r = kept.gang->Round(ops_per_process);
    if (!r.error.empty()) {
      state.SkipWithError(r.error.rfind("unsupported: ", 0) == 0 ? r.error.c_str() : (std::string(id) + ": " + r.error).c_str());
      continue;
    }
    expected = processes * ops_per_process;
    if (kept.setup.shared->counter != expected) {
      state.SkipWithError((std::string(id) + ": the lock is broken: the shared counter reached " +
                           std::to_string(kept.setup.shared->counter) + ", expected " + std::to_string(expected))
                              .c_str());
      continue;
    }
    state.SetIterationTime(r.seconds);
  }
  if (state.error_occurred()) return;
  const double ops = static_cast<double>(expected);
  state.counters["voluntary_ctxsw_per_op"] = static_cast<double>(r.switches.voluntary) / ops;
  state.counters["involuntary_ctxsw_per_op"] = static_cast<double>(r.switches.involuntary) / ops;
  state.counters["acquisitions_per_s"] = r.seconds > 0 ? ops / r.seconds : 0.0;
}

ParamSpec ProcessesParam() {
  return IntParam("processes", 1, 1, kMaxGangProcesses, {1, 2, 4, 8, 16, 32, 64, 96},
                  "processes taking the lock at the same time (seed 004: 8..96)");
}

double OpsPerIteration(const Params& p) {
  return static_cast<double>(GetInt(p, "processes") * kProcessOpsPerIteration);
}

constexpr const char* kSeed004Machine8Cores = "Intel Xeon 2.13GHz (8 cores), 64 GB, Linux (version not given), about 2014";

Kernel MakeLockKernel(const char* id, const char* title, LockKind kind, const char* how, double seed_rate,
                      const char* seed_text) {
  Kernel k;
  k.spec.id = id;
  k.spec.title = title;
  k.spec.description = std::string("`processes` forked processes, released together, each take the lock, increment a "
                                   "plain counter in shared memory and release it, in a loop: ") +
                       how +
                       " One op is one acquire + release by one process; the figure is wall time / all "
                       "acquisitions (acquisitions_per_s is its inverse). A counter short of processes x ops "
                       "means the lock let two in at once: exit 1.";
  k.spec.params = {ProcessesParam()};
  if (seed_rate > 0)
    k.spec.seed_reference = Seed("004", PerOpNs(seed_rate), kSeed004Machine8Cores, {{"processes", "8"}},
                                 seed_text);
  k.body = [kind, id](benchmark::State& s, const Params& p) { LockBody(s, p, kind, id); };
  k.manual_time = true;
  k.ops_per_iteration = OpsPerIteration;
  return k;
}

KernelRegistrar spin_shm(MakeLockKernel(
    "lock.spin_shm", "CAS spinlock in shared memory, N processes", LockKind::kSpin,
    "a compare-and-swap spinlock on a shared word (pause while spinning, sched_yield after 64 failed tries so "
    "more processes than CPUs still finish); 0 syscalls uncontended.",
    52631578.95,
    "8 processes, 1M acquisitions: 52631578.95/s (__sync_bool_compare_and_swap on shared memory), converted as "
    "1e9 / rate; 16447368.42/s with 96"));

KernelRegistrar posix_sem(MakeLockKernel(
    "lock.posix_sem", "POSIX named semaphore, N processes", LockKind::kSem,
    "a named POSIX semaphore (sem_open, unique name, unlinked at once) taken with sem_wait and given back with "
    "sem_post; futex syscalls only when contended.",
    15600624.02, "8 processes, 1M acquisitions: 15600624.02/s (sem_open/sem_wait/sem_post), converted as 1e9 / rate; "
                 "6849315.068/s with 96"));

KernelRegistrar flock_kernel(MakeLockKernel(
    "lock.flock", "flock on a shared file, N processes", LockKind::kFlock,
    "flock(LOCK_EX) and flock(LOCK_UN) on an unnamed file every process opened itself (flock locks belong to "
    "an open file description); 2 syscalls per op.",
    1866368.048, "8 processes, 1M acquisitions: 1866368.048/s, converted as 1e9 / rate; 905961.2249/s with 96"));

KernelRegistrar fcntl_kernel(MakeLockKernel(
    "lock.fcntl", "fcntl record lock, N processes", LockKind::kFcntl,
    "a POSIX record lock on the whole file, fcntl(F_SETLKW, F_WRLCK) then F_UNLCK; 2 syscalls per op.",
    1705029.838, "8 processes, 1M acquisitions: 1705029.838/s, converted as 1e9 / rate; 874202.2904/s with 96"));

KernelRegistrar mutex_pshared(MakeLockKernel(
    "lock.pthread_mutex_pshared", "process-shared pthread mutex, N processes", LockKind::kMutex,
    "a PTHREAD_PROCESS_SHARED pthread mutex in shared memory; futex syscalls only when contended.", 0, ""));

}  // namespace
}  // namespace ctxbench
