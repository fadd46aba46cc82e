// jmp.* — user-space non-local jumps: the cheapest way to move between two points of execution.
//
// jmp.setjmp_longjmp: one op = one setjmp that saves the registers plus one longjmp back to it.
// With save_sigmask=false (sigsetjmp(env, 0), what glibc's setjmp does) 0 syscalls per op; with
// save_sigmask=true the signal mask is saved and restored too (sigsetjmp(env, 1) + siglongjmp), which
// costs 2 rt_sigprocmask syscalls per op (one to read the mask, one to restore it). 0 context switches. Seed 000 (s_jmp.c, 1G setjmp/longjmp
// loops, Pentium G2030 @ 3.00GHz, Linux 3.16, glibc 2.19, 2014) measured 5.715 ns per op.
#include <setjmp.h>

#include "registry.h"

namespace ctxbench {
namespace {

void SetjmpLongjmp(benchmark::State& state, const Params& params) {
  const int save_mask = GetBool(params, "save_sigmask") ? 1 : 0;
  sigjmp_buf env;
  volatile int64_t landed = 0;  // volatile: modified between sigsetjmp and siglongjmp
  for (auto _ : state) {
    if (sigsetjmp(env, save_mask) == 0) siglongjmp(env, 1);
    landed = landed + 1;
  }
  if (landed != state.iterations()) state.SkipWithError("jmp.setjmp_longjmp: not every longjmp landed");
  state.counters["syscalls_per_op"] = 2 * save_mask;
}

ParamSpec SaveSigmaskParam() {
  ParamSpec p;
  p.name = "save_sigmask";
  p.type = ParamType::kBool;
  p.default_value = false;
  p.sweep = {false, true};
  p.help = "also save and restore the signal mask (sigsetjmp(env, 1)): two rt_sigprocmask syscalls per op";
  return p;
}

KernelRegistrar setjmp_longjmp({
    .spec =
        {
            .id = "jmp.setjmp_longjmp",
            .title = "setjmp + longjmp",
            .description =
                "One op is one sigsetjmp that saves the callee-saved registers plus one siglongjmp back to it, "
                "the primitive early user-space coroutine libraries switched with. 0 context switches; 0 "
                "syscalls, or 2 (rt_sigprocmask to save and to restore the mask) with save_sigmask=true.",
            .params = {SaveSigmaskParam()},
            .seed_reference =
                Seed("000", 5.715, kSeed000Machine, {{"save_sigmask", "false"}},
                     "s_jmp.c: 1G setjmp/longjmp loops timed with time(1); glibc 2.19 setjmp does not "
                     "save the signal mask"),
        },
    .body = SetjmpLongjmp,
    .cpu_bound = true,
});

}  // namespace
}  // namespace ctxbench
