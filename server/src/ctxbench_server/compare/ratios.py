"""A machine's result against the baseline's: ratio of medians, its bootstrap CI, Mann-Whitney U.

Stored results never change, so neither does the answer for a pair of result ids: it is cached per
(result id, baseline result id). The bootstrap resamples each side independently, seeded by that side's
result id, so a recomputation (after a restart, for a frozen share) gives the same numbers, and one
result's bootstrap medians serve every pair it is in. Mann-Whitney U runs once per group of pairs of
equal sample sizes (scipy broadcasts), with the method chosen per pair as scipy's "auto" would.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from threading import Lock
from typing import Any, Generic, TypeVar

import numpy as np

RESAMPLES = 2000
ALPHA = 0.05
MIN_N_FOR_TEST = 5
EXACT_MAX_N = 8  # scipy's "auto": exact when a side has at most 8 samples and there are no ties
# Index arrays per bootstrap chunk stay under ~32 MB whatever the sample count (up to 100 000).
MAX_CHUNK_CELLS = 4_000_000

BASELINE: dict[str, Any] = {
    "ratio": 1.0,
    "ci_low": 1.0,
    "ci_high": 1.0,
    "p_value": None,
    "significant": False,
}
NONE: dict[str, Any] = {"ratio": None, "ci_low": None, "ci_high": None, "p_value": None, "significant": False}

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[K, V] = OrderedDict()
        self.lock = Lock()

    def get(self, key: K) -> V | None:
        with self.lock:
            v = self.data.get(key)
            if v is not None:
                self.data.move_to_end(key)
            return v

    def put(self, key: K, value: V) -> None:
        with self.lock:
            self.data[key] = value
            self.data.move_to_end(key)
            while len(self.data) > self.size:
                self.data.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.data.clear()


_pairs: LRU[tuple[str, str], dict[str, Any]] = LRU(200_000)  # ~0.5 KB each
_medians: LRU[str, np.ndarray] = LRU(2048)  # 16 KB each


def clear_cache() -> None:
    _pairs.clear()
    _medians.clear()


def seed_for(result_id: str) -> int:
    return int.from_bytes(hashlib.sha256(result_id.encode()).digest()[:8], "little")


def bootstrap_medians(result_id: str, samples: Sequence[float]) -> np.ndarray:
    """RESAMPLES medians of resamples (with replacement) of one result's samples, seeded by its id."""
    hit = _medians.get(result_id)
    if hit is not None:
        return hit
    x = np.sort(np.asarray(samples, dtype=float))
    n = x.size
    rng = np.random.default_rng(seed_for(result_id))
    out = np.empty(RESAMPLES)
    rows = max(1, MAX_CHUNK_CELLS // n)
    lo, hi = (n - 1) // 2, n // 2
    for start in range(0, RESAMPLES, rows):
        stop = min(RESAMPLES, start + rows)
        # x is sorted, so the resample's order statistics are those of its indices
        idx = rng.integers(0, n, size=(stop - start, n))
        idx.sort(axis=1)
        out[start:stop] = (x[idx[:, lo]] + x[idx[:, hi]]) / 2
    _medians.put(result_id, out)
    return out


def _method(x: np.ndarray, y: np.ndarray) -> str:
    ties = np.unique(np.concatenate([x, y])).size < x.size + y.size
    return "exact" if not ties and min(x.size, y.size) <= EXACT_MAX_N else "asymptotic"


Pair = tuple[str, Sequence[float], str, Sequence[float]]  # result id, samples, baseline's id, samples


@dataclass
class _Todo:
    key: tuple[str, str]
    x: np.ndarray
    y: np.ndarray
    out: dict[str, Any]


def compare_pairs(pairs: Sequence[Pair]) -> list[dict[str, Any]]:
    """The ratio entry of each pair (the same dict object for the same pair: never mutate it)."""
    answers: list[dict[str, Any] | None] = []
    todo: list[_Todo] = []
    for rid, samples, bid, base in pairs:
        hit = _pairs.get((rid, bid))
        answers.append(hit)
        if hit is not None:
            continue
        x, y = np.asarray(samples, dtype=float), np.asarray(base, dtype=float)
        mx, my = (float(np.median(x)), float(np.median(y))) if x.size and y.size else (math.nan, math.nan)
        if not (my > 0 and math.isfinite(mx)):
            answers[-1] = NONE
            continue
        ratios = bootstrap_medians(rid, samples) / bootstrap_medians(bid, base)
        ratios = ratios[np.isfinite(ratios)]
        lo, hi = np.percentile(ratios, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)])
        out = {
            "ratio": mx / my,
            "ci_low": float(lo),
            "ci_high": float(hi),
            "p_value": None,
            "significant": False,
        }
        answers[-1] = out
        if x.size >= MIN_N_FOR_TEST and y.size >= MIN_N_FOR_TEST:
            todo.append(_Todo((rid, bid), x, y, out))
        else:
            _pairs.put((rid, bid), out)
    if todo:
        from scipy.stats import mannwhitneyu  # first use only: scipy.stats is slow to import

        groups: dict[tuple[int, int, str], list[_Todo]] = {}
        for t in todo:
            groups.setdefault((t.x.size, t.y.size, _method(t.x, t.y)), []).append(t)
        for (_, _, method), ts in groups.items():
            p = np.atleast_1d(
                mannwhitneyu(
                    np.stack([t.x for t in ts]), np.stack([t.y for t in ts]), alternative="two-sided", axis=1,
                    method=method,
                ).pvalue
            )  # fmt: skip
            for t, pv in zip(ts, p, strict=True):
                pv = float(pv) if math.isfinite(pv) else 1.0  # every sample equal on both sides
                t.out["p_value"] = pv
                t.out["significant"] = pv < ALPHA
                _pairs.put(t.key, t.out)
    return [a if a is not None else NONE for a in answers]


def higher_is_better(unit: str) -> bool:
    """Throughput units (MB/s, ops/s: something per second) are better higher; per-op costs (ns/op,
    ns/goroutine, us/op) are better lower."""
    if "/" not in unit:
        return False
    denominator = unit.rsplit("/", 1)[1].strip().lower()
    return denominator in {"s", "sec", "second"}
