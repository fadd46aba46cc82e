"""Results' CIs of their figure in worker processes, not threads of the server's own process.

A result's bootstrap (stats/bootstrap.py) is many small numpy calls: each takes the GIL, so in threads it
competed with the event loop (gRPC, the ingest writer) for one lock, and cost several times what it
costs alone (docs/performance.md `bench:stats-pool-s7`). Worker processes have their own GIL: the event
loop keeps its core. Ingest's CI filler (ingest/ci.py) is their one caller.

One pool per server process, started on first use (an idle server has no workers) with `spawn` (a fork of
a process with gRPC's and asyncio's threads is unsafe). A pool that breaks (a worker killed) is replaced,
and that batch is computed in the calling thread: a report is never lost to it.
"""

from __future__ import annotations

import importlib.machinery
import logging
import math
import multiprocessing
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ctxbench_server.stats import bootstrap

log = logging.getLogger(__name__)

# result id, samples, sample launches (None: one launch), the figure's quantile (stats/figure.py)
Job = tuple[str, Sequence[float], Sequence[int] | None, float]
Computed = dict[str, bootstrap.MedianCI | ValueError]

# Two on a 2-CPU host: a 100 000-sample result's bootstrap does not hold every other batch.
WORKERS = max(2, min(4, (os.cpu_count() or 2) - 1))

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_stopped: ProcessPoolExecutor | None = None  # the pool shutdown() ended: its broken futures are no loss


class PoolStopped(RuntimeError):
    """The server stopped while this batch was computed: nobody waits for it, and a new filler finds
    the results again (their CI is still null)."""


def compute_all(jobs: Sequence[Job]) -> Computed:
    """Each job's CI of its figure, or the ValueError that says why it has none (no samples, a
    non-finite one)."""
    out: Computed = {}
    for result_id, samples, launches, q in jobs:
        try:
            if not samples:
                raise ValueError("no samples")
            if not all(math.isfinite(x) for x in samples):
                raise ValueError("non-finite sample")
            out[result_id] = bootstrap.median_ci(samples, launches, result_id, q)
        except ValueError as e:
            out[result_id] = e
    return out


def _spawn_without_the_server() -> None:
    """`spawn` re-imports the parent's main script in each worker: here the `ctxbench-server` console
    script, and with it the whole server (~110 MB and 1 s a worker instead of ~30 MB and 0.1 s). It
    skips that for a package's `__main__` (a `python -m` run): the script is named as one."""
    main = sys.modules.get("__main__")
    if main is not None and getattr(main, "__spec__", None) is None:
        main.__spec__ = importlib.machinery.ModuleSpec("ctxbench_server.__main__", None)


def _get() -> ProcessPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _spawn_without_the_server()
            _pool = ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn"))
        return _pool


def _replace(broken: ProcessPoolExecutor) -> None:
    global _pool
    with _lock:
        if _pool is broken:
            _pool = None
    broken.shutdown(wait=False, cancel_futures=True)


def compute(jobs: Sequence[Job]) -> Computed:
    """compute_all(jobs) in a worker process; blocks its (worker) thread without holding the GIL. Never
    on the event loop."""
    if not jobs:
        return {}
    pool = _get()
    try:
        return pool.submit(compute_all, list(jobs)).result()
    except BrokenProcessPool:
        if pool is _stopped:
            raise PoolStopped("the statistics workers were stopped with the server") from None
        log.warning("statistics workers gone; a new pool takes the next batches, this one computed here")
        _replace(pool)
        return compute_all(jobs)


def shutdown() -> None:
    """Stops the workers (a server stopping) without waiting for a batch they compute: its thread would
    hold the process's exit for as long (a 100 000-sample result's bootstrap takes seconds). The next use
    starts new ones."""
    global _pool, _stopped
    with _lock:
        pool, _pool = _pool, None
        if pool is not None:
            _stopped = pool
    if pool is not None:
        # (ProcessPoolExecutor.terminate_workers() from Python 3.14; shutdown() forgets the processes)
        workers = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for worker in workers:
            worker.terminate()
