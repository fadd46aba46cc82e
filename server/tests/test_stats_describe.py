"""stats.summary.describe: what ingest stores before the ack. Plain Python for a few samples, numpy past
SMALL: both give numpy's figures (the mean and spread to rounding, the order statistics exactly)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ctxbench_server.stats import summary as stats


@pytest.mark.parametrize("n", [1, 2, 6, 14, stats.SMALL, stats.SMALL + 1, 1000])
def test_describe_gives_numpys_figures_either_way(n: int) -> None:
    rng = random.Random(n)
    x = [rng.gauss(100.0, 7.0) for _ in range(n)]
    s = stats.describe(x)
    a = np.asarray(x)
    assert s.n == n and s.min == a.min() and s.max == a.max() and s.median == float(np.median(a))
    assert s.mean == pytest.approx(float(a.mean()), rel=1e-14)
    assert s.stddev == pytest.approx(float(a.std(ddof=1)) if n > 1 else 0.0, rel=1e-12)
    assert s.cv == pytest.approx(s.stddev / s.mean)


def test_describe_refuses_what_is_not_a_measurement() -> None:
    for bad in ([], [1.0, float("nan")], [float("inf")]):
        with pytest.raises(ValueError):
            stats.describe(bad)
    assert stats.describe([0.0, 0.0]).cv is None
