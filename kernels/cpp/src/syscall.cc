// syscall.* — the cost of entering and leaving the kernel.
//
// syscall.getppid: one op = one raw syscall(SYS_getppid), which always enters the kernel (no vDSO,
// no libc caching) and does almost nothing there. 1 syscall, 0 context switches per op. Seed 000
// (s_syscall.c, getpid in a 1G loop, Pentium G2030 @ 3.00GHz, Linux 3.16, 2014) measured 49.47 ns
// per call (29 of its 49 s were system time, so it did enter the kernel). getppid through syscall()
// is the same measurement without relying on libc not caching the pid.
//
// syscall.clock_gettime: one op = one clock_gettime() through glibc, which the vDSO answers in user
// space (0 syscalls per op) when the clocksource allows it, e.g. tsc or kvm-clock.
// syscall.clock_gettime_raw: the same clock read through syscall(SYS_clock_gettime), forcing 1 real
// syscall per op; the difference between the two is what the vDSO saves. Seed 004 measured
// gettimeofday (1.45M calls/s on a Xeon 2.13GHz), a different call, so neither has a seed reference.
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <string>

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

clockid_t ClockId(const Params& params) {
  const std::string& name = GetString(params, "clock");
  if (name == "realtime") return CLOCK_REALTIME;
  if (name == "monotonic_raw") return CLOCK_MONOTONIC_RAW;
  if (name == "boottime") return CLOCK_BOOTTIME;
  return CLOCK_MONOTONIC;
}

// Reads `clock` once per op, either through glibc (vDSO) or as a raw syscall, and checks that a
// monotonic clock never went backwards.
template <bool kRaw>
void ClockGettime(benchmark::State& state, const Params& params) {
  const clockid_t clock = ClockId(params);
  struct timespec ts {}, prev {};
  bool backwards = false;
  bool failed = false;
  for (auto _ : state) {
    int rc = kRaw ? static_cast<int>(syscall(SYS_clock_gettime, clock, &ts)) : clock_gettime(clock, &ts);
    benchmark::DoNotOptimize(ts);
    failed |= rc != 0;
    backwards |= ts.tv_sec < prev.tv_sec || (ts.tv_sec == prev.tv_sec && ts.tv_nsec < prev.tv_nsec);
    prev = ts;
  }
  if (failed) return state.SkipWithError("clock_gettime failed");
  if (backwards && clock != CLOCK_REALTIME) return state.SkipWithError("a monotonic clock went backwards");
  state.counters["syscalls_per_op"] = kRaw ? 1 : 0;
  state.counters["vdso_present"] = getauxval(AT_SYSINFO_EHDR) != 0;
}

ParamSpec ClockParam() {
  return ChoiceParam("clock", "monotonic", {"monotonic", "realtime", "monotonic_raw", "boottime"},
                     "which clock to read (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME)");
}

KernelRegistrar clock_gettime_vdso({
    .spec =
        {
            .id = "syscall.clock_gettime",
            .title = "clock_gettime through the vDSO",
            .family = "syscall",
            .unit = "ns/op",
            .description =
                "One op is one clock_gettime() call through glibc, which the vDSO answers in user space without "
                "entering the kernel when the clocksource allows it (tsc, kvm-clock); otherwise it falls back "
                "to a real syscall and costs as much as syscall.clock_gettime_raw. 0 syscalls (vDSO) and 0 "
                "context switches per op.",
            .params = {ClockParam()},
            .seed_reference = std::nullopt,
        },
    .body = ClockGettime<false>,
});

KernelRegistrar clock_gettime_raw({
    .spec =
        {
            .id = "syscall.clock_gettime_raw",
            .title = "clock_gettime as a raw system call",
            .family = "syscall",
            .unit = "ns/op",
            .description =
                "One op is one syscall(SYS_clock_gettime): the same clock read as syscall.clock_gettime but "
                "forced into the kernel, bypassing the vDSO. 1 syscall and 0 context switches per op; the "
                "difference to syscall.clock_gettime is what the vDSO saves.",
            .params = {ClockParam()},
            .seed_reference = std::nullopt,
        },
    .body = ClockGettime<true>,
});

}  // namespace
}  // namespace ctxbench
