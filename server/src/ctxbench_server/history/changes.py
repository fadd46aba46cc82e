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
   after it (up to WINDOW on each side): the ratio of their medians and a bootstrap CI in two stages, as
   Compare's is (Kalibera & Jones): the runs are resampled within each side, then each drawn run's
   median is drawn from its own CI (log-normal, as wide as the run's 95 % interval), so a run whose
   launches disagreed counts for what it showed, not as an exact value (seeded by the boundary's run id,
   so the answer never changes). The noise is learned from each side's own spread (relative range, as
   Compare learns it); a side of fewer than MIN_RUNS_LEARNED runs has none, and for it the default
   floor counts SHORT_SIDE_FACTOR times: its CI rests on 2 runs, and a percentile interval of k units
   covers about 1 - 2^(1-k) of the time (half, for 2), so the floor stands for the rest, as it does
   twice over for Compare's one-launch side (significance.effective_noise). The step is real only when
   the CI lies wholly outside [1 / (1 + noise), 1 + noise].

Why both (docs/fidelity.md "Alerts on an unchanged host"): a schedule beside a build opened an alert on
2 runs 17 % dearer than the 8 before (CI 1.091-1.249 against the 5 % floor) that came back down; and
process.fork_wait, whose launches within a run differ several-fold, read 3 runs 30 % cheaper than the 3
before with run CIs of 36-2076 % of their medians, which the medians alone called a change.

3. Load. A step that passes the test is not called a change of the primitive when other processes kept
   the host's CPUs busier on one side than on the other by LOAD_SHIFT or more (each side's median of its
   runs' `disturbance`, the largest other-process share of a kept launch, as the agent measured it):
   rule RULE_LOAD. Short samples take the time the kernel was descheduled out of a figure, but an op
   that is a yield or a wake-up costs what the scheduler makes it cost, and a busy host changes that
   either way: sched.yield read +10 % and ipc.pipe +83 % beside a build with no sample disturbed, and
   thread.create_join -59 % (its new thread no longer woke an idle CPU; docs/fidelity.md "History when
   the host's load changes"). History shows that step with both sides' load. A step whose sides ran
   under the same load (a seccomp filter, a kernel update) is untouched.

A boundary that fails the test is still returned (significant false, with the rule that decided), so a
reader sees why a visible jump is not called a change. The newest run alone cannot make a change: a
segment needs MIN_SEGMENT runs ("one more run will tell" is what the explorer says about it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ctxbench_server.compare import significance as sig
from ctxbench_server.stats import bootstrap

MIN_SEGMENT = 2
WINDOW = sig.HISTORY  # runs on each side of a boundary that the test looks at
PENALTY_FACTOR = 3.0
MIN_SIGMA = 0.002  # a series of identical medians still needs a finite penalty
RESAMPLES = 2000
CI_LEVEL = bootstrap.CONFIDENCE
# A run's CI read as a log-normal 95 % interval of its median: sd = ln(high / low) / (2 * Z_RUN_CI).
Z_RUN_CI = NormalDist().inv_cdf(0.5 + bootstrap.CONFIDENCE / 2)
# The default floor's weight for a side of fewer than MIN_RUNS_LEARNED runs (the module docstring).
SHORT_SIDE_FACTOR = sig.ONE_LAUNCH_FACTOR
# How much busier other processes must have kept the host's CPUs on one side of a step than on the other
# for the step to be the load's (the module docstring, 3.): a build beside the kernel is 0.5-0.9, a quiet
# host under 0.1, a second agent's kernel on a 2-CPU host ~0.5.
LOAD_SHIFT = 0.3
RULE_LOAD = "load_changed"

RunCI = tuple[float | None, float | None]  # a run's CI of its median (None, None: unknown)


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
    rule: str  # compare/significance.py's rule names, or RULE_LOAD
    runs_before: int
    runs_after: int
    busy_before: float | None = None  # median disturbance of the runs before (None: not known)
    busy_after: float | None = None

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


def run_sds(medians: Sequence[float], cis: Sequence[RunCI] | None) -> np.ndarray:
    """Each run's log-scale uncertainty from its CI (0 where unknown: the median counts as exact)."""
    out = np.zeros(len(medians))
    for i, (lo, hi) in enumerate(cis or ()):
        if lo is not None and hi is not None and 0 < lo < hi and math.isfinite(hi):
            out[i] = math.log(hi / lo) / (2.0 * Z_RUN_CI)
    return out


def _side_medians(rng: np.random.Generator, x: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """RESAMPLES medians of a side: its runs resampled, then each drawn run's median from its own CI."""
    idx = rng.choice(x.size, size=(RESAMPLES, x.size))
    if not sd.any():
        return np.median(x[idx], axis=1)
    return np.median(x[idx] * np.exp(sd[idx] * rng.standard_normal(idx.shape)), axis=1)


def _ratio_ci(
    before: np.ndarray, after: np.ndarray, sd_before: np.ndarray, sd_after: np.ndarray, seed: int
) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    b = _side_medians(rng, before, sd_before)
    a = _side_medians(rng, after, sd_after)
    return bootstrap.percentile_ci(a / b, CI_LEVEL)


def _median_known(xs: Sequence[float | None]) -> float | None:
    known = [x for x in xs if x is not None]
    return float(np.median(known)) if known else None


def load_explains(busy_before: float | None, busy_after: float | None) -> bool:
    """Whether other processes kept the host's CPUs busier on one side by LOAD_SHIFT or more."""
    if busy_before is None or busy_after is None:
        return False
    return abs(busy_after - busy_before) >= LOAD_SHIFT


def check_boundary(
    medians: Sequence[float],
    lo: int,
    cut: int,
    hi: int,
    kernel_id: str,
    family: str,
    key: str,
    sds: np.ndarray | None = None,
    busy: Sequence[float | None] | None = None,
) -> Step:
    """The step at `cut`, from the runs [max(lo, cut - WINDOW), cut) against [cut, min(hi, cut + WINDOW));
    sds[i]: run i's log-scale uncertainty (run_sds), none known without it; busy[i]: run i's disturbance
    (the other processes' largest share of the host's CPUs during a launch; None: not known)."""
    b0, a1 = max(lo, cut - WINDOW), min(hi, cut + WINDOW)
    before = np.asarray(medians[b0:cut], dtype=float)
    after = np.asarray(medians[cut:a1], dtype=float)
    sd = np.zeros(len(medians)) if sds is None else sds
    mb, ma = float(np.median(before)), float(np.median(after))
    lo_ci, hi_ci = _ratio_ci(before, after, sd[b0:cut], sd[cut:a1], bootstrap.seed_for(key))
    short = min(before.size, after.size) < sig.MIN_RUNS_LEARNED
    noise, source = sig.noise_for(
        kernel_id,
        family,
        [sig.spread(before.tolist()), sig.spread(after.tolist())],
        default_factor=SHORT_SIDE_FACTOR if short else 1.0,
    )
    enough = before.size >= MIN_SEGMENT and after.size >= MIN_SEGMENT
    rule = sig.rule(lo_ci, hi_ci, noise, enough)
    busy_b = _median_known(busy[b0:cut]) if busy is not None else None
    busy_a = _median_known(busy[cut:a1]) if busy is not None else None
    if rule == sig.RULE_SIGNIFICANT and load_explains(busy_b, busy_a):
        rule = RULE_LOAD
    return Step(
        index=cut,
        before=mb,
        after=ma,
        ratio=ma / mb,
        ci_low=lo_ci,
        ci_high=hi_ci,
        noise=noise,
        noise_source=source,
        rule=rule,
        runs_before=int(before.size),
        runs_after=int(after.size),
        busy_before=busy_b,
        busy_after=busy_a,
    )


def detect(
    medians: Sequence[float],
    kernel_id: str,
    family: str,
    keys: Sequence[str],
    cis: Sequence[RunCI] | None = None,
    busy: Sequence[float | None] | None = None,
) -> list[Step]:
    """Every candidate step of a series of run medians (oldest first, all > 0), each tested; keys[i]
    (the i-th run's id) seeds the test of a step at i; cis[i], the i-th run's CI of its median (none
    given: each median counts as exact); busy[i], the i-th run's disturbance (none given: the load is
    not looked at)."""
    x = np.log(np.asarray(medians, dtype=float))
    if x.size < 2 * MIN_SEGMENT or not np.all(np.isfinite(x)):
        return []
    penalty = PENALTY_FACTOR * sigma(x) ** 2 * math.log(x.size)
    cuts = segment(x, penalty)
    bounds = [0, *cuts, int(x.size)]
    sds = run_sds(medians, cis)
    return [
        check_boundary(
            medians, bounds[k - 1], bounds[k], bounds[k + 1], kernel_id, family, keys[bounds[k]], sds, busy
        )
        for k in range(1, len(bounds) - 1)
    ]
