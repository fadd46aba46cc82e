// ucontext.* — switching between two user-space stacks with the System V ucontext API.
//
// ucontext.swapcontext: one op = one swapcontext() from one context to the other (a main context and
// a coroutine on its own 64 KiB stack bounce back and forth, so one benchmark iteration is 2 ops).
// glibc's swapcontext saves and restores the signal mask, so 1 rt_sigprocmask syscall per op and 0
// context switches. Seed 000 (s_context.c, 100M loops of two swaps, Pentium G2030 @ 3.00GHz,
// Linux 3.16, 2014) measured 334.6 ns per loop, i.e. 167.3 ns per swapcontext.
#include <ucontext.h>

#include <cstdint>
#include <vector>

#include "registry.h"

namespace ctxbench {
namespace {

struct Pair {
  ucontext_t main_ctx;
  ucontext_t co_ctx;
  volatile int64_t bounces = 0;
};

Pair* g_pair = nullptr;  // makecontext passes only ints; the coroutine finds its pair here

void Coroutine() {
  for (;;) {
    g_pair->bounces = g_pair->bounces + 1;
    swapcontext(&g_pair->co_ctx, &g_pair->main_ctx);
  }
}

void SwapContext(benchmark::State& state, const Params&) {
  std::vector<char> stack(64 * 1024);
  Pair pair;
  g_pair = &pair;
  if (getcontext(&pair.co_ctx) != 0) return state.SkipWithError("getcontext failed");
  pair.co_ctx.uc_stack.ss_sp = stack.data();
  pair.co_ctx.uc_stack.ss_size = stack.size();
  pair.co_ctx.uc_link = nullptr;  // never returns
  makecontext(&pair.co_ctx, Coroutine, 0);
  for (auto _ : state) {
    swapcontext(&pair.main_ctx, &pair.co_ctx);  // there and, when the coroutine swaps back, back
  }
  g_pair = nullptr;
  if (pair.bounces != state.iterations()) state.SkipWithError("ucontext.swapcontext: bounce count mismatch");
  state.counters["syscalls_per_op"] = 1;
}

KernelRegistrar swapcontext_kernel({
    .spec =
        {
            .id = "ucontext.swapcontext",
            .title = "swapcontext between two user-space contexts",
            .description =
                "A main context and a coroutine on its own stack swap back and forth with swapcontext(); one "
                "op is one swapcontext (a benchmark iteration is there and back, 2 ops). glibc saves and "
                "restores the signal mask on every swap: 1 rt_sigprocmask syscall and 0 context switches per "
                "op.",
            .seed_reference =
                Seed("000", 167.3, kSeed000Machine, {},
                     "s_context.c: 100M loops of two swaps in 33.46 s (334.6 ns per loop), halved by "
                     "the author to 167.3 ns per swap"),
        },
    .body = SwapContext,
    .ops_per_iteration = [](const Params&) { return 2.0; },
    .cpu_bound = true,
});

}  // namespace
}  // namespace ctxbench
