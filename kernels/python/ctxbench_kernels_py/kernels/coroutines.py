"""coroutine.py_greenlet and coroutine.py_asyncio: user-space switches between two coroutines in one OS
thread.

coroutine.py_greenlet: one op = one greenlet.switch() (the main greenlet and a child pass control back and
forth, two switches per round trip), the loop shape of seed 000's py_greenlet.py. Seed 000 measured 535 ns per
round trip (Python 2.7, greenlet version not stated, Pentium G2030), i.e. 268 ns per switch, and saw no
effect of stack depth.
coroutine.py_asyncio: one op = one `await asyncio.sleep(0)` by one of two tasks, after which
the event loop runs the other task: one task switch through the loop's ready queue. No seed measured
asyncio.
"""

from __future__ import annotations

import time
from typing import Any

from ctxbench_kernels_py.kernels.seeds import seed_000
from ctxbench_kernels_py.spec import Kernel, SelfCheckError, Tally, Unsupported


def _require_greenlet() -> None:
    try:
        import greenlet  # noqa: F401
    except ModuleNotFoundError:
        raise Unsupported(
            "greenlet is not installed for this Python; coroutine.py_greenlet needs it (pip install greenlet)"
        ) from None
    except ImportError as exc:
        raise Unsupported(f"greenlet is installed but cannot be imported: {exc}") from None


# coroutine.py_greenlet: one op = one greenlet.switch(), two per round trip; seed 000: 535.3 ns per round trip
# (Python 2.7), 267.6 ns per switch.
def bench_greenlet(params: dict[str, Any], loops: int, tally: Tally) -> float:
    import greenlet

    main = greenlet.getcurrent()

    def child(n: int) -> int:
        i = 0
        while i < n:
            main.switch(i)
            i += 1
        return n  # returning switches to the parent once more

    gr = greenlet.greenlet(child)
    received = 0
    t0 = time.perf_counter()
    value = gr.switch(loops)  # first switch starts the child
    while value != loops:
        received += 1
        value = gr.switch()
    dt = time.perf_counter() - t0
    if received != loops or not gr.dead:
        raise SelfCheckError(f"coroutine.py_greenlet: {received} round trips completed, expected {loops}")
    # start and finish add one switch each: 2*loops + 2 switches for 2*loops ops
    tally.record(2 * loops, "switches", 2 * received + 2, value)
    return dt


# coroutine.py_asyncio: one op = one `await asyncio.sleep(0)` = one task switch via the ready queue; no seed
# figure.
async def _alternate(me: str, n: int, state: list[Any]) -> None:
    import asyncio

    sleep = asyncio.sleep
    for _ in range(n):
        # state = [task that ran last, task steps, steps that followed a step of the other task]
        if state[0] != me:
            state[2] += 1
        state[0] = me
        state[1] += 1
        await sleep(0)


async def _two_tasks(n: int, state: list[Any]) -> float:
    import asyncio

    t0 = time.perf_counter()
    await asyncio.gather(_alternate("a", n, state), _alternate("b", n, state))
    return time.perf_counter() - t0


def bench_asyncio(params: dict[str, Any], loops: int, tally: Tally) -> float:
    # Imported here: asyncio is most of the executable's imports, and only this kernel needs it.
    import asyncio

    state: list[Any] = [None, 0, 0]
    loop = asyncio.new_event_loop()
    try:
        dt = loop.run_until_complete(_two_tasks(loops, state))
    finally:
        loop.close()
    steps, switches = state[1], state[2]
    if steps != 2 * loops or switches != steps:
        raise SelfCheckError(
            f"coroutine.py_asyncio: {steps} task steps and {switches} switches between tasks, "
            f"expected {2 * loops}"
        )
    tally.record(2 * loops, "task_switches", switches, state)
    return dt


KERNELS = (
    Kernel(
        id="coroutine.py_greenlet",
        cpu_bound=True,
        title="greenlet switch",
        description=(
            "Two greenlets in one thread hand control back and forth with greenlet.switch(); one op is one "
            "switch (a round trip is two ops). Each switch saves and restores the C stack slice and the "
            "interpreter frame state; no OS switch. Needs the greenlet package (exit 3 without it)."
        ),
        bench=bench_greenlet,
        ops_per_loop=lambda params: 2,
        check_host=_require_greenlet,
        seed_reference=seed_000(
            267.6,
            note=(
                "Python 2.7, greenlet version not stated (py_greenlet.py, 5.353 s / 10M round trips = "
                "535.3 ns per round trip, two switches each, so 267.6 ns per switch); a 100-frame-deeper "
                "stack gave 531.4 ns per round trip"
            ),
        ),
    ),
    Kernel(
        id="coroutine.py_asyncio",
        cpu_bound=True,
        title="asyncio task switch via sleep(0)",
        description=(
            "Two asyncio tasks on one default event loop take turns: each does `await asyncio.sleep(0)` in "
            "a loop. One op is one sleep(0) by one task, after which the loop runs the other task's next "
            "step: one task switch per op, through the ready queue; no OS switch."
        ),
        bench=bench_asyncio,
        ops_per_loop=lambda params: 2,
    ),
)
