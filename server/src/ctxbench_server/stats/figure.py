"""A result's figure: the one number Compare, History, alerts, fleet changes and the kernels page compare
(docs/architecture.md "Statistics").

A long-sample result (no harness estimator: every result before issue 24) is its samples' median, as
before. A short-sample result's samples are each the low percentile of a block of samples shorter than a
time slice (the kernel's estimator), one per repetition, from several kernel processes spread over the
run. Its figure is their FIGURE_QUANTILE, not their median: a shared host's speed moves in episodes of
tens of milliseconds (a neighbour on the physical core, the clock), long enough to cover a whole
repetition or launch, so whole launches read 10-60 % dearer while others of the same item read the
primitive's cost. The median over repetitions lands wherever the slow share of the run puts it; a low
quantile lands on the repetitions the host left alone. Measured on this VM (docs/fidelity.md "Which
figure": 8 runs of 7 launches x 2 repetitions, 14 points of every family, on the host as it is and
beside a build, three times on 2026-11-28, p5 in the third): the run-to-run spread of the median 4-60 %
(and 1500 %+ for thread.create_join beside a build); of the 5th percentile at most 12 % for the
CPU-bound points, 0.5-1.6 % in the median point. p5 of 14 values lies between the two fastest, so one
launch the host left alone (its two repetitions) sets it; p10 needs two, and read a pthread mutex 51 %
apart in a run where one launch was; the minimum is a single reading. Kernels whose own cost varies from
op to op (thread.create_join, process.fork_wait, ipc.pipe, sched.yield beside a build) stay wide with
any statistic; their floors say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MEDIAN = 0.5
FIGURE_QUANTILE = 0.05  # of a short-sample result's repetitions

FIGURE_DOC = (
    "the compared figure: the median of the samples for long samples, their 5th percentile for short"
    " samples (harness.estimator set), whose repetitions a shared host's slow episodes move together"
    ' (docs/architecture.md "Statistics"); ci_low and ci_high are its CI'
)
FIGURE_STAT_DOC = 'what the figure is: "median" or "p5" (of the samples)'


def quantile_for(estimator: str | None) -> float:
    """The quantile of its samples that is a result's figure (estimator: its harness.estimator)."""
    return FIGURE_QUANTILE if estimator else MEDIAN


def stat_name(q: float) -> str:
    """What a figure is, in words a reader knows: "median", "p5"."""
    return "median" if q == MEDIAN else f"p{round(100 * q)}"


def stat_of(estimator: str | None) -> str:
    """stat_name of the figure of a result with this harness.estimator."""
    return stat_name(quantile_for(estimator))


def of_sorted(a: Sequence[float] | Any, q: float) -> float:
    """The q-quantile of sorted values (a list or a numpy array), interpolated linearly between order
    statistics (numpy's default method); the median exactly as (a[(n-1)//2] + a[n//2]) / 2."""
    n = len(a)
    if q == MEDIAN:
        return (a[(n - 1) // 2] + a[n // 2]) / 2
    pos = (n - 1) * q
    i = int(pos)
    j = min(i + 1, n - 1)
    return a[i] + (a[j] - a[i]) * (pos - i)
