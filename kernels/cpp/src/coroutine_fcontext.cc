// The fcontext implementation of coroutine.* (Boost.Context's assembly switch, the one under libcopp,
// Boost.Coroutine2 and Boost.Fiber): boost::context::fiber on 64 KiB malloc'd stacks. fcontext keeps
// the signal mask alone, so a switch makes no syscall.
#include <boost/context/fiber.hpp>
#include <boost/context/fixedsize_stack.hpp>

#include <memory>
#include <utility>
#include <vector>

#include "coroutine.h"

namespace ctxbench {

namespace ctx = boost::context;

namespace {

// The ring outlives one call of the body (see SwitchRing in coroutine.h): built on the first call, kept
// for the process, never unwound (a process exits after its one kernel; unwinding 30000 fibers costs
// an exception each).
struct FiberRing {
  explicit FiberRing(int64_t n) : n(n) {
    fibers.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      fibers.emplace_back(std::allocator_arg, ctx::fixedsize_stack(kCoroutineStackBytes),
                          [this](ctx::fiber&& back) {
                            for (;;) {
                              ++yields;
                              back = std::move(back).resume();  // yield: jump back to main
                            }
                            return std::move(back);
                          });
    }
  }
  void ResumeNext() {
    fibers[next] = std::move(fibers[next]).resume();  // main -> coroutine -> main: 2 switches
    if (++next == fibers.size()) next = 0;
  }
  int64_t n;
  int64_t yields = 0;
  size_t next = 0;
  std::vector<ctx::fiber> fibers;
};

}  // namespace

void FcontextSwitch(benchmark::State& state, int64_t n, CoroutineCounts* counts) {
  RingSwitch<FiberRing>(state, n, counts);
}

void FcontextCreate(benchmark::State& state, int64_t n, CoroutineCounts* counts) {
  int64_t runs = 0;
  std::vector<ctx::fiber> fibers;
  fibers.reserve(static_cast<size_t>(n));
  while (state.KeepRunningBatch(n)) {
    for (int64_t i = 0; i < n; ++i)
      fibers.emplace_back(std::allocator_arg, ctx::fixedsize_stack(kCoroutineStackBytes),
                          [&runs](ctx::fiber&& back) {
                            ++runs;
                            return std::move(back);  // finished: the stack is freed on the way out
                          });
    for (auto& f : fibers) {
      ++counts->resumes;
      f = std::move(f).resume();  // runs to the end; returns an empty fiber
    }
    fibers.clear();
  }
  counts->runs = runs;
}

}  // namespace ctxbench
