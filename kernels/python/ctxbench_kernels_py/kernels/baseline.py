"""call.py_loop: the bare interpreter loop that the seeds subtracted from every other Python figure.

One op = one iteration of an empty loop; no switch of any kind. Seed 000 timed `while i < n: i += 1`
(its `test_noyield`): 54.2 ns/iteration under Python 2.7, 63.2 ns under Python 3.4, on a Pentium G2030.
`form=while` is that loop; `form=for` is `for _ in range(n): pass`, the loop pyperf itself times with.
"""

from __future__ import annotations

import time
from typing import Any

from ctxbench_kernels_py.kernels.seeds import seed_000
from ctxbench_kernels_py.spec import Kernel, Param, SelfCheckError, Tally


def _while_loop(n: int) -> int:
    i = 0
    while i < n:
        i += 1
    return i


def _for_loop(n: int) -> int:
    i = -1
    for i in range(n):  # noqa: B007 - the loop variable is the result that proves the loop ran
        pass
    return i + 1


_LOOPS = {"while": _while_loop, "for": _for_loop}


# call.py_loop: one op = one empty loop iteration, no switch; seed 000: 63.2 ns (Python 3.4, G2030).
def bench_loop(params: dict[str, Any], loops: int, tally: Tally) -> float:
    loop = _LOOPS[params["form"]]
    t0 = time.perf_counter()
    done = loop(loops)
    dt = time.perf_counter() - t0
    if done != loops:
        raise SelfCheckError(f"call.py_loop: the loop ran {done} iterations, expected {loops}")
    tally.record(loops, "iterations", done, done)
    return dt


KERNELS = (
    Kernel(
        id="call.py_loop",
        cpu_bound=True,
        title="Python bare loop iteration",
        description=(
            "One op is one iteration of an empty Python loop: `while i < n: i += 1` (form=while, the loop "
            "seed 000 subtracted from its generator and greenlet figures) or `for _ in range(n): pass` "
            "(form=for). No switch of any kind; it is the interpreter's floor under every other py.* kernel."
        ),
        bench=bench_loop,
        params=(
            Param(
                name="form",
                type="choice",
                default="while",
                choices=("while", "for"),
                help="while: `while i < n: i += 1`, as the seed; for: `for _ in range(n): pass`",
            ),
        ),
        seed_reference=seed_000(
            63.2,
            params={"form": "while"},
            note=(
                "Python 3.4 (py_yield_from.py's test_noyield, 6.316 s / 100M); the same loop under "
                "Python 2.7 took 54.2 ns (py_yield.py, 5.418 s / 100M)"
            ),
        ),
    ),
)
