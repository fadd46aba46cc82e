// sleep.* — what asking the kernel to sleep for nothing costs.
//
// sleep.usleep0: `threads` threads each call usleep(0) in a loop; one op is one usleep(0) by one
// thread, and the figure is wall time / total calls. glibc turns it into one clock_nanosleep syscall
// of zero length, which still arms an hrtimer and blocks until it fires: the thread's timer slack
// (50 µs by default, reported as timer_slack_ns) decides how long one call takes when the CPU is
// otherwise idle. 1 syscall and about 1 voluntary context switch per op. Seed 000 (t_sleep.c, 1M
// calls, Pentium G2030 @ 3.00GHz, 2 cores, not pinned, Linux 3.16, 2014) measured 54.74 µs per call
// with 1 thread and 1315 ns per call with 100 threads.
#include <sys/prctl.h>
#include <unistd.h>

#include "registry.h"
#include "workers.h"

namespace ctxbench {
namespace {

void Usleep0(benchmark::State& state, const Params& params) {
  bool ran = RunGangKernel(state, params, [](int64_t, int64_t ops) {
    for (int64_t i = 0; i < ops; ++i) usleep(0);
  });
  if (!ran) return;
  state.counters["syscalls_per_op"] = 1;
  // Threads inherit the creating thread's slack, so this thread's value is the workers' value.
  state.counters["timer_slack_ns"] = static_cast<double>(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
}

KernelRegistrar usleep0_kernel(GangKernel(
    {
        .id = "sleep.usleep0",
        .title = "usleep(0) with N threads",
        .description =
            "`threads` threads call usleep(0) in a loop, released together; one op is one usleep(0) by one "
            "thread and the figure is wall time divided by all calls. Each call is one zero-length "
            "clock_nanosleep that still blocks until its hrtimer fires, so one thread alone measures the "
            "timer slack (counter timer_slack_ns) more than the CPU; 1 syscall and about 1 voluntary "
            "switch per op.",
        .seed_reference = GangSeed000(
            54740, "1",
            "t_sleep.c: 1M usleep(0) in 54.74 s with 1 thread; 1315 ns per call with 100 "
            "threads (threads=100)"),
    },
    Usleep0));

}  // namespace
}  // namespace ctxbench
