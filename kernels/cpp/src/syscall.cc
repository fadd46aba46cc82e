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
//
// Seed 004's everyday calls ("后台常用系统调用性能总结", Intel Xeon 2.13GHz, 64 GB, calls per second
// in a loop; converted here to ns per call as 1e9 / rate):
// syscall.open_close: one op = open("/dev/null", O_RDONLY) + close(): 2 syscalls (seed: 1093160.21/s).
// syscall.gettimeofday: one op = one glibc gettimeofday(), answered by the vDSO where the clocksource
// allows (0 syscalls; seed: 1453568.66/s, when it was most likely a real syscall).
// syscall.socket_close: one op = socket(AF_INET, SOCK_DGRAM or SOCK_STREAM) + close(): 2 syscalls
// (seed: 578356.96/s; it did not say which type).
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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
            .description =
                "One op is one raw syscall(SYS_getppid): a full user-to-kernel round trip that does almost no "
                "work inside the kernel and cannot be served by the vDSO or a libc cache. 1 syscall and 0 "
                "context switches per op (the counters confirm no switches happen).",
            .seed_reference =
                Seed("000", 49.47, kSeed000Machine, {},
                     "s_syscall.c measured getpid (not getppid) in a 1G loop with time(1), on a kernel "
                     "without Meltdown/Spectre mitigations"),
        },
    .body = GetppidSyscall,
    .cpu_bound = true,
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
            .description =
                "One op is one clock_gettime() call through glibc, which the vDSO answers in user space without "
                "entering the kernel when the clocksource allows it (tsc, kvm-clock); otherwise it falls back "
                "to a real syscall and costs as much as syscall.clock_gettime_raw. 0 syscalls (vDSO) and 0 "
                "context switches per op.",
            .params = {ClockParam()},
        },
    .body = ClockGettime<false>,
    .cpu_bound = true,
});

KernelRegistrar clock_gettime_raw({
    .spec =
        {
            .id = "syscall.clock_gettime_raw",
            .title = "clock_gettime as a raw system call",
            .description =
                "One op is one syscall(SYS_clock_gettime): the same clock read as syscall.clock_gettime but "
                "forced into the kernel, bypassing the vDSO. 1 syscall and 0 context switches per op; the "
                "difference to syscall.clock_gettime is what the vDSO saves.",
            .params = {ClockParam()},
        },
    .body = ClockGettime<true>,
    .cpu_bound = true,
});

void OpenClose(benchmark::State& state, const Params&) {
  bool failed = false;
  for (auto _ : state) {
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    failed |= fd < 0;
    close(fd);
  }
  if (failed) return state.SkipWithError("syscall.open_close: open(/dev/null) failed");
  state.counters["syscalls_per_op"] = 2;
}

KernelRegistrar open_close({
    .spec =
        {
            .id = "syscall.open_close",
            .title = "open + close",
            .description =
                "One op is open(\"/dev/null\", O_RDONLY) plus close() of the descriptor: a path lookup, a file "
                "object allocated and freed, the lowest free descriptor taken and given back. 2 syscalls and 0 "
                "context switches per op. /dev/null keeps the figure free of any filesystem's quirks.",
            .seed_reference =
                Seed("004", PerOpNs(1093160.21), kSeed004Machine, {},
                     "1093160.21 open+close per second (file not named), converted as 1e9 / rate"),
        },
    .body = OpenClose,
    .cpu_bound = true,
});

void Gettimeofday(benchmark::State& state, const Params&) {
  struct timeval tv {}, prev {};
  bool failed = false;
  int64_t backwards = 0;
  for (auto _ : state) {
    failed |= gettimeofday(&tv, nullptr) != 0;
    benchmark::DoNotOptimize(tv);
    backwards += tv.tv_sec < prev.tv_sec || (tv.tv_sec == prev.tv_sec && tv.tv_usec < prev.tv_usec);
    prev = tv;
  }
  if (failed) return state.SkipWithError("syscall.gettimeofday: gettimeofday failed");
  if (state.iterations() > 0 && tv.tv_sec < 1000000000) return state.SkipWithError("gettimeofday returned a time before 2001");
  state.counters["syscalls_per_op"] = 0;
  state.counters["vdso_present"] = getauxval(AT_SYSINFO_EHDR) != 0;
}

KernelRegistrar gettimeofday_kernel({
    .spec =
        {
            .id = "syscall.gettimeofday",
            .title = "gettimeofday",
            .description =
                "One op is one glibc gettimeofday() call (wall clock, microseconds). Modern Linux answers it "
                "in user space through the vDSO when the clocksource allows (0 syscalls; counter vdso_present), "
                "else it is a real syscall and costs as much as syscall.clock_gettime_raw. 0 context switches.",
            .seed_reference =
                Seed("004", PerOpNs(1453568.66), kSeed004Machine, {},
                     "1453568.66 calls per second, converted as 1e9 / rate; at that speed (688 ns) it "
                     "was a real syscall or a slow clocksource, not a vDSO read"),
        },
    .body = Gettimeofday,
    .cpu_bound = true,
});

void SocketClose(benchmark::State& state, const Params& params) {
  const int type = GetString(params, "type") == "tcp" ? SOCK_STREAM : SOCK_DGRAM;
  bool failed = false;
  for (auto _ : state) {
    int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    failed |= fd < 0;
    close(fd);
  }
  if (failed) return state.SkipWithError("syscall.socket_close: socket() failed");
  state.counters["syscalls_per_op"] = 2;
}

std::string SocketUnsupported(const Params& params) {
  int fd = socket(AF_INET, (GetString(params, "type") == "tcp" ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("cannot create an AF_INET socket: ") + std::strerror(errno);
  close(fd);
  return "";
}

KernelRegistrar socket_close({
    .spec =
        {
            .id = "syscall.socket_close",
            .title = "socket + close",
            .description =
                "One op is socket(AF_INET, SOCK_DGRAM or SOCK_STREAM) plus close(): a socket, its inode and "
                "file allocated, a descriptor taken, then all released (closing runs through RCU). 2 syscalls "
                "and 0 context switches per op.",
            .params = {ChoiceParam("type", "udp", {"udp", "tcp"}, "udp: SOCK_DGRAM; tcp: SOCK_STREAM")},
            .seed_reference =
                Seed("004", PerOpNs(578356.96), kSeed004Machine, {},
                     "578356.96 socket+close per second (socket type not given), converted as 1e9 / rate"),
        },
    .body = SocketClose,
    .unsupported = SocketUnsupported,
    .cpu_bound = true,
});

}  // namespace
}  // namespace ctxbench
