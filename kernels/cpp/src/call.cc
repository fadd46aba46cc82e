// call.* — the cost of a plain function call, the floor every other figure is compared with.
//
// call.function: one op = one call of a function the compiler may neither inline nor analyse
// across (noinline + noipa), whose argument is the previous result, so every call depends on the last
// one. 0 syscalls, 0 context switches per op. Seed 000 (s_call.c, 1G calls in a loop on a Pentium
// G2030 @ 3.00GHz, Linux 3.16, 2014) measured 2.34 ns per call, loop overhead included.
//
// call.indirect: the same call made through a function pointer the compiler must reload every op
// (it cannot devirtualise it), the way virtual calls, callbacks and PLT calls are made. 0 syscalls,
// 0 switches per op. No seed measured it.
#include <cstdint>

#include "registry.h"

namespace ctxbench {
namespace {

constexpr uint64_t kMul = 2862933555777941757ULL;
constexpr uint64_t kAdd = 3037000493ULL;

// noipa: GCC may not specialise, clone or constant-propagate through it; noinline for other compilers.
#if defined(__clang__)
__attribute__((noinline))
#else
__attribute__((noinline, noipa))
#endif
uint64_t NextValue(uint64_t x) {
  return x * kMul + kAdd;  // one LCG step: cheap, never constant
}

// x after n LCG steps, in O(log n) (Brown's skip-ahead), for the self-check.
uint64_t LcgJump(uint64_t x, uint64_t n) {
  uint64_t acc_mul = 1, acc_add = 0, mul = kMul, add = kAdd;
  for (; n > 0; n >>= 1) {
    if (n & 1) {
      acc_mul *= mul;
      acc_add = acc_add * mul + add;
    }
    add = (mul + 1) * add;
    mul *= mul;
  }
  return acc_mul * x + acc_add;
}

void FunctionCall(benchmark::State& state, const Params&) {
  uint64_t x = 1;
  for (auto _ : state) {
    x = NextValue(x);
    benchmark::DoNotOptimize(x);
  }
  // Self-check: the chain of results must be exactly state.iterations() calls long.
  if (x != LcgJump(1, static_cast<uint64_t>(state.iterations()))) state.SkipWithError("call.function: result chain does not match the iteration count");
}

void IndirectCall(benchmark::State& state, const Params&) {
  uint64_t (*fn)(uint64_t) = NextValue;
  uint64_t x = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(fn);  // the compiler must assume the pointer changed: a real indirect call
    x = fn(x);
    benchmark::DoNotOptimize(x);
  }
  if (x != LcgJump(1, static_cast<uint64_t>(state.iterations())))
    state.SkipWithError("call.indirect: result chain does not match the iteration count");
}

KernelRegistrar function_call({
    .spec =
        {
            .id = "call.function",
            .title = "Function call (not inlined)",
            .description =
                "One op is one call of a non-inlined function (noinline, noipa) that computes one LCG step "
                "from the previous call's result, kept alive with benchmark::DoNotOptimize. No syscall and no "
                "context switch per op; it is the floor the syscall and switch figures are compared with.",
            .seed_reference =
                Seed("000", 2.34, kSeed000Machine, {},
                     "s_call.c: 1G calls in a loop timed with time(1), loop overhead included"),
        },
    .body = FunctionCall,
    .cpu_bound = true,
});

KernelRegistrar indirect_call({
    .spec =
        {
            .id = "call.indirect",
            .title = "Indirect function call (function pointer)",
            .description =
                "One op is one call through a function pointer that the compiler must treat as unknown each "
                "time (so it cannot inline or devirtualise it), to the same non-inlined LCG-step function as "
                "call.function; the target never changes, so the branch predictor knows it. No syscall and no "
                "context switch per op.",
        },
    .body = IndirectCall,
    .cpu_bound = true,
});

}  // namespace
}  // namespace ctxbench
