"""Hierarchical bootstrap of a result's median (Kalibera & Jones, "Rigorous Benchmarking in Reasonable
Time", ISMM 2013): resample the launches with replacement, then the samples within each chosen launch.

Two runs differ mostly between kernel processes (placement, page layout, frequency), not between the
repetitions inside one, so the launch is the unit that is resampled first; a plain bootstrap of all
samples would treat 6 samples from 3 launches as 6 independent ones and be far too confident. A result
stored before launches existed (`sample_launches` null) is one launch: its samples are resampled alone.

Seeded by the result id, so the same result always gives the same medians (a frozen share, a restart),
and vectorised: one draw of indices per chunk of resamples, medians from one sort per row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
CONFIDENCE = 0.95
# A distribution-free 95 % interval of a median needs at least 6 independent units (the chance that all
# of k units fall on one side of the true median is 2 / 2^k, under 5 % only from k = 6). The units are
# the launches, or the samples of a one-launch result. Below that the interval is labelled min-max.
MIN_UNITS_FOR_95 = 6
# Index arrays per chunk of resamples stay under ~32 MB whatever the sample count (up to 100 000).
MAX_CHUNK_CELLS = 4_000_000
# From this many samples a resample's middle values are selected (np.partition by one rank, then a max),
# not sorted: the same values; at 1000 samples half the time of a sort, at 100 000 samples a 100 000-
# sample result's CI 1.9 s instead of 3.4 s; below ~100 a sort of the short rows is cheaper.
SELECT_FROM = 256

CI_BOOTSTRAP95 = "bootstrap95"
CI_MINMAX = "minmax"
CI_METHOD_BOOTSTRAP = "hierarchical bootstrap (launches, then samples), 95 %"
CI_METHOD_MINMAX = "min-max (fewer than 6 launches: no interval reaches 95 %)"


def seed_for(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")


@dataclass(frozen=True)
class Launches:
    """A result's samples grouped by launch: a (launches x longest) matrix padded with NaN."""

    values: np.ndarray
    sizes: np.ndarray

    @property
    def count(self) -> int:
        return int(self.sizes.size)

    @property
    def units(self) -> int:
        """Independent units of the interval: the launches, or the samples of a one-launch result."""
        return self.count if self.count > 1 else int(self.sizes.sum())

    @property
    def ci_kind(self) -> str:
        return CI_BOOTSTRAP95 if self.units >= MIN_UNITS_FOR_95 else CI_MINMAX


def group(samples: Sequence[float], sample_launches: Sequence[int] | None) -> Launches:
    """Samples grouped by their launch index; no (or mismatched) launch indices: one launch."""
    x = np.asarray(samples, dtype=float)
    if sample_launches is None or len(sample_launches) != x.size or x.size == 0:
        return Launches(x.reshape(1, -1), np.array([x.size]))
    labels = np.asarray(sample_launches)
    keys, inverse, sizes = np.unique(labels, return_inverse=True, return_counts=True)
    values = np.full((keys.size, int(sizes.max())), np.nan)
    order = np.argsort(inverse, kind="stable")
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    cols = np.arange(x.size) - np.repeat(starts, sizes)
    values[inverse[order], cols] = x[order]
    return Launches(values, sizes)


def medians(launches: Launches, seed: int, resamples: int = RESAMPLES, q: float = 0.5) -> np.ndarray:
    """`resamples` medians (or q-quantiles: a result's figure, stats/figure.py) of hierarchical
    resamples: launches with replacement, then within each chosen launch as many samples as it has,
    with replacement. Another quantile than the median is interpolated linearly (numpy's default
    method) from the same draws, through the general path."""
    k, width = launches.values.shape
    flat = launches.values.reshape(-1)
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    rows = max(1, MAX_CHUNK_CELLS // max(1, k * width))
    col = np.arange(width)
    equal = q == 0.5 and bool((launches.sizes == width).all())
    for start in range(0, resamples, rows):
        b = min(resamples, start + rows) - start
        if equal:  # the usual case: every resample has k * width samples. The same draws and values
            # as below with fewer temporaries (u * width is u * size bit for bit; one launch: no offset)
            pick = rng.integers(0, k, size=(b, k))[..., None] * width if k > 1 else None
            u = rng.random((b, k, width))
            u *= width
            within = u.astype(np.int64)
            if pick is not None:
                within += pick
            picked = flat[within.reshape(b, k * width)]
            upper = (k * width) // 2
            if k * width < SELECT_FROM:
                picked.sort(axis=1)
                lo, hi = picked[:, (k * width - 1) // 2], picked[:, upper]
            else:  # the upper middle value by one selection, the lower one the largest left of it
                picked.partition(upper, axis=1)
                hi = picked[:, upper]
                lo = picked[:, :upper].max(axis=1) if (k * width) % 2 == 0 else hi
            out[start : start + b] = (lo + hi) / 2
            continue
        chosen = rng.integers(0, k, size=(b, k)) if k > 1 else np.zeros((b, 1), dtype=np.int64)
        size = launches.sizes[chosen]  # (b, k)
        within = (rng.random((b, k, width)) * size[..., None]).astype(np.int64)
        picked = flat[chosen[..., None] * width + within]
        picked[col >= size[..., None]] = np.nan  # a launch shorter than the longest: its own size
        picked = np.sort(picked.reshape(b, k * width), axis=1)  # NaN last
        n = size.sum(axis=1)
        if q == 0.5:
            i, j, frac = (n - 1) // 2, n // 2, None
        else:
            pos = (n - 1) * q
            i = np.floor(pos).astype(np.int64)
            j, frac = np.minimum(i + 1, n - 1), pos - i
        lo = np.take_along_axis(picked, i[:, None], axis=1)[:, 0]
        hi = np.take_along_axis(picked, j[:, None], axis=1)[:, 0]
        out[start : start + b] = (lo + hi) / 2 if frac is None else lo + (hi - lo) * frac
    return out


def percentile_ci(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """np.percentile(values, [alpha/2, 1 - alpha/2] in %), its default linear method, bit for bit
    (tests/test_bootstrap.py checks), from one partition: np.percentile's own checks and copies cost
    more than the bootstrap's sort on a result of 10 samples."""
    alpha = 1.0 - confidence
    values = np.asarray(values, dtype=float)
    if values.size == 0 or not np.isfinite(values).all():
        lo, hi = np.percentile(values, [100 * alpha / 2, 100 * (1 - alpha / 2)])
        return float(lo), float(hi)
    q = np.true_divide(np.asarray([100 * alpha / 2, 100 * (1 - alpha / 2)]), 100)
    virtual = (values.size - 1) * q
    below = np.floor(virtual).astype(np.intp)
    above = np.minimum(below + 1, values.size - 1)
    part = np.partition(values, np.unique(np.concatenate((below, above))))
    a, b, t = part[below], part[above], virtual - below
    diff = b - a
    lerp = a + diff * t
    np.subtract(b, diff * (1 - t), out=lerp, where=t >= 0.5)
    return float(lerp[0]), float(lerp[1])


@dataclass(frozen=True)
class MedianCI:
    low: float
    high: float
    kind: str  # bootstrap95 | minmax
    method: str
    launches: int


def median_ci(
    samples: Sequence[float], sample_launches: Sequence[int] | None, key: str, q: float = 0.5
) -> MedianCI:
    """The result's CI of its figure (the median, or the q-quantile: stats/figure.py): the bootstrap's
    95 % percentile interval with at least 6 units, else the samples' min-max, labelled so (a 95 % label
    on it would be a lie)."""
    g = group(samples, sample_launches)
    if g.ci_kind == CI_MINMAX:
        x = np.asarray(samples, dtype=float)
        return MedianCI(float(x.min()), float(x.max()), CI_MINMAX, CI_METHOD_MINMAX, g.count)
    lo, hi = percentile_ci(medians(g, seed_for(key), q=q))
    return MedianCI(lo, hi, CI_BOOTSTRAP95, CI_METHOD_BOOTSTRAP, g.count)
