"""Error rates and cost of compare's significance rule, on seeded synthetic data.

    ../.venv/bin/python benchmarks/significance.py [--comparisons 1000]

Part 1: simulated A/A comparisons (false-positive rate) and comparisons with a true 20 % difference
(power), through the server's own ratios.compare_pairs (compare/simulate.py: value = mu * exp(run +
launch + sample offsets), each normal with the sigma in the table; one run per machine at the default
sampling of 3 launches x 2 samples unless the row says otherwise). Part 2: what the statistics of a
200-row comparison of two machines cost in-process (each result's CI of the median and each pair's
ratio, CI and rule), with cold caches and warm.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ctxbench_server.compare import ratios, simulate
from ctxbench_server.compare import significance as sig

M = simulate.Model
MODELS: list[tuple[str, simulate.Model]] = [
    ("tests' default: launch 3 %, sample 1 %, run 1 %; 5 % floor", M(0.01, 0.03, 0.01)),
    ("launch 5 %, sample 1 %, run 0; 5 % floor", M(0.0, 0.05, 0.01)),
    ("launch 3 %, sample 1 %, run 3 %; 5 % floor", M(0.03, 0.03, 0.01)),
    ("launch 3 %, sample 1 %, run 2 %; noise from 3 runs a side", M(0.02, 0.03, 0.01, history=2)),
    ("launch 3 %, sample 1 %, run 3 %; noise from 3 runs a side", M(0.03, 0.03, 0.01, history=2)),
    ("launch 3 %, sample 1 %, run 3 %; 2 runs a side: the floor", M(0.03, 0.03, 0.01, history=1)),
    ("launch 3 %, sample 1 %, run 5 %; noise from 3 runs a side", M(0.05, 0.03, 0.01, history=2)),
    ("5 launches x 3 (thorough): launch 3 %, sample 1 %, run 1 %",
     M(0.01, 0.03, 0.01, launches=5, per_launch=3)),
    ("one launch of 6 (results before launches): launch 3 %, sample 1 %",
     M(0.0, 0.03, 0.01, launches=1, per_launch=6)),
]  # fmt: skip


def error_rates(comparisons: int) -> None:
    print(f"\nSignificance rule, {comparisons} simulated comparisons per cell, 2000 resamples a side\n")
    print("| model | A/A flagged (false positives) | true 20 % flagged (power) |")
    print("|---|---|---|")
    for i, (name, model) in enumerate(MODELS):
        aa = simulate.run(model, 1.0, comparisons, seed=100 + i)
        power = simulate.run(model, 1.2, comparisons, seed=200 + i)
        print(f"| {name} | {aa.significant:.1%} | {power.significant:.1%} |")


def cost(rows: int = 200, repeats: int = 5) -> None:
    rng = np.random.default_rng(1)
    labels = np.repeat(np.arange(3), 2).tolist()
    data = [
        (f"cost-a-{i}", (100 * np.exp(rng.normal(0, 0.03, 6))).tolist(),
         f"cost-b-{i}", (120 * np.exp(rng.normal(0, 0.03, 6))).tolist())
        for i in range(rows)
    ]  # fmt: skip

    def once() -> float:
        t = time.perf_counter()
        for a, x, b, y in data:
            ratios.cell_ci(a, x, labels)
            ratios.cell_ci(b, y, labels)
        ratios.compare_pairs(
            [ratios.Pair(a, x, labels, b, y, labels, sig.FALLBACK_NOISE, "default") for a, x, b, y in data]
        )
        return (time.perf_counter() - t) * 1000

    cold = []
    for _ in range(repeats):
        ratios.clear_cache()
        cold.append(once())
    warm = [once() for _ in range(repeats)]
    print(f"\nStatistics of one {rows}-row comparison of two machines (3 launches x 2 samples a result),")
    print(f"in-process, median of {repeats}\n")
    print("| caches | time |")
    print("|---|---|")
    print(f"| cold (every bootstrap computed) | {statistics.median(cold):.0f} ms |")
    print(f"| warm (results never change: cached by result id) | {statistics.median(warm):.1f} ms |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--comparisons", type=int, default=1000)
    a = ap.parse_args()
    error_rates(a.comparisons)
    cost()


if __name__ == "__main__":
    main()
