// coroutine.* — user-space coroutines: the switch and the life cycle behind C++ task, fiber and
// async libraries, in three implementations (`impl`):
//   fcontext  Boost.Context fibers (coroutine_fcontext.cc): stackful, an assembly register swap, no
//             syscall; libcopp (seed 002), Boost.Coroutine2 and Boost.Fiber run on it.
//   ucontext  glibc makecontext/swapcontext: stackful, and every swap saves and restores the signal
//             mask with one rt_sigprocmask syscall.
//   cxx20     a stackless C++20 coroutine (<coroutine>): a heap frame, resume() is an indirect call and
//             co_await suspend_always a return.
// Stackful ones get 64 KiB malloc'd stacks (seed 002 used 64 KiB).
//
// coroutine.switch: `coroutines` coroutines are resumed round-robin by main; each counts and yields
// straight back. One op is one switch: a resume (main -> coroutine) or a yield (coroutine -> main), so
// a benchmark iteration is 2 ops. Main counts resumes, the coroutines count yields; switches_per_op =
// (resumes + yields) / ops must be exactly 1. Round-robin over many coroutines makes every switch land
// on a cold stack/frame, the cache effect seed 002 saw. Seed 002 (libcopp v2 "task (stack using stack
// pool)", 30000 tasks x 1000 switches, 64 KiB stacks, Windows, 2017) measured 606-625 ns per "switch",
// where its switch is one task resume plus the task's yield back: 2 of our ops, so ~305 ns per op.
//
// coroutine.create: one op is one coroutine created, resumed once (it runs to its end and leaves) and
// destroyed: 2 switches per op (enter, leave) plus the stack or frame allocation and release.
// `coroutines` are created before any is run (30000: seed 002's layout). Seed 002 measured 1466 ns per
// task create (from its stack pool, after the first round) and 866-966 ns per remove, separately, and
// without the first resume.
#include <ucontext.h>

#include <coroutine>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "coroutine.h"
#include "registry.h"

namespace ctxbench {
namespace {

// ---------------------------------------------------------------- ucontext

struct UcontextPool {
  ucontext_t main_ctx;
  std::vector<ucontext_t> ctxs;
  int64_t yields = 0;
  int64_t runs = 0;
};
UcontextPool* g_pool = nullptr;  // makecontext passes only ints; coroutines find their pool here

void UcontextLooper(int index) {
  for (;;) {
    ++g_pool->yields;
    swapcontext(&g_pool->ctxs[static_cast<size_t>(index)], &g_pool->main_ctx);
  }
}

void UcontextOnce() { ++g_pool->runs; }  // returns: uc_link resumes main

struct Stacks {
  explicit Stacks(int64_t n) : n_(static_cast<size_t>(n)), p_(new char*[n_]()) {}
  ~Stacks() { Free(); }
  bool Allocate() {
    for (size_t i = 0; i < n_; ++i)
      if (!(p_[i] = static_cast<char*>(std::malloc(kCoroutineStackBytes)))) return false;
    return true;
  }
  void Free() {
    for (size_t i = 0; i < n_; ++i) std::free(p_[i]), p_[i] = nullptr;
  }
  char* operator[](size_t i) const { return p_[i]; }

 private:
  size_t n_;
  std::unique_ptr<char*[]> p_;
};

bool MakeUcontext(UcontextPool& pool, size_t i, char* stack, ucontext_t* link, void (*fn)(), int arg, bool with_arg) {
  ucontext_t& c = pool.ctxs[i];
  if (getcontext(&c) != 0) return false;
  c.uc_stack.ss_sp = stack;
  c.uc_stack.ss_size = kCoroutineStackBytes;
  c.uc_link = link;
  if (with_arg) makecontext(&c, fn, 1, arg);
  else makecontext(&c, fn, 0);
  return true;
}

// coroutine.switch's ucontext ring (SwitchRing in coroutine.h): the pool, its stacks and contexts.
struct UcontextRing {
  explicit UcontextRing(int64_t n) : n(n), stacks(n) {
    pool.ctxs.resize(static_cast<size_t>(n));
    if (!stacks.Allocate()) {
      error = "unsupported: cannot allocate the coroutine stacks";
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      if (!MakeUcontext(pool, static_cast<size_t>(i), stacks[static_cast<size_t>(i)], nullptr,
                        reinterpret_cast<void (*)()>(UcontextLooper), static_cast<int>(i), true)) {
        error = "getcontext failed";
        return;
      }
  }
  int64_t n;
  UcontextPool pool;
  Stacks stacks;
  size_t next = 0;
  const char* error = nullptr;
};

void UcontextSwitch(benchmark::State& state, int64_t n, CoroutineCounts* counts) {
  UcontextRing& ring = SwitchRing<UcontextRing>(n);
  if (ring.error != nullptr) return state.SkipWithError(ring.error);
  g_pool = &ring.pool;
  const int64_t yields0 = ring.pool.yields;
  int64_t resumes = 0;
  for (auto _ : state) {
    ++resumes;
    swapcontext(&ring.pool.main_ctx, &ring.pool.ctxs[ring.next]);  // there, and back when the coroutine swaps
    if (++ring.next == ring.pool.ctxs.size()) ring.next = 0;
  }
  g_pool = nullptr;
  counts->resumes = resumes;
  counts->yields = ring.pool.yields - yields0;
}

void UcontextCreate(benchmark::State& state, int64_t n, CoroutineCounts* counts) {
  UcontextPool pool;
  pool.ctxs.resize(static_cast<size_t>(n));
  Stacks stacks(n);
  g_pool = &pool;
  while (state.KeepRunningBatch(n)) {
    if (!stacks.Allocate()) {
      state.SkipWithError("unsupported: cannot allocate the coroutine stacks");
      break;
    }
    for (size_t i = 0; i < static_cast<size_t>(n); ++i)
      MakeUcontext(pool, i, stacks[i], &pool.main_ctx, UcontextOnce, 0, false);
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      ++counts->resumes;
      swapcontext(&pool.main_ctx, &pool.ctxs[i]);  // runs UcontextOnce; its return resumes uc_link
    }
    stacks.Free();
  }
  g_pool = nullptr;
  counts->runs = pool.runs;
}

// ---------------------------------------------------------------- C++20 stackless

struct Task {
  struct promise_type {
    Task get_return_object() { return Task{std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() { std::terminate(); }
  };
  std::coroutine_handle<promise_type> handle;
};

// noinline: the frame must be a real heap allocation, not elided into the caller.
[[gnu::noinline]] Task Looper(int64_t* yields) {
  for (;;) {
    ++*yields;
    co_await std::suspend_always{};  // yield back to whoever resumed us
  }
}

[[gnu::noinline]] Task Once(int64_t* runs) {
  ++*runs;
  co_return;  // to final_suspend: back to the resumer, frame kept until destroy()
}

// coroutine.switch's C++20 ring (SwitchRing in coroutine.h): suspended frames, never destroyed.
struct Cxx20Ring {
  explicit Cxx20Ring(int64_t n) : n(n) {
    tasks.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) tasks.push_back(Looper(&yields).handle);
  }
  void ResumeNext() {
    tasks[next].resume();
    if (++next == tasks.size()) next = 0;
  }
  int64_t n;
  int64_t yields = 0;
  size_t next = 0;
  std::vector<std::coroutine_handle<Task::promise_type>> tasks;
};

void Cxx20Switch(benchmark::State& state, int64_t n, CoroutineCounts* counts) {
  RingSwitch<Cxx20Ring>(state, n, counts);
}

void Cxx20Create(benchmark::State& state, int64_t n, CoroutineCounts* counts) {
  int64_t runs = 0;
  std::vector<std::coroutine_handle<Task::promise_type>> tasks;
  tasks.reserve(static_cast<size_t>(n));
  while (state.KeepRunningBatch(n)) {
    for (int64_t i = 0; i < n; ++i) tasks.push_back(Once(&runs).handle);
    for (auto h : tasks) {
      ++counts->resumes;
      h.resume();
    }
    for (auto h : tasks) h.destroy();
    tasks.clear();
  }
  counts->runs = runs;
}

// ---------------------------------------------------------------- kernels

template <typename Loop>
Loop Pick(const std::string& impl, Loop fcontext, Loop ucontext, Loop cxx20) {
  if (impl == "ucontext") return ucontext;
  if (impl == "cxx20") return cxx20;
  return fcontext;
}

#ifdef CTXBENCH_HAVE_BOOST_CONTEXT
constexpr SwitchLoop kFcontextSwitch = FcontextSwitch;
constexpr CreateLoop kFcontextCreate = FcontextCreate;
#else
constexpr SwitchLoop kFcontextSwitch = nullptr;
constexpr CreateLoop kFcontextCreate = nullptr;
#endif

// glibc's getcontext, swapcontext and setcontext each call rt_sigprocmask; fcontext and C++20
// coroutines stay in user space. A switch is one swapcontext; a create is getcontext + swapcontext in +
// setcontext (uc_link) out.
void SetSyscallCounter(benchmark::State& state, const std::string& impl, double ucontext_syscalls) {
  state.counters["syscalls_per_op"] = impl == "ucontext" ? ucontext_syscalls : 0;
}

void Switch(benchmark::State& state, const Params& params) {
  const std::string& impl = GetString(params, "impl");
  CoroutineCounts c;
  Pick<SwitchLoop>(impl, kFcontextSwitch, UcontextSwitch, Cxx20Switch)(state, GetInt(params, "coroutines"), &c);
  if (state.error_occurred()) return;
  const double ops = 2.0 * static_cast<double>(state.iterations());
  if (c.resumes != state.iterations() || c.yields != c.resumes)
    return state.SkipWithError(("coroutine.switch: counted " + std::to_string(c.resumes) + " resumes and " +
                                std::to_string(c.yields) + " yields for " + std::to_string(state.iterations()) +
                                " round trips")
                                   .c_str());
  state.counters["switches_per_op"] = static_cast<double>(c.resumes + c.yields) / ops;
  SetSyscallCounter(state, impl, 1);
}

void Create(benchmark::State& state, const Params& params) {
  const std::string& impl = GetString(params, "impl");
  CoroutineCounts c;
  Pick<CreateLoop>(impl, kFcontextCreate, UcontextCreate, Cxx20Create)(state, GetInt(params, "coroutines"), &c);
  if (state.error_occurred()) return;
  if (c.runs != state.iterations() || c.resumes != c.runs)
    return state.SkipWithError(("coroutine.create: " + std::to_string(c.runs) + " coroutines ran for " +
                                std::to_string(state.iterations()) + " created")
                                   .c_str());
  // Per coroutine: the resume that enters it and the switch back when it ends.
  state.counters["switches_per_op"] = 2.0 * static_cast<double>(c.runs) / static_cast<double>(state.iterations());
  SetSyscallCounter(state, impl, 3);
}

std::string Unsupported(const Params& params) {
#ifndef CTXBENCH_HAVE_BOOST_CONTEXT
  if (GetString(params, "impl") == "fcontext")
    return "impl fcontext needs Boost.Context (libboost-context-dev); this executable was built without it";
#endif
  return "";
}

ParamSpec ImplParam() {
  return ChoiceParam("impl", "fcontext", {"fcontext", "ucontext", "cxx20"},
                     "fcontext: Boost.Context fiber (stackful, no syscall); ucontext: glibc swapcontext "
                     "(stackful, 1 rt_sigprocmask per switch); cxx20: stackless C++20 coroutine");
}

ParamSpec CoroutinesParam(std::string help) {
  return IntParam("coroutines", 1, 1, 30000, {1, 10, 100, 1000, 10000, 30000}, std::move(help));
}

// Seed 002's libcopp v2 figure, measured with 30000 tasks on Boost.Context fcontext.
SeedReference LibcoppSeed(double value, std::string note) {
  return Seed("002", value, "author's home Windows PC (CPU not given), libcopp v2, 2017",
              {{"impl", "fcontext"}, {"coroutines", "30000"}}, std::move(note));
}

// A coroutine kernel: params impl and coroutines (its help says what the coroutines do), ops_per_iteration
// ops per benchmark iteration, unsupported without Boost.Context for impl fcontext, one never-blocking thread.
template <int kOpsPerIteration>
Kernel CoroutineKernel(KernelSpec spec, std::string coroutines_help,
                       void (*body)(benchmark::State&, const Params&)) {
  spec.params = {ImplParam(), CoroutinesParam(std::move(coroutines_help))};
  return Kernel{.spec = std::move(spec),
                .body = body,
                .ops_per_iteration = [](const Params&) { return static_cast<double>(kOpsPerIteration); },
                .unsupported = Unsupported,
                .cpu_bound = true};
}

KernelRegistrar switch_kernel(CoroutineKernel<2>(
    {
        .id = "coroutine.switch",
        .title = "Coroutine switch (fcontext, ucontext, C++20)",
        .description =
            "`coroutines` coroutines (stackful ones on 64 KiB stacks) are resumed round-robin by main and "
            "each yields straight back. One op is one switch: a resume or a yield, so a resume-and-yield "
            "round trip is 2 ops (switches_per_op counts both sides and must be 1). 0 context switches; 1 "
            "rt_sigprocmask syscall per op for ucontext, 0 otherwise. Many coroutines make every switch "
            "land on a cold stack or frame.",
        .seed_reference = LibcoppSeed(
            305.5,
            "libcopp v2 task with stack pool (Boost.Context fcontext underneath, plus libcopp's "
            "task layer), 30000 tasks x 1000 switches, 64 KiB stacks: 606-625 ns (median 611) "
            "per resume + yield, i.e. 2 switches; halved here"),
    },
    "coroutines resumed round-robin, each with its own stack or frame", Switch));

KernelRegistrar create_kernel(CoroutineKernel<1>(
    {
        .id = "coroutine.create",
        .title = "Coroutine create + first resume + destroy",
        .description =
            "One op is one coroutine's life: created (a 64 KiB malloc'd stack for fcontext and ucontext, a "
            "heap frame for cxx20), resumed once so it runs to its end and switches back, and destroyed. "
            "2 switches per op (switches_per_op), 3 rt_sigprocmask syscalls for ucontext (getcontext, "
            "swapcontext, setcontext), 0 otherwise; `coroutines` are created before any is run, as a server "
            "spawning a batch of tasks.",
        .seed_reference = LibcoppSeed(
            1466,
            "libcopp v2 task create from its stack pool (rounds 2-5; 3466 ns in round 1, when the "
            "stacks were first allocated), 30000 tasks; it excludes the first resume and the "
            "removal, which it measured at 866-966 ns per task"),
    },
    "coroutines created before any is resumed and destroyed", Create));

}  // namespace
}  // namespace ctxbench
