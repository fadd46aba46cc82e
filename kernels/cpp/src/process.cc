// process.* — what creating a process costs.
//
// process.fork_wait: one op = one fork() whose child calls _exit(0) at once, plus the waitpid() that
// reaps it. The parent forks `batch` children before reaping them all (batch=1: fork, wait, fork,
// wait...). Per op: 3 syscalls in the parent and child together (fork, exit_group, wait4) and at least
// one context switch (the child must run to exit; switches are counted in parent and children). With
// touched_mb > 0 the parent first writes to that much private memory (4 KiB pages, transparent huge
// pages off) so fork must copy its page tables and mark it copy-on-write. Seed 000 (s_fork.c, 1M
// forks, children forked until the limit before being reaped, Pentium G2030 @ 3.00GHz, Linux 3.16,
// 2014) measured 50.98 µs per fork+exit+wait (46.73 µs when the child was made to run first).
//
// process.fork_exec: one op = fork() + execve() of a static, libc-free program that exits at once
// (libexec/ctxbench-exec-true next to this executable) + waitpid(): what spawning a helper costs.
// Per op: fork, execve, exit_group, wait4 and at least one context switch. No seed measured it.
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "host.h"
#include "registry.h"

namespace ctxbench {
namespace {

// Private memory the parent has written to (page tables populated), unmapped on destruction.
class TouchedMemory {
 public:
  explicit TouchedMemory(int64_t mb) : size_(static_cast<size_t>(mb) << 20) {
    if (size_ == 0) return;
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    madvise(p, size_, MADV_NOHUGEPAGE);  // 4 KiB pages: the page-table work fork must do is predictable
    const long page = sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < size_; off += static_cast<size_t>(page)) static_cast<volatile char*>(p)[off] = 1;
    base_ = p;
  }
  ~TouchedMemory() {
    if (base_) munmap(base_, size_);
  }
  bool ok() const { return size_ == 0 || base_ != nullptr; }

 private:
  size_t size_;
  void* base_ = nullptr;
};

// Forks `batch` children that run `child` (which must not return), then reaps them all. Returns false,
// after killing and reaping whatever it started, when a fork fails or a child does not exit 0.
template <typename ChildFn>
bool ForkBatch(int64_t batch, std::vector<pid_t>& pids, ChildFn child, std::string* error) {
  pids.clear();
  bool ok = true;
  for (int64_t i = 0; i < batch; ++i) {
    pid_t pid = fork();
    if (pid == 0) child();
    if (pid < 0) {
      *error = std::string("fork failed: ") + std::strerror(errno);
      ok = false;
      break;
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    if (!ok) kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (ok && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      *error = "a child did not exit with status 0";
      ok = false;
    }
  }
  return ok;
}

void SetSwitchCounters(benchmark::State& state, SwitchCounts d, double ops) {
  state.counters["voluntary_ctxsw_per_op"] = ops > 0 ? static_cast<double>(d.voluntary) / ops : 0.0;
  state.counters["involuntary_ctxsw_per_op"] = ops > 0 ? static_cast<double>(d.involuntary) / ops : 0.0;
}

void ForkWait(benchmark::State& state, const Params& params) {
  const int64_t batch = GetInt(params, "batch");
  TouchedMemory memory(GetInt(params, "touched_mb"));
  if (!memory.ok()) return state.SkipWithError("cannot map touched_mb of memory");
  std::vector<pid_t> pids;
  pids.reserve(static_cast<size_t>(batch));
  std::string error;
  SwitchCounts before = SwitchesNow(RUSAGE_SELF) + SwitchesNow(RUSAGE_CHILDREN);
  for (auto _ : state) {
    if (!ForkBatch(batch, pids, [] { _exit(0); }, &error)) {
      state.SkipWithError(("process.fork_wait: " + error).c_str());
      break;
    }
  }
  if (state.error_occurred()) return;
  SwitchCounts d = SwitchesNow(RUSAGE_SELF) + SwitchesNow(RUSAGE_CHILDREN) - before;
  SetSwitchCounters(state, d, static_cast<double>(state.iterations() * batch));
}

// MemAvailable from /proc/meminfo in MiB, or -1 when unknown.
int64_t MemAvailableMb() {
  FILE* f = fopen("/proc/meminfo", "r");
  if (!f) return -1;
  char line[256];
  long long kb = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) break;
  fclose(f);
  return kb < 0 ? -1 : kb / 1024;
}

// touched_mb must fit in memory, and so must the page tables of `batch` children alive at once
// (8 bytes of page table per 4 KiB page: touched_mb / 512 MiB per child).
std::string ForkWaitUnsupported(const Params& params) {
  const int64_t touched = GetInt(params, "touched_mb"), batch = GetInt(params, "batch");
  const int64_t avail = MemAvailableMb();
  const int64_t need = touched + batch * touched / 512;
  if (avail >= 0 && need > avail * 3 / 4)
    return "touched_mb=" + std::to_string(touched) + " with batch=" + std::to_string(batch) + " needs about " +
           std::to_string(need) + " MiB, more than 3/4 of the " + std::to_string(avail) + " MiB available";
  return "";
}

std::string ExecTruePath() {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "";
  self[n] = '\0';
  std::string dir(self);
  dir = dir.substr(0, dir.rfind('/'));
  return dir + "/libexec/ctxbench-exec-true";
}

void ForkExec(benchmark::State& state, const Params& params) {
  const int64_t batch = GetInt(params, "batch");
  const std::string path = ExecTruePath();
  char* const argv[] = {const_cast<char*>(path.c_str()), nullptr};
  char* const envp[] = {nullptr};
  std::vector<pid_t> pids;
  pids.reserve(static_cast<size_t>(batch));
  std::string error;
  SwitchCounts before = SwitchesNow(RUSAGE_SELF) + SwitchesNow(RUSAGE_CHILDREN);
  for (auto _ : state) {
    if (!ForkBatch(batch, pids, [&] { execve(argv[0], argv, envp), _exit(127); }, &error)) {
      state.SkipWithError(("process.fork_exec: " + error).c_str());
      break;
    }
  }
  if (state.error_occurred()) return;
  SwitchCounts d = SwitchesNow(RUSAGE_SELF) + SwitchesNow(RUSAGE_CHILDREN) - before;
  SetSwitchCounters(state, d, static_cast<double>(state.iterations() * batch));
}

std::string ForkExecUnsupported(const Params&) {
  std::string path = ExecTruePath();
  if (path.empty() || access(path.c_str(), X_OK) != 0)
    return "helper " + (path.empty() ? std::string("libexec/ctxbench-exec-true") : path) +
           " is missing or not executable (build it with make kernels)";
  return "";
}

ParamSpec BatchParam() {
  return IntParam("batch", 1, 1, 1000, {1, 10, 100, 1000},
                  "children forked before the parent reaps them (1: fork, wait, fork, wait...)");
}

KernelRegistrar fork_wait({
    .spec =
        {
            .id = "process.fork_wait",
            .title = "fork + exit + wait",
            .description =
                "One op is one fork() whose child calls _exit(0) at once, plus the waitpid() that reaps it; "
                "`batch` children are forked before any is reaped. Per op 3 syscalls (fork, exit_group, wait4) "
                "and at least one context switch, counted in the parent and its children. touched_mb of "
                "private memory written beforehand (4 KiB pages) makes fork copy that many page tables.",
            .params = {BatchParam(),
                       IntParam("touched_mb", 0, 0, 4096, {0, 1, 16, 256, 1024, 4096},
                                "MiB of private memory the parent has written to before forking")},
            .seed_reference =
                Seed("000", 50980, kSeed000Machine, {{"touched_mb", "0"}},
                     "s_fork.c: 1M forks, children forked until the limit before being reaped (a "
                     "large batch); 46.73 us when the child was made to run first"),
        },
    .body = ForkWait,
    .ops_per_iteration = [](const Params& p) { return static_cast<double>(GetInt(p, "batch")); },
    .unsupported = ForkWaitUnsupported,
});

KernelRegistrar fork_exec({
    .spec =
        {
            .id = "process.fork_exec",
            .title = "fork + exec + wait",
            .description =
                "One op is one fork() whose child execve()s a tiny static program without libc that exits at "
                "once, plus the waitpid() that reaps it; `batch` children are started before any is reaped. "
                "Per op 4 syscalls (fork, execve, exit_group, wait4) and at least one context switch: what "
                "spawning a helper process costs.",
            .params = {BatchParam()},
        },
    .body = ForkExec,
    .ops_per_iteration = [](const Params& p) { return static_cast<double>(GetInt(p, "batch")); },
    .unsupported = ForkExecUnsupported,
});

}  // namespace
}  // namespace ctxbench
