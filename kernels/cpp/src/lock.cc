// lock.* — what a lock costs as the number of threads fighting for it grows.
//
// lock.pthread_mutex: `threads` threads each lock one shared pthread mutex (default type), increment a
// shared counter and unlock, in a loop; one op is one lock + unlock pair by one thread, and the figure
// is wall time / total pairs. Uncontended it is two atomic instructions and 0 syscalls; contended,
// glibc's futex-based mutex makes a futex wait (and a wake on unlock) and threads switch, so the
// counters report switches per op. The kernel checks the counter adds up to threads x ops. Seed 000
// (t_lock.c) only plotted this curve and noted it stays almost flat as threads grow; no figure is given.
#include <pthread.h>

#include <cstdint>

#include "registry.h"
#include "workers.h"

namespace ctxbench {
namespace {

void PthreadMutex(benchmark::State& state, const Params& params) {
  const int64_t threads = GetInt(params, "threads");
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  int64_t shared = 0;
  bool ran = RunGangKernel(state, params, [&](int64_t, int64_t ops) {
    for (int64_t i = 0; i < ops; ++i) {
      pthread_mutex_lock(&mutex);
      ++shared;
      pthread_mutex_unlock(&mutex);
    }
  });
  pthread_mutex_destroy(&mutex);
  if (!ran) return;
  // Every invocation runs one gang of threads x max_iterations x kGangOpsPerIteration pairs.
  if (shared != threads * state.max_iterations * kGangOpsPerIteration)
    state.SkipWithError("lock.pthread_mutex: the shared counter lost increments");
}

KernelRegistrar pthread_mutex_kernel(GangKernel(
    {
        .id = "lock.pthread_mutex",
        .title = "pthread_mutex lock + unlock with N threads",
        .description =
            "`threads` threads lock one shared pthread mutex, increment a shared counter and unlock, in a "
            "loop; one op is one lock + unlock pair by one thread and the figure is wall time divided by "
            "all pairs. Uncontended that is 0 syscalls; contended, the futex-based mutex waits and wakes in "
            "the kernel and threads switch (see the ctxsw counters).",
    },
    PthreadMutex));

}  // namespace
}  // namespace ctxbench
