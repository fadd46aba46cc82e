"""Simulated comparisons for the significance rule's error rates (tests and benchmarks/significance.py).

A machine's measured value is mu * exp(run + launch + sample): one run-level offset per run (what two
runs at different times differ by, which the launches of one run cannot see), one offset per launch,
and one per sample, each normal with its own sigma. A comparison draws one run per machine at the
default sampling (3 launches x 2 samples), optionally with earlier runs of the same point to learn the
noise from, and goes through the server's own ratios.compare_pairs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ctxbench_server.compare import ratios
from ctxbench_server.compare import significance as sig


@dataclass(frozen=True)
class Model:
    sigma_run: float
    sigma_launch: float
    sigma_sample: float
    launches: int = 3
    per_launch: int = 2
    history: int = 0  # earlier runs per machine the noise is learned from (0: the default floor)
    default_noise: float = sig.FALLBACK_NOISE
    q: float = 0.5  # the figure's quantile (stats/figure.py: 0.05 for short samples)


@dataclass(frozen=True)
class Outcome:
    significant: float  # fraction of comparisons flagged significant
    rules: dict[str, int]


def run(model: Model, true_ratio: float, comparisons: int, seed: int) -> Outcome:
    rng = np.random.default_rng(seed)
    k, per = model.launches, model.per_launch
    labels = np.repeat(np.arange(k), per)

    def draw(mu: float, runs: int) -> np.ndarray:
        """`runs` runs of one machine: (runs, k * per) values."""
        z = (
            rng.normal(0, model.sigma_run, (runs, 1))
            + rng.normal(0, model.sigma_launch, (runs, k))[:, labels]
            + rng.normal(0, model.sigma_sample, (runs, k * per))
        )
        return mu * np.exp(z)

    pairs = []
    for i in range(comparisons):
        a, b = draw(100.0 * true_ratio, 1 + model.history), draw(100.0, 1 + model.history)
        if model.history:
            spreads = [sig.spread(np.quantile(x, model.q, axis=1).tolist()) for x in (a, b)]
            noise, source = sig.noise_for("sim.kernel", "sim", spreads)
        else:
            noise, source = model.default_noise, "default"
        ids = (f"sim-{seed}-{i}-a", f"sim-{seed}-{i}-b")
        launch_of = labels.tolist()
        pairs.append(
            ratios.Pair(
                ids[0],
                a[-1].tolist(),
                launch_of,
                ids[1],
                b[-1].tolist(),
                launch_of,
                noise,
                source,
                q=model.q,
                base_q=model.q,
            )
        )
    out = ratios.compare_pairs(pairs)
    ratios.clear_cache()  # simulated ids are never seen again
    return Outcome(
        significant=sum(o["significant"] for o in out) / comparisons,
        rules=dict(Counter(o["significance"]["rule"] for o in out)),
    )
