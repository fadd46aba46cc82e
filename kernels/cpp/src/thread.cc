// thread.* — what creating a thread costs.
//
// thread.create_join: one op = one pthread_create() of a thread that returns at once, plus the
// pthread_join() that waits for it (default attributes, so glibc's stack cache is in play). Per op:
// clone3, the thread's exit, and the join's futex wait when the thread has not finished yet; at least
// one context switch on a single CPU. Seed 000 (t_thread.c, 1M create+join, Pentium G2030 @ 3.00GHz,
// Linux 3.16, 2014) measured 9.53 µs per thread.
#include <pthread.h>

#include <cstdint>

#include "registry.h"

namespace ctxbench {
namespace {

void* ReturnArg(void* arg) { return arg; }

void CreateJoin(benchmark::State& state, const Params&) {
  int64_t joined = 0;
  for (auto _ : state) {
    pthread_t t;
    if (pthread_create(&t, nullptr, ReturnArg, &joined) != 0) {
      state.SkipWithError("thread.create_join: pthread_create failed");
      break;
    }
    void* ret = nullptr;
    pthread_join(t, &ret);
    if (ret == &joined) ++joined;
  }
  if (!state.error_occurred() && joined != state.iterations())
    state.SkipWithError("thread.create_join: not every thread was joined");
}

KernelRegistrar create_join({
    .spec =
        {
            .id = "thread.create_join",
            .title = "pthread_create + pthread_join",
            .description =
                "One op is one pthread_create() of a thread that returns at once plus the pthread_join() that "
                "waits for it, with default attributes (glibc reuses cached stacks). Per op a clone3, the "
                "thread's exit and usually a futex wait in the join; switches are counted for the whole "
                "process, exited threads included.",
            .seed_reference =
                Seed("000", 9530, kSeed000Machine, {},
                     "t_thread.c: 1M create+join in 9.53 s timed with time(1)"),
        },
    .body = CreateJoin,
});

}  // namespace
}  // namespace ctxbench
