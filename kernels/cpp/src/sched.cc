// sched.* — what the scheduler costs when threads give up the CPU.
//
// sched.yield: `threads` threads each call sched_yield() in a loop; one op is one sched_yield() by one
// thread, and the figure is wall time / total yields. 1 syscall per op; when more than one thread is
// runnable on a CPU each yield switches to another thread (Linux counts these as involuntary switches),
// so ctxsw_per_op is about 1 with same_core and threads >= 2, and about 0 with threads = 1. Seed 000
// (t_yield.c, threads yielding in a loop, Pentium G2030 @ 3.00GHz, 2 cores, not pinned, Linux 3.16,
// 2014) plotted this against the thread count; its text gives 1315 - 916.8 = 398.2 ns per yield at
// 100 threads. One thread pinned (same_core) never blocks: its CPU time over the wall (counter cpu_share)
// is about 1 on a quiet CPU, and a sample under 0.9 is disturbed (Kernel::never_blocks).
#include <sched.h>

#include "registry.h"
#include "workers.h"

namespace ctxbench {
namespace {

void SchedYield(benchmark::State& state, const Params& params) {
  bool ran = RunGangKernel(state, params, [](int64_t, int64_t ops) {
    for (int64_t i = 0; i < ops; ++i) sched_yield();
  });
  if (ran) state.counters["syscalls_per_op"] = 1;
}

KernelRegistrar sched_yield_kernel(GangKernel(
    {
        .id = "sched.yield",
        .title = "sched_yield with N threads",
        .description =
            "`threads` threads call sched_yield() in a loop, released together; one op is one "
            "sched_yield() by one thread and the figure is wall time divided by all yields. 1 syscall per "
            "op; with two or more threads runnable on a CPU each yield is also a context switch "
            "(ctxsw_per_op about 1 with same_core, about 0 with one thread).",
        .seed_reference = GangSeed000(
            398.2, "100",
            "derived: the seed gives usleep(0) at 100 threads (1315 ns) as 916.8 ns more than "
            "pure scheduling (t_yield.c), i.e. 398.2 ns per yield; the rest is only plotted"),
    },
    SchedYield, /*never_blocks=*/true));

}  // namespace
}  // namespace ctxbench
