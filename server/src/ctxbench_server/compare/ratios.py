"""A machine's result against the baseline's: ratio of medians, its bootstrap CI, Mann-Whitney U.

Both inputs are stored results, which never change once stored, so the answer for a pair of result ids
never changes either: it is cached per (result id, baseline result id), and the bootstrap's seed is
derived from those two ids so that a recomputation (a restart, a frozen share) gives the same numbers.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from threading import Lock
from typing import Any

import numpy as np

RESAMPLES = 2000
CONFIDENCE = 0.95
ALPHA = 0.05
MIN_N_FOR_TEST = 5
# Index arrays per bootstrap chunk stay under ~32 MB whatever the sample count (up to 100 000).
MAX_CHUNK_CELLS = 4_000_000
CACHE_SIZE = 100_000


@dataclass(frozen=True)
class Ratio:
    ratio: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    significant: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


BASELINE = Ratio(ratio=1.0, ci_low=1.0, ci_high=1.0, p_value=None, significant=False)
NONE = Ratio(ratio=None, ci_low=None, ci_high=None, p_value=None, significant=False)

_cache: OrderedDict[tuple[str, str], Ratio] = OrderedDict()
_lock = Lock()


def seed_for(result_id: str, baseline_result_id: str) -> int:
    digest = hashlib.sha256(f"{result_id}|{baseline_result_id}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def _bootstrap_medians(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = x.size
    rows = max(1, MAX_CHUNK_CELLS // n)
    out = np.empty(RESAMPLES)
    for start in range(0, RESAMPLES, rows):
        stop = min(RESAMPLES, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = np.median(x[idx], axis=1)
    return out


def compute(samples: Sequence[float], baseline: Sequence[float], seed: int) -> Ratio:
    """samples / baseline. Needs a positive baseline median; otherwise no ratio."""
    x = np.asarray(samples, dtype=float)
    y = np.asarray(baseline, dtype=float)
    if x.size == 0 or y.size == 0:
        return NONE
    mx, my = float(np.median(x)), float(np.median(y))
    if not (my > 0 and math.isfinite(mx)):
        return NONE
    rng = np.random.default_rng(seed)
    bx = _bootstrap_medians(x, rng)
    by = _bootstrap_medians(y, rng)
    keep = by > 0
    ratios = bx[keep] / by[keep]
    lo, hi = np.percentile(ratios, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)]) if ratios.size else (None, None)
    p: float | None = None
    significant = False
    if x.size >= MIN_N_FOR_TEST and y.size >= MIN_N_FOR_TEST:
        from scipy.stats import mannwhitneyu  # first use only: scipy.stats is slow to import

        p = float(mannwhitneyu(x, y, alternative="two-sided").pvalue)
        if not math.isfinite(p):  # every sample equal on both sides
            p = 1.0
        significant = p < ALPHA
    return Ratio(
        ratio=mx / my,
        ci_low=None if lo is None else float(lo),
        ci_high=None if hi is None else float(hi),
        p_value=p,
        significant=significant,
    )


def cached(
    result_id: str, samples: Sequence[float], baseline_result_id: str, baseline: Sequence[float]
) -> Ratio:
    key = (result_id, baseline_result_id)
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    r = compute(samples, baseline, seed_for(result_id, baseline_result_id))
    with _lock:
        _cache[key] = r
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return r


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def higher_is_better(unit: str) -> bool:
    """Throughput units (MB/s, ops/s: something per second) are better higher; per-op costs (ns/op,
    ns/goroutine, us/op) are better lower."""
    if "/" not in unit:
        return False
    denominator = unit.rsplit("/", 1)[1].strip().lower()
    return denominator in {"s", "sec", "second"}
