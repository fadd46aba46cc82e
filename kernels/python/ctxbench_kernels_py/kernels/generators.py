"""coroutine.py_generator and coroutine.py_yield_from: resuming a suspended generator frame, directly or
through a chain.

One op = one value delivered to a `for` loop by the iterator protocol (the same tp_iternext as next()):
coroutine.py_generator resumes one frame; coroutine.py_yield_from resumes the outermost frame, which
re-enters each of its
`depth` delegating frames down to the leaf that yields. No OS or greenlet switch: these are the cheapest
"context switches" Python has. The generator bodies are seed 000's: `while i < n: yield i; i += 1`, and
`yield from` chained k deep. Seed 000 measured 76.4 ns (Python 2.7) and 88.3 ns (Python 3.4) per value
for the plain generator and 113.7 ns (Python 3.4) through `yield from`, on a Pentium G2030, and found the
cost linear in depth.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from ctxbench_kernels_py.kernels.seeds import seed_000
from ctxbench_kernels_py.spec import Kernel, Param, SelfCheckError, Tally


def _counter(n: int) -> Iterator[int]:
    i = 0
    while i < n:
        yield i
        i += 1


def _chain(n: int, depth: int) -> Iterator[int]:
    # `depth` delegating frames, then the leaf: depth=1 is `yield from _counter(n)`, like the seed's k=1.
    if depth <= 1:
        yield from _counter(n)
    else:
        yield from _chain(n, depth - 1)


def _drain(gen: Iterator[int], loops: int, tally: Tally, kernel: str) -> float:
    last = -1
    t0 = time.perf_counter()
    for last in gen:  # noqa: B007 - the last value is the result that proves every value arrived
        pass
    dt = time.perf_counter() - t0
    delivered = last + 1
    if delivered != loops:
        raise SelfCheckError(f"{kernel}: the generator delivered {delivered} values, expected {loops}")
    tally.record(loops, "resumes", delivered, last)
    return dt


# coroutine.py_generator: one op = one generator resume (one frame in, one out); seed 000: 88.3 ns
# (Python 3.4).
def bench_generator(params: dict[str, Any], loops: int, tally: Tally) -> float:
    return _drain(_counter(loops), loops, tally, "coroutine.py_generator")


# coroutine.py_yield_from: one op = one value through `depth` yield-from frames (depth+1 frames resumed);
# seed 000: 113.7 ns (Python 3.4, depth not stated, 1 assumed).
def bench_yield_from(params: dict[str, Any], loops: int, tally: Tally) -> float:
    return _drain(_chain(loops, params["depth"]), loops, tally, "coroutine.py_yield_from")


KERNELS = (
    Kernel(
        id="coroutine.py_generator",
        cpu_bound=True,
        title="Python generator resume",
        description=(
            "One op resumes a suspended generator once and receives one value: a `for` loop (the iterator "
            "protocol behind next()) drains `while i < n: yield i; i += 1`. One frame switch in and one "
            "out per op, no OS switch; the figure includes the loop itself (see call.py_loop)."
        ),
        bench=bench_generator,
        seed_reference=seed_000(
            88.3,
            note=(
                "Python 3.4 (py_yield_from.py's test_yield, 8.832 s / 100M), loop included: 25.1 ns above "
                "its bare loop; under Python 2.7 it was 76.4 ns (py_yield.py, 7.643 s / 100M), 22 ns above"
            ),
        ),
    ),
    Kernel(
        id="coroutine.py_yield_from",
        cpu_bound=True,
        title="Python `yield from` chain resume",
        description=(
            "One op receives one value through a chain of `depth` generators each doing `yield from` the "
            "next, down to a leaf generator that yields: each op resumes depth+1 frames on the way in and "
            "suspends them on the way out. No OS switch; the figure includes the consuming `for` loop."
        ),
        bench=bench_yield_from,
        params=(
            Param(
                name="depth",
                type="int",
                default=1,
                min=1,
                max=64,
                sweep=(1, 2, 4, 8, 16, 32, 64),
                help="delegating `yield from` frames between the consumer and the leaf generator",
            ),
        ),
        seed_reference=seed_000(
            113.7,
            params={"depth": 1},
            note=(
                "Python 3.4 (py_yield_from.py's test_yield_loop, 11.375 s / 100M); the write-up does not "
                "say which depth k that figure used, depth=1 is assumed; it plots the cost growing "
                "linearly with depth without giving the figures"
            ),
        ),
    ),
)
