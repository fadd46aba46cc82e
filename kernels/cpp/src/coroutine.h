// Implementations behind coroutine.switch and coroutine.create (coroutine.cc). Each impl runs the
// benchmark loop itself and reports what it counted, so the three count exactly the same thing.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>

namespace ctxbench {

// Stack of every stackful coroutine (fcontext, ucontext): 64 KiB, as seed 002's libcopp run.
constexpr size_t kCoroutineStackBytes = 64 * 1024;

struct CoroutineCounts {
  int64_t resumes = 0;  // main -> coroutine switches (counted by main)
  int64_t yields = 0;   // coroutine -> main switches (counted inside the coroutines)
  int64_t runs = 0;     // coroutine bodies that ran (coroutine.create)
};

// coroutine.switch: `n` coroutines resumed round-robin, each yielding straight back. One benchmark
// iteration is one resume plus one yield (2 ops).
using SwitchLoop = void (*)(benchmark::State& state, int64_t n, CoroutineCounts* counts);
// coroutine.create: batches of `n` coroutines are created, each resumed once (it runs to its end and
// leaves) and destroyed. One benchmark iteration is one coroutine (KeepRunningBatch(n)).
using CreateLoop = void (*)(benchmark::State& state, int64_t n, CoroutineCounts* counts);

// coroutine.switch's ring of `n` suspended coroutines, built on the body's first call and reused by the
// next ones: Google Benchmark calls the body once per calibration trial and once per repetition, and
// building 30000 stacks (and tearing them down) each time cost seconds per kernel launch, far more than
// the timing. A kernel process runs one parameter set, so one ring serves it; the ring keeps its
// round-robin position between calls, so every switch still lands on the stack least recently used.
// Never freed: the process exits after its kernel, and tearing stackful coroutines down costs an unwind
// each.
template <typename Ring>
Ring& SwitchRing(int64_t n) {
  static Ring* ring = nullptr;
  if (ring == nullptr || ring->n != n) ring = new Ring(n);  // another n: never within one kernel process
  return *ring;
}

// coroutine.switch's timed loop on a ring whose ResumeNext() (inline) resumes the next coroutine, which
// yields straight back, and whose `yields` the coroutines count.
template <typename Ring>
void RingSwitch(benchmark::State& state, int64_t n, CoroutineCounts* counts) {
  Ring& ring = SwitchRing<Ring>(n);
  const int64_t yields0 = ring.yields;
  int64_t resumes = 0;
  for (auto _ : state) {
    ++resumes;
    ring.ResumeNext();
  }
  counts->resumes = resumes;
  counts->yields = ring.yields - yields0;
}

#ifdef CTXBENCH_HAVE_BOOST_CONTEXT
void FcontextSwitch(benchmark::State& state, int64_t n, CoroutineCounts* counts);
void FcontextCreate(benchmark::State& state, int64_t n, CoroutineCounts* counts);
#endif

}  // namespace ctxbench
