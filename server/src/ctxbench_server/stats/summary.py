"""Per-result statistics: location and spread (describe: what ingest stores before it acknowledges a
result), and the CI of the median (median_ci: stats/bootstrap.py's hierarchical bootstrap over launches
then samples, or min-max, labelled so, with fewer than 6 launches), filled in after the ack
(ingest/ci.py: docs/architecture.md "Ingest")."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

from ctxbench_server.lru import LRU
from ctxbench_server.stats import bootstrap, figure, pool

CONFIDENCE = 0.95
# Up to this many samples describe() works in plain Python, past it in numpy.
SMALL = 64
# Stored in results.ci_method before issue 11 (the benchmark fill still writes the first).
CI_ORDER_STATISTICS = "binomial order statistics, 95 %"
CI_MIN_MAX = "min-max (n < 6: no order-statistic interval reaches 95 %)"


@dataclass(frozen=True)
class Summary:
    """A result's location and spread: everything but the CI of its figure."""

    n: int
    median: float
    figure: float  # the compared figure (stats/figure.py): the median, or a low quantile
    mean: float
    stddev: float  # sample (n - 1); 0.0 when n == 1
    cv: float | None  # stddev / mean; None when mean == 0
    min: float
    max: float

    def as_dict(self) -> dict[str, float | int | str | None]:
        # the fields are flat: a shallow copy is asdict's answer without its recursion (once per result)
        return dict(self.__dict__)


@dataclass(frozen=True)
class Stats(Summary):
    """Summary and the CI of its figure."""

    ci_low: float
    ci_high: float
    ci_method: str


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


def describe(samples: Sequence[float], q: float = figure.MEDIAN) -> Summary:
    """Location and spread of the samples, and their q-quantile as the figure (figure.quantile_for).
    Raises ValueError when there are none, or one is not finite."""
    if not samples:
        raise ValueError("no samples")
    if not all(math.isfinite(x) for x in samples):
        raise ValueError("non-finite sample")
    if len(samples) <= SMALL:
        return _describe_small(samples, q)
    a = np.sort(np.asarray(samples, dtype=float))
    n = int(a.size)
    mean = float(a.mean())
    stddev = float(a.std(ddof=1)) if n > 1 else 0.0
    return Summary(
        n=n,
        median=float((a[(n - 1) // 2] + a[n // 2]) / 2),  # np.median's value, without its copies
        figure=float(figure.of_sorted(a, q)),
        mean=mean,
        stddev=stddev,
        cv=(stddev / mean) if mean != 0 else None,
        min=float(a[0]),
        max=float(a[-1]),
    )


def _describe_small(samples: Sequence[float], q: float) -> Summary:
    """describe() in plain Python: for a few samples numpy's calls cost more than the arithmetic.
    math.fsum keeps the mean exact to the last bit (numpy's pairwise sum may differ from it there)."""
    a = sorted(float(x) for x in samples)
    n = len(a)
    mean = math.fsum(a) / n
    stddev = math.sqrt(math.fsum((x - mean) ** 2 for x in a) / (n - 1)) if n > 1 else 0.0
    return Summary(
        n=n,
        median=(a[(n - 1) // 2] + a[n // 2]) / 2,
        figure=figure.of_sorted(a, q),
        mean=mean,
        stddev=stddev,
        cv=(stddev / mean) if mean != 0 else None,
        min=a[0],
        max=a[-1],
    )


def compute(
    samples: Sequence[float],
    sample_launches: Sequence[int] | None = None,
    key: str = "",
    q: float = figure.MEDIAN,
) -> Stats:
    """The result's statistics; `key` (its id) seeds the bootstrap, so compare recomputes the same CI."""
    s = describe(samples, q)
    ci = bootstrap.median_ci(samples, sample_launches, key, q)
    return Stats(**s.__dict__, ci_low=ci.low, ci_high=ci.high, ci_method=ci.method)


# CIs a reader computed for results the filler had not reached yet (by result id; the values never change)
_read_cis: LRU[str, bootstrap.MedianCI] = LRU(4096)
# A reader's CIs not filled yet are computed on the event loop up to this many samples in all (a few
# default-profile results: milliseconds), past it in the statistics workers (prefill_cis). One result
# of more samples is not computed by a reader at all: it reads "not yet" until the filler, which is
# already computing it in the workers, writes it; its bootstrap takes seconds, and a read would hold
# every other request and stream (inline) or wait for the workers behind the filler (prefill).
INLINE_SAMPLES = 5000


def stored_ci(
    result_id: str,
    samples: Sequence[float] | None,
    sample_launches: Sequence[int] | None,
    stored: tuple[float | None, float | None, str | None],
    estimator: str | None,
) -> tuple[float | None, float | None, str | None]:
    """A result's (ci_low, ci_high, ci_method) as stored, or, for a measured result whose CI the filler
    (ingest/ci.py) has not written yet, the same values computed now (seeded by its id): a reader does
    not see "not yet" in the moment between a result's ack and its CI, unless the result has more than
    INLINE_SAMPLES samples."""
    if stored[2] is not None or not samples:
        return stored
    ci = _read_cis.get(result_id)
    if ci is None:
        if len(samples) > INLINE_SAMPLES:
            return stored
        ci = bootstrap.median_ci(samples, sample_launches, result_id, figure.quantile_for(estimator))
        _read_cis.put(result_id, ci)
    return ci.low, ci.high, ci.method


class _Stored(Protocol):
    """A stored result as prefill_cis reads it (models.Result)."""

    @property
    def id(self) -> str: ...
    @property
    def samples(self) -> Sequence[float] | None: ...
    @property
    def sample_launches(self) -> Sequence[int] | None: ...
    @property
    def ci_method(self) -> str | None: ...
    @property
    def estimator(self) -> str | None: ...


async def prefill_cis(results: Sequence[_Stored]) -> None:
    """Before a reader calls stored_ci on each of `results`: the CIs it would compute now, computed in
    the statistics workers when they are many samples in all (INLINE_SAMPLES), and kept for stored_ci."""
    jobs = [
        (r.id, r.samples, r.sample_launches, figure.quantile_for(r.estimator))
        for r in results
        if r.ci_method is None
        and r.samples
        and len(r.samples) <= INLINE_SAMPLES
        and _read_cis.get(r.id) is None
    ]
    if sum(len(samples) for _, samples, _, _ in jobs) <= INLINE_SAMPLES:
        return
    for result_id, ci in (await asyncio.to_thread(pool.compute, jobs)).items():
        if isinstance(ci, bootstrap.MedianCI):
            _read_cis.put(result_id, ci)
