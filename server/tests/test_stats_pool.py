"""stats/pool.py: the results' CIs of the median computed in worker processes are the very ones computed in
the server's own process, a pool whose worker dies is replaced without losing a batch, a stopped one
does not hold its caller; readers' big CIs go to the workers (stats/summary.prefill_cis)."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from ctxbench_server.stats import bootstrap, summary
from ctxbench_server.stats import pool as stats_pool


def jobs() -> list[stats_pool.Job]:
    return [
        ("r1", [10.0, 11.0, 12.0, 10.5, 11.5, 10.2, 10.8, 11.1, 10.9, 11.3], None, 0.5),
        ("r2", [1.0, 1.0, 1.0, 2.0, 2.0, 2.0], [0, 0, 0, 1, 1, 1], 0.5),
        ("r3", [float(i % 7) for i in range(600)], None, 0.5),
        ("r4", [], None, 0.5),  # no samples: the ValueError, not an exception of the pool
        ("r5", [1.0, float("nan")], None, 0.5),
        ("r6", [float(i % 13) for i in range(60)], [i % 6 for i in range(60)], 0.1),  # a short-sample figure
    ]


def test_workers_compute_what_this_process_computes() -> None:
    got = stats_pool.compute(jobs())
    here = stats_pool.compute_all(jobs())
    assert got.keys() == here.keys() == {"r1", "r2", "r3", "r4", "r5", "r6"}
    for rid in ("r1", "r2", "r3", "r6"):
        assert got[rid] == here[rid]  # the bootstrap CI, bit for bit
    # r6's CI is its 5th percentile's: below its median's
    median_ci = stats_pool.compute_all([(*jobs()[5][:3], 0.5)])["r6"]
    assert isinstance(got["r6"], bootstrap.MedianCI) and isinstance(median_ci, bootstrap.MedianCI)
    assert got["r6"].high < median_ci.low
    for rid in ("r4", "r5"):
        assert isinstance(got[rid], ValueError) and str(got[rid]) == str(here[rid])
    assert stats_pool._pool is not None
    pids = {pid for pid in stats_pool._pool._processes}
    assert pids and os.getpid() not in pids


def test_a_broken_pool_is_replaced_and_its_batch_computed_anyway() -> None:
    stats_pool.compute(jobs()[:1])
    pool = stats_pool._pool
    assert pool is not None
    for pid in list(pool._processes):
        os.kill(pid, signal.SIGKILL)
    got = stats_pool.compute(jobs())
    here = stats_pool.compute_all(jobs())
    assert all(got[rid] == here[rid] for rid in ("r1", "r2", "r3"))
    assert isinstance(got["r4"], ValueError) and isinstance(got["r5"], ValueError)
    again = stats_pool.compute(jobs()[:1])  # a new pool
    assert stats_pool._pool is not None and stats_pool._pool is not pool
    assert again["r1"] == got["r1"]


@pytest.fixture(autouse=True)
def _fresh_pool() -> None:
    stats_pool.shutdown()


def test_a_stopped_pool_ends_its_batch_at_once_and_says_so() -> None:
    """shutdown() (the server stopping) does not wait for a batch being computed: its caller's thread
    gets PoolStopped (the filler is already cancelled; the CIs stay null for the next filler) at once,
    not the batch computed here, and the next use starts a new pool."""
    big = [("big", [float(i % 97) for i in range(100_000)], list(range(100_000)), 0.5)]
    with ThreadPoolExecutor(1) as ex:
        stats_pool.compute(jobs()[:1])  # the workers started
        running = ex.submit(stats_pool.compute, big * 4)
        time.sleep(0.5)  # the batch is in a worker
        t0 = time.monotonic()
        stats_pool.shutdown()
        with pytest.raises(stats_pool.PoolStopped):
            running.result(timeout=30)
        assert time.monotonic() - t0 < 5  # four 100 000-sample bootstraps take far longer
    assert stats_pool.compute(jobs()[:1])["r1"] == stats_pool.compute_all(jobs()[:1])["r1"]


async def test_a_readers_cis_of_many_samples_are_computed_in_the_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """prefill_cis: results whose CI is not filled yet and whose samples add up to many get it from the
    workers (not on the event loop), and stored_ci returns it; a few small ones are left to stored_ci;
    one result of more than INLINE_SAMPLES samples reads "not yet" (the filler computes it)."""
    many = [
        SimpleNamespace(id=f"p-{i}", samples=[float(i + k % 13) for k in range(600)], sample_launches=None)
        for i in range(10)
    ]
    small = SimpleNamespace(id="p-small", samples=[1.0, 2.0, 3.0], sample_launches=None)
    huge = SimpleNamespace(id="p-huge", samples=[1.0] * (summary.INLINE_SAMPLES + 1), sample_launches=None)
    filled = SimpleNamespace(id="p-filled", samples=[1.0] * 9000, sample_launches=None, ci_method="x")
    for r in (*many, small, huge):
        r.ci_method = None
    for r in (*many, small, huge, filled):
        r.estimator = None
    expected = [bootstrap.median_ci(r.samples, None, r.id) for r in many]

    def not_here(*_a: object) -> None:
        raise AssertionError("computed on the event loop")

    monkeypatch.setattr(bootstrap, "median_ci", not_here)
    await summary.prefill_cis([small, huge, filled])  # few samples (the huge one is the filler's): none sent
    await summary.prefill_cis([*many, small, huge, filled])
    for r, ci in zip(many, expected, strict=True):
        assert summary.stored_ci(r.id, r.samples, None, (None, None, None), None) == (
            ci.low,
            ci.high,
            ci.method,
        )
    assert summary.stored_ci(huge.id, huge.samples, None, (None, None, None), None) == (None, None, None)
