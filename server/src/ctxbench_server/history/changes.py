"""When a kernel point's cost really changed on one machine: step detection over its run medians.

Two stages, as asv's step detection does (candidates from a penalised fit, then a test for each), with
the test of the "Honest comparisons" rule (compare/significance.py) so that a change in History means
the same as a significant ratio in Compare:

1. Candidates. The series of run medians, in log space, is fitted with piecewise-constant segments of at
   least MIN_SEGMENT runs by optimal partitioning (dynamic programming over every split, squared error
   plus a penalty per segment). The penalty is BIC-like, PENALTY_FACTOR * sigma^2 * ln(n), with sigma the
   run-to-run noise estimated from successive differences (1.4826 * median |x[i+1] - x[i]| / sqrt 2): a
   step moves one difference only, so the estimate is not inflated by the steps it looks for.
2. Test. Each boundary between two fitted segments compares the runs just before it with the runs just
   after it (up to WINDOW on each side): the ratio of their medians, a bootstrap CI over runs (each run's
   median is one unit; resampled within each side, seeded by the boundary's run id, so the answer never
   changes), and the noise learned from each side's own spread (relative range, as Compare learns it;
   the default floor for a side with fewer than 2 runs). The step is real only when the CI lies wholly
   outside [1 / (1 + noise), 1 + noise].

A boundary that fails the test is still returned (significant false, with the rule that decided), so a
reader sees why a visible jump is not called a change. The newest run alone cannot make a change: a
segment needs MIN_SEGMENT runs ("one more run will tell" is what the explorer says about it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ctxbench_server.compare import significance as sig
from ctxbench_server.stats import bootstrap

MIN_SEGMENT = 2
WINDOW = sig.HISTORY  # runs on each side of a boundary that the test looks at
PENALTY_FACTOR = 3.0
MIN_SIGMA = 0.002  # a series of identical medians still needs a finite penalty
RESAMPLES = 2000
CI_LEVEL = bootstrap.CONFIDENCE


@dataclass(frozen=True)
class Step:
    index: int  # first run after the change
    before: float  # median of the runs before (up to WINDOW)
    after: float  # median of the runs after (up to WINDOW)
    ratio: float  # after / before
    ci_low: float
    ci_high: float
    noise: float
    noise_source: str  # "runs" | "default"
    rule: str  # compare/significance.py's rule names
    runs_before: int
    runs_after: int

    @property
    def significant(self) -> bool:
        return self.rule == sig.RULE_SIGNIFICANT


def sigma(logs: np.ndarray) -> float:
    """Robust run-to-run noise of a log series from its successive differences."""
    if logs.size < 2:
        return MIN_SIGMA
    d = np.abs(np.diff(logs))
    return max(float(1.4826 * np.median(d) / math.sqrt(2.0)), MIN_SIGMA)


def segment(logs: np.ndarray, penalty: float, min_len: int = MIN_SEGMENT) -> list[int]:
    """Start indices (after the first) of the optimal piecewise-constant fit: minimises the squared error
    of each segment around its mean plus `penalty` per segment, segments of at least min_len."""
    n = int(logs.size)
    if n < 2 * min_len:
        return []
    s1 = np.concatenate(([0.0], np.cumsum(logs)))
    s2 = np.concatenate(([0.0], np.cumsum(logs * logs)))
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    prev = np.zeros(n + 1, dtype=int)
    for j in range(min_len, n + 1):
        i = np.arange(0, j - min_len + 1)  # segment logs[i:j], at least min_len long
        sq = s1[j] - s1[i]
        c = best[i] + (s2[j] - s2[i] - sq * sq / (j - i)) + penalty  # best[i] is inf for 0 < i < min_len
        k = int(np.argmin(c))
        best[j], prev[j] = c[k], i[k]
    cuts = []
    j = n
    while j > 0:
        j = int(prev[j])
        if j > 0:
            cuts.append(j)
    return sorted(cuts)


def _ratio_ci(before: np.ndarray, after: np.ndarray, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    b = np.median(rng.choice(before, size=(RESAMPLES, before.size)), axis=1)
    a = np.median(rng.choice(after, size=(RESAMPLES, after.size)), axis=1)
    return bootstrap.percentile_ci(a / b, CI_LEVEL)


def check_boundary(
    medians: Sequence[float], lo: int, cut: int, hi: int, kernel_id: str, family: str, key: str
) -> Step:
    """The step at `cut`, from the runs [max(lo, cut - WINDOW), cut) against [cut, min(hi, cut + WINDOW))."""
    before = np.asarray(medians[max(lo, cut - WINDOW) : cut], dtype=float)
    after = np.asarray(medians[cut : min(hi, cut + WINDOW)], dtype=float)
    mb, ma = float(np.median(before)), float(np.median(after))
    lo_ci, hi_ci = _ratio_ci(before, after, bootstrap.seed_for(key))
    noise, source = sig.noise_for(
        kernel_id, family, [sig.spread(before.tolist()), sig.spread(after.tolist())]
    )
    enough = before.size >= MIN_SEGMENT and after.size >= MIN_SEGMENT
    return Step(
        index=cut,
        before=mb,
        after=ma,
        ratio=ma / mb,
        ci_low=lo_ci,
        ci_high=hi_ci,
        noise=noise,
        noise_source=source,
        rule=sig.rule(lo_ci, hi_ci, noise, enough),
        runs_before=int(before.size),
        runs_after=int(after.size),
    )


def detect(medians: Sequence[float], kernel_id: str, family: str, keys: Sequence[str]) -> list[Step]:
    """Every candidate step of a series of run medians (oldest first, all > 0), each tested; keys[i]
    (the i-th run's id) seeds the test of a step at i."""
    x = np.log(np.asarray(medians, dtype=float))
    if x.size < 2 * MIN_SEGMENT or not np.all(np.isfinite(x)):
        return []
    penalty = PENALTY_FACTOR * sigma(x) ** 2 * math.log(x.size)
    cuts = segment(x, penalty)
    bounds = [0, *cuts, int(x.size)]
    return [
        check_boundary(medians, bounds[k - 1], bounds[k], bounds[k + 1], kernel_id, family, keys[bounds[k]])
        for k in range(1, len(bounds) - 1)
    ]
