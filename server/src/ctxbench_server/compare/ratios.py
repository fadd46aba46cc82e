"""A machine's result against the baseline's: ratio of figures (stats/figure.py: medians of long samples,
a low quantile of short samples' repetitions), its CI, and whether it is significant.

The CI comes from the two sides' independent hierarchical bootstraps (stats/bootstrap.py: launches, then
samples within them), each seeded by its result id: the i-th resampled median of one side over the i-th
of the other, 2.5 and 97.5 percentiles. Significance is compare/significance.py's rule (the CI must clear
the run-to-run noise, not just 1). Stored results never change, so neither does the answer for a pair of
result ids with the same noise: it is cached per (result id, baseline result id), and one result's
bootstrap medians serve every pair it is in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ctxbench_server.compare import significance as sig
from ctxbench_server.lru import LRU
from ctxbench_server.stats import bootstrap, figure

RESAMPLES = bootstrap.RESAMPLES
CI_LEVEL = bootstrap.CONFIDENCE
CI_RATIO_FEW = "bootstrap_few_launches"  # a side has < 6 units: the percentile interval covers < 95 %

BASELINE: dict[str, Any] = {
    "ratio": 1.0,
    "ci_low": 1.0,
    "ci_high": 1.0,
    "p_value": None,
    "significant": False,
    "ci_kind": None,
    "significance": None,
}
NONE: dict[str, Any] = {
    "ratio": None,
    "ci_low": None,
    "ci_high": None,
    "p_value": None,
    "significant": False,
    "ci_kind": None,
    "significance": None,
}

_pairs: LRU[tuple[str, str, float, str], dict[str, Any]] = LRU(200_000)  # ~0.7 KB each
_medians: LRU[str, tuple[np.ndarray, int, int]] = LRU(4096)  # 16 KB each


def clear_cache() -> None:
    _pairs.clear()
    _medians.clear()


def bootstrap_medians(
    result_id: str,
    samples: Sequence[float],
    sample_launches: Sequence[int] | None = None,
    q: float = figure.MEDIAN,
) -> tuple[np.ndarray, int, int]:
    """(RESAMPLES hierarchical bootstrap figures, launches, units) of one result, seeded by its id; its
    figure is the q-quantile of its samples (stats/figure.py: a result's q never changes)."""
    hit = _medians.get(result_id)
    if hit is not None:
        return hit
    g = bootstrap.group(samples, sample_launches)
    out = (bootstrap.medians(g, bootstrap.seed_for(result_id), q=q), g.count, g.units)
    _medians.put(result_id, out)
    return out


def cell_ci(
    result_id: str, samples: Sequence[float], sample_launches: Sequence[int] | None, q: float = figure.MEDIAN
) -> dict[str, Any]:
    """A cell's CI of its figure (the same numbers stats/summary stores for a new result) and its label."""
    if not samples:
        return {"ci_low": None, "ci_high": None, "ci_kind": None, "n_launches": 0}
    g = bootstrap.group(samples, sample_launches)
    if g.ci_kind == bootstrap.CI_MINMAX:
        return {"ci_low": min(samples), "ci_high": max(samples), "ci_kind": g.ci_kind, "n_launches": g.count}
    lo, hi = bootstrap.percentile_ci(bootstrap_medians(result_id, samples, sample_launches, q)[0])
    return {"ci_low": lo, "ci_high": hi, "ci_kind": g.ci_kind, "n_launches": g.count}


@dataclass(frozen=True)
class Pair:
    """A machine's result and the baseline's, with the run-to-run noise of that point on both."""

    result_id: str
    samples: Sequence[float]
    sample_launches: Sequence[int] | None
    base_id: str
    base_samples: Sequence[float]
    base_launches: Sequence[int] | None
    noise: float
    noise_source: str
    q: float = figure.MEDIAN  # each side's figure is this quantile of its samples (stats/figure.py)
    base_q: float = figure.MEDIAN


def _one(p: Pair) -> dict[str, Any]:
    x, y = np.sort(np.asarray(p.samples, dtype=float)), np.sort(np.asarray(p.base_samples, dtype=float))
    fx, fy = (
        (figure.of_sorted(x, p.q), figure.of_sorted(y, p.base_q))
        if x.size and y.size
        else (math.nan, math.nan)
    )
    mx, my = float(fx), float(fy)
    if not (my > 0 and math.isfinite(mx)):
        return NONE
    bx, lx, ux = bootstrap_medians(p.result_id, p.samples, p.sample_launches, p.q)
    by, ly, uy = bootstrap_medians(p.base_id, p.base_samples, p.base_launches, p.base_q)
    ratios = bx / by
    ratios = ratios[np.isfinite(ratios)]
    lo, hi = bootstrap.percentile_ci(ratios, CI_LEVEL) if ratios.size else (math.nan, math.nan)
    enough = sig.testable(lx, x.size) and sig.testable(ly, y.size) and ratios.size > 0
    noise = sig.effective_noise(p.noise, p.noise_source, (lx, ly))
    rule = sig.rule(lo, hi, noise, enough)
    few = min(ux, uy) < bootstrap.MIN_UNITS_FOR_95
    return {
        "ratio": mx / my,
        "ci_low": lo if math.isfinite(lo) else None,
        "ci_high": hi if math.isfinite(hi) else None,
        "p_value": None,
        "significant": rule == sig.RULE_SIGNIFICANT,
        "ci_kind": CI_RATIO_FEW if few else bootstrap.CI_BOOTSTRAP95,
        "significance": {
            "significant": rule == sig.RULE_SIGNIFICANT,
            "rule": rule,
            "noise": noise,
            "noise_source": p.noise_source,
            "ci_level": CI_LEVEL,
            "n_launches": [lx, ly],
        },
    }


def compare_pairs(pairs: Sequence[Pair]) -> list[dict[str, Any]]:
    """The ratio entry of each pair (the same dict object for the same pair: never mutate it)."""
    out = []
    for p in pairs:
        key = (p.result_id, p.base_id, p.noise, p.noise_source)
        hit = _pairs.get(key)
        if hit is None:
            hit = _one(p)
            _pairs.put(key, hit)
        out.append(hit)
    return out


def higher_is_better(unit: str) -> bool:
    """Throughput units (MB/s, ops/s: something per second) are better higher; per-op costs (ns/op,
    ns/goroutine, us/op) are better lower."""
    if "/" not in unit:
        return False
    denominator = unit.rsplit("/", 1)[1].strip().lower()
    return denominator in {"s", "sec", "second"}
