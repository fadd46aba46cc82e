"""stats/pool.py: the results' CIs of the median computed in worker processes are the very ones computed in
the server's own process, and a pool whose worker dies is replaced without losing a batch."""

from __future__ import annotations

import os
import signal

import pytest

from ctxbench_server.stats import pool as stats_pool


def jobs() -> list[stats_pool.Job]:
    return [
        ("r1", [10.0, 11.0, 12.0, 10.5, 11.5, 10.2, 10.8, 11.1, 10.9, 11.3], None),
        ("r2", [1.0, 1.0, 1.0, 2.0, 2.0, 2.0], [0, 0, 0, 1, 1, 1]),
        ("r3", [float(i % 7) for i in range(600)], None),
        ("r4", [], None),  # no samples: the ValueError, not an exception of the pool
        ("r5", [1.0, float("nan")], None),
    ]


def test_workers_compute_what_this_process_computes() -> None:
    got = stats_pool.compute(jobs())
    here = stats_pool.compute_all(jobs())
    assert got.keys() == here.keys() == {"r1", "r2", "r3", "r4", "r5"}
    for rid in ("r1", "r2", "r3"):
        assert got[rid] == here[rid]  # the bootstrap CI, bit for bit
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
