// syscall.* — the cost of entering and leaving the kernel.
//
// syscall.getppid: one op = one raw syscall(SYS_getppid), which always enters the kernel (no vDSO,
// no libc caching) and does almost nothing there. 1 syscall, 0 context switches per op. Seed 000
// (s_syscall.c, getpid in a 1G loop, Pentium G2030 @ 3.00GHz, Linux 3.16, 2014) measured 49.47 ns
// per call (29 of its 49 s were system time, so it did enter the kernel). getppid through syscall()
// is the same measurement without relying on libc not caching the pid.
#include <sys/syscall.h>
#include <unistd.h>

#include "registry.h"

namespace ctxbench {
namespace {

void GetppidSyscall(benchmark::State& state, const Params&) {
  const long expect = static_cast<long>(getppid());
  long ppid = 0;
  for (auto _ : state) {
    ppid = syscall(SYS_getppid);
    benchmark::DoNotOptimize(ppid);
  }
  if (state.iterations() > 0 && ppid != expect) state.SkipWithError("syscall.getppid: syscall returned a wrong pid");
  state.counters["syscalls_per_op"] = 1;
}

KernelRegistrar getppid_syscall({
    .spec =
        {
            .id = "syscall.getppid",
            .title = "Raw getppid system call",
            .family = "syscall",
            .unit = "ns/op",
            .description =
                "One op is one raw syscall(SYS_getppid): a full user-to-kernel round trip that does almost no "
                "work inside the kernel and cannot be served by the vDSO or a libc cache. 1 syscall and 0 "
                "context switches per op (the counters confirm no switches happen).",
            .params = {},
            .seed_reference =
                SeedReference{
                    .seed = "000",
                    .value = 49.47,
                    .unit = "ns/op",
                    .machine = "Intel Pentium G2030 @ 3.00GHz, Linux 3.16, 2014",
                    .params = {},
                    .note = "s_syscall.c measured getpid (not getppid) in a 1G loop with time(1), on a kernel "
                            "without Meltdown/Spectre mitigations",
                },
        },
    .body = GetppidSyscall,
});

}  // namespace
}  // namespace ctxbench
