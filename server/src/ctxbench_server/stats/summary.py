"""Per-result statistics: location, spread and the CI of the median (stats/bootstrap.py: a hierarchical
bootstrap over launches then samples, or min-max, labelled so, with fewer than 6 launches)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ctxbench_server.stats import bootstrap

CONFIDENCE = 0.95
# Stored in results.ci_method before issue 11 (the benchmark fill still writes the first).
CI_ORDER_STATISTICS = "binomial order statistics, 95 %"
CI_MIN_MAX = "min-max (n < 6: no order-statistic interval reaches 95 %)"


@dataclass(frozen=True)
class Stats:
    n: int
    median: float
    mean: float
    stddev: float  # sample (n - 1); 0.0 when n == 1
    cv: float | None  # stddev / mean; None when mean == 0
    min: float
    max: float
    ci_low: float
    ci_high: float
    ci_method: str

    def as_dict(self) -> dict[str, float | int | str | None]:
        # the fields are flat: a shallow copy is asdict's answer without its recursion (once per result)
        return dict(self.__dict__)


@lru_cache(maxsize=4096)
def median_ci_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """1-based ranks (j, k) of the order statistics bounding the median with >= confidence.

    With B ~ Binomial(n, 1/2) the number of samples below the true median, the interval
    [X_(j), X_(k)] with k = n - j + 1 covers it with probability P(j <= B <= n - j) = 1 - 2 P(B <= j - 1).
    The widest j still reaching `confidence` gives the narrowest such interval. None when even
    [X_(1), X_(n)] falls short (n < 6 at 95 %).
    """
    if n < 1:
        return None
    from scipy.stats import binom  # imported on first use: scipy.stats costs ~1 s at start-up

    cdf = binom.cdf(np.arange(n), n, 0.5)  # cdf[i] = P(B <= i)
    ok = np.nonzero(cdf <= (1.0 - confidence) / 2.0 + 1e-12)[0]  # P(B <= j - 1) <= alpha / 2
    if ok.size == 0:
        return None
    j = int(ok[-1]) + 1  # j - 1 = largest i with P(B <= i) <= alpha/2
    k = n - j + 1
    if j > k:
        return None
    return j, k


def compute(samples: Sequence[float], sample_launches: Sequence[int] | None = None, key: str = "") -> Stats:
    """The result's statistics; `key` (its id) seeds the bootstrap, so compare recomputes the same CI."""
    if not samples:
        raise ValueError("no samples")
    if not all(math.isfinite(x) for x in samples):
        raise ValueError("non-finite sample")
    a = np.sort(np.asarray(samples, dtype=float))
    n = int(a.size)
    mean = float(a.mean())
    stddev = float(a.std(ddof=1)) if n > 1 else 0.0
    ci = bootstrap.median_ci(samples, sample_launches, key)
    return Stats(
        n=n,
        median=float((a[(n - 1) // 2] + a[n // 2]) / 2),  # np.median's value, without its copies
        mean=mean,
        stddev=stddev,
        cv=(stddev / mean) if mean != 0 else None,
        min=float(a[0]),
        max=float(a[-1]),
        ci_low=ci.low,
        ci_high=ci.high,
        ci_method=ci.method,
    )
