// Host helpers shared by kernels: CPU placement (affinity) and getrusage deltas.
#pragma once

#include <sched.h>
#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ctxbench {

// CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> AllowedCpus();

// CPU placement of two cooperating tasks ("same_core" | "cross_core" | "unpinned").
struct Placement {
  std::string name;
  int cpu_a = -1;  // -1: unpinned
  int cpu_b = -1;
  bool smt_siblings = false;  // cross_core fell back to two hardware threads of one core
};

// Picks CPUs from the allowed set. Returns an empty string on success, else why it is impossible here.
std::string ChoosePlacement(const std::string& name, Placement* out);

// Pins the calling thread to `cpu`; -1 restores the affinity the process started with.
bool PinSelfTo(int cpu);
// Restores the calling thread's affinity to everything AllowedCpus() returned at program start.
void RestoreAffinity();

// Voluntary and involuntary context switches (ru_nvcsw, ru_nivcsw).
struct SwitchCounts {
  int64_t voluntary = 0;
  int64_t involuntary = 0;
};
SwitchCounts SwitchesNow(int who);  // RUSAGE_SELF, RUSAGE_THREAD or RUSAGE_CHILDREN
inline SwitchCounts operator-(SwitchCounts a, SwitchCounts b) {
  return {a.voluntary - b.voluntary, a.involuntary - b.involuntary};
}
inline SwitchCounts operator+(SwitchCounts a, SwitchCounts b) {
  return {a.voluntary + b.voluntary, a.involuntary + b.involuntary};
}

// A spin-wait hint to the CPU (x86 pause, Arm yield); nothing elsewhere.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

// Writes/reads exactly `n` bytes, retrying on EINTR and short transfers. False on EOF or error.
bool WriteFull(int fd, const void* buf, size_t n);
bool ReadFull(int fd, void* buf, size_t n);

}  // namespace ctxbench
