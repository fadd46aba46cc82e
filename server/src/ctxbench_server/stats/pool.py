"""The reports' statistics in worker processes, not threads of the server's own process.

A result's bootstrap (stats/bootstrap.py) is many small numpy calls: each takes the GIL, so in threads it
competed with the event loop (gRPC, the ingest writer) for one lock. Measured with `load.py ingest` (20
agents x 1000 items offered at 5000/s, docs/performance.md `bench:stats-pool-s7`): the statistics threads
used 1.0-1.3 ms of CPU a result, three times what the same computation costs alone (~0.4 ms), and the
server took ~650 results/s; with no statistics at all it took ~1900/s. Worker processes have their own
GIL: the event loop keeps its core.

One pool per server process, started on first use (an idle server has no workers) with `spawn` (a fork of
a process with gRPC's and asyncio's threads is unsafe). A pool that breaks (a worker killed) is replaced,
and that batch is computed in the calling thread: a report is never lost to it.
"""

from __future__ import annotations

import importlib.machinery
import logging
import multiprocessing
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ctxbench_server.stats import summary as stats

log = logging.getLogger(__name__)

# result id, samples, sample launches (None: one launch)
Job = tuple[str, Sequence[float], Sequence[int] | None]
Computed = dict[str, stats.Stats | ValueError]

# Two on a 2-CPU host: a 100 000-sample report (~2 s of bootstrap) does not hold every other batch.
WORKERS = max(2, min(4, (os.cpu_count() or 2) - 1))

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None


def compute_all(jobs: Sequence[Job]) -> Computed:
    """Each job's statistics, or the ValueError that says why it has none (no samples, a non-finite one)."""
    out: Computed = {}
    for result_id, samples, launches in jobs:
        try:
            out[result_id] = stats.compute(samples, launches, result_id)
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
        log.warning("statistics workers gone; a new pool takes the next batches, this one computed here")
        _replace(pool)
        return compute_all(jobs)


def shutdown() -> None:
    """Stops the workers (a server stopping); the next use starts new ones."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
