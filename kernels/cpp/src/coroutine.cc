// coroutine.* — user-space coroutine switches, the mechanism behind C++ fiber and task libraries.
//
// coroutine.boost_context: N coroutines (boost::context::fiber on 16 KiB stacks, fcontext assembly
// switch) are resumed round-robin by the main context, each jumping straight back; one op is one
// switch (one fiber resume), so a resume-and-yield round trip is 2 ops. 0 syscalls (fcontext does not
// touch the signal mask, unlike swapcontext) and 0 context switches per op. With many coroutines each
// switch lands on a cold stack, which is what the `coroutines` sweep shows. Seed 002 measured libcopp
// v2 (whose tasks run on Boost.Context) at 616 ns per resume+yield of 30000 tasks, on Windows, with
// libcopp's task layer on top; that is not the same measurement, so it is not a seed_reference.
#include <boost/context/fiber.hpp>
#include <boost/context/fixedsize_stack.hpp>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "registry.h"

namespace ctxbench {
namespace {

namespace ctx = boost::context;

void BoostContext(benchmark::State& state, const Params& params) {
  const int64_t n = GetInt(params, "coroutines");
  // Each coroutine counts how often it ran; the total must equal the number of resumes.
  auto runs = std::make_unique<int64_t[]>(static_cast<size_t>(n));
  std::vector<ctx::fiber> fibers;
  fibers.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t* counter = &runs[i];
    *counter = 0;
    fibers.emplace_back(std::allocator_arg, ctx::fixedsize_stack(16 * 1024), [counter](ctx::fiber&& back) {
      for (;;) {
        ++*counter;
        back = std::move(back).resume();  // jump back to main; returns when main resumes us again
      }
      return std::move(back);
    });
  }
  size_t next = 0;
  for (auto _ : state) {
    fibers[next] = std::move(fibers[next]).resume();  // main -> coroutine -> main: 2 switches
    if (++next == fibers.size()) next = 0;
  }
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) total += runs[i];
  // Suspended fibers are unwound on destruction (forced_unwind thrown inside each coroutine).
  fibers.clear();
  if (total != state.iterations()) state.SkipWithError("coroutine.boost_context: resume count mismatch");
  state.counters["syscalls_per_op"] = 0;
}

KernelRegistrar boost_context({
    .spec =
        {
            .id = "coroutine.boost_context",
            .title = "Boost.Context fiber switch",
            .family = "coroutine",
            .unit = "ns/op",
            .description =
                "`coroutines` Boost.Context fibers (16 KiB stacks) are resumed round-robin by the main context "
                "and each jumps straight back; one op is one switch (one resume), a round trip is 2 ops. 0 "
                "syscalls and 0 context switches per op; with many coroutines each switch lands on a cold "
                "stack.",
            .params = {IntParam("coroutines", 1, 1, 30000, {1, 10, 100, 1000, 10000, 30000},
                                "coroutines resumed round-robin (each has its own stack)")},
            .seed_reference = std::nullopt,
        },
    .body = BoostContext,
    .manual_time = false,
    .ops_per_iteration = [](const Params&) { return 2.0; },
});

}  // namespace
}  // namespace ctxbench
