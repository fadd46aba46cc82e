"""stats/bootstrap.py's fast paths give the very numbers of the straightforward code they replaced: a
result's medians (sorted per row, by value) and its percentile interval (np.percentile), bit for bit, so a
CI stored before the change is the one compare recomputes after it."""

from __future__ import annotations

import numpy as np
import pytest

from ctxbench_server.stats import bootstrap


def reference_medians(
    launches: bootstrap.Launches, seed: int, resamples: int = bootstrap.RESAMPLES
) -> np.ndarray:
    """The first version of bootstrap.medians: the same draws, each resample sorted by value."""
    k, width = launches.values.shape
    flat = launches.values.reshape(-1)
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    rows = max(1, bootstrap.MAX_CHUNK_CELLS // max(1, k * width))
    col = np.arange(width)
    for start in range(0, resamples, rows):
        b = min(resamples, start + rows) - start
        chosen = rng.integers(0, k, size=(b, k)) if k > 1 else np.zeros((b, 1), dtype=np.int64)
        size = launches.sizes[chosen]
        within = (rng.random((b, k, width)) * size[..., None]).astype(np.int64)
        picked = flat[chosen[..., None] * width + within]
        picked[col >= size[..., None]] = np.nan
        picked = np.sort(picked.reshape(b, k * width), axis=1)
        n = size.sum(axis=1)
        lo = np.take_along_axis(picked, ((n - 1) // 2)[:, None], axis=1)[:, 0]
        hi = np.take_along_axis(picked, (n // 2)[:, None], axis=1)[:, 0]
        out[start : start + b] = (lo + hi) / 2
    return out


def cases() -> list[tuple[list[float], list[int] | None]]:
    rng = np.random.default_rng(7)
    out: list[tuple[list[float], list[int] | None]] = [
        ([10.0, 11.0, 12.0, 10.5, 11.5, 10.2, 10.8, 11.1, 10.9, 11.3], None),  # the load bench's report
        ([1.0, 1.0, 1.0, 2.0, 2.0, 2.0], [0, 0, 0, 1, 1, 1]),  # ties across launches
        ([5.0, 1.0, 5.0, 1.0, 1.0], [3, 1, 3, 1, 1]),  # unequal launch sizes
        ([3.0], None),
    ]
    for n in (2, 7, 10, 33, 200, 1000, 1001):  # even and odd: the middle pair, or one middle value
        out.append((list(np.round(rng.normal(50, 5, n), 1)), None))  # rounded: many ties
    for k, per in ((6, 5), (8, 1), (12, 3)):
        out.append((list(rng.gamma(2.0, 3.0, k * per)), [i % k for i in range(k * per)]))
    sizes = [1, 4, 2, 7, 3, 5, 6]
    out.append((list(rng.random(sum(sizes))), [i for i, s in enumerate(sizes) for _ in range(s)]))
    return out


@pytest.mark.parametrize(("samples", "launches"), cases())
def test_medians_are_the_reference_medians(samples: list[float], launches: list[int] | None) -> None:
    g = bootstrap.group(samples, launches)
    for seed in (0, 1, bootstrap.seed_for("0f8fad5b-d9cb-469f-a165-70867728950e")):
        assert np.array_equal(bootstrap.medians(g, seed), reference_medians(g, seed))


def test_medians_in_chunks_are_the_reference_medians(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bootstrap, "MAX_CHUNK_CELLS", 50)  # 2000 resamples of 24 cells: 1000 chunks of 2
    g = bootstrap.group([float(i % 9) for i in range(20)], [i % 5 if i < 17 else 5 for i in range(20)])
    assert np.array_equal(bootstrap.medians(g, 3), reference_medians(g, 3))


def test_percentile_ci_is_numpys_percentile_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    arrays = [rng.normal(0, 1, n) for n in (1, 2, 3, 40, 1999, 2000, 2001)]
    arrays += [np.round(rng.normal(10, 1, 2000), 1), np.full(2000, 7.25), rng.gamma(1.0, 1e-9, 2000)]
    for values in arrays:
        for confidence in (0.95, 0.9, 0.99, 0.5):
            alpha = 1.0 - confidence
            want = np.percentile(values, [100 * alpha / 2, 100 * (1 - alpha / 2)])
            assert bootstrap.percentile_ci(values, confidence) == (float(want[0]), float(want[1]))


@pytest.mark.parametrize(("samples", "launches"), cases())
def test_stats_median_is_numpys_median(samples: list[float], launches: list[int] | None) -> None:
    from ctxbench_server.stats import summary as stats

    assert stats.compute(samples, launches, "k").median == float(np.median(samples))
