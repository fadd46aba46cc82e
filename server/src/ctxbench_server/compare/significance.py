"""When a ratio between two machines is significant, and which rule said so.

A ratio is significant only when its CI (hierarchical bootstrap, stats/bootstrap.py) excludes 1 by more
than the kernel's run-to-run noise on those machines: the CI must lie wholly outside
[1 / (1 + noise), 1 + noise]. Launches inside one run already spread the samples over the run, but two
runs at different times still differ by more (host load, frequency, page layout from boot to boot), and
the CI cannot see that. The noise is learned from the machines' own repeated runs of that kernel point
when there are at least 2 (the relative range of their medians), else it is the default floor below
(docs/architecture.md "Statistics" has the rule's simulated error rates and how the floors were measured).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from ctxbench_server.lru import LRU
from ctxbench_server.models import Result

RULE_SIGNIFICANT = "ci_excludes_noise"
RULE_CI_INCLUDES_1 = "ci_includes_1"
RULE_WITHIN_NOISE = "within_noise"
RULE_TOO_FEW = "too_few_launches"

# Default run-to-run noise, for machines without MIN_RUNS_LEARNED runs of a point: measured by `make bench`
# section `noise` (scripts/bench_noise.py: one agent runs the A/A points 8 times beside a build; a
# measurement's kernel floor is the largest spread of its points' run medians, a family's the largest of
# its measured kernels') and written to noise_floors.json beside this file with the date, host and load
# of each measurement; the floor is the median over the newest measurements (combine_measurements; the
# figures: docs/performance.md "noise-floor"). Lookup: the kernel's floor, else its
# family's, else the median of all measured kernels' floors (FALLBACK_NOISE without the file); never
# below MIN_DEFAULT_NOISE. That minimum is what one run a side may claim without the machine's own
# history: the bench sees one quarter of an hour, and this VM moved between phases over hours (the same
# day, beside the same build, getppid's runs spread by 27 % at 06:06 and by 0.1 % at 11:48 UTC; docs/
# fidelity.md "How many launches").
FALLBACK_NOISE = 0.05
MIN_DEFAULT_NOISE = 0.05
FLOORS_FILE = Path(__file__).with_name("noise_floors.json")


@dataclass(frozen=True)
class Floors:
    kernels: dict[str, float]
    families: dict[str, float]
    fallback: float


def load_floors(path: Path) -> Floors:
    """The measured floors (none without the file; a malformed file is an error: it ships with the server
    and a test reads it)."""
    if not path.exists():
        return Floors({}, {}, FALLBACK_NOISE)
    data = json.loads(path.read_text())

    def clamp(d: dict[str, Any]) -> dict[str, float]:
        return {str(k): max(float(v), MIN_DEFAULT_NOISE) for k, v in d.items()}

    kernels, families = clamp(data["floors"]), clamp(data.get("families", {}))
    fallback = statistics.median(kernels.values()) if kernels else FALLBACK_NOISE
    return Floors(kernels, families, fallback)


FLOORS = load_floors(FLOORS_FILE)
# The noise bench keeps its newest measurements in the file; a floor is the median of its kernel's floors
# over them, so one measurement in an hour when the VM's host slowed whole runs (getppid 27.7 %, fork_wait
# 900 % at 20:51 on 2026-11-27, against 0.2 % and 2.6 % at 12:04) moves no floor once three agree.
FLOOR_MEASUREMENTS = 5


def combine_measurements(measurements: Sequence[dict[str, Any]]) -> tuple[dict[str, float], dict[str, float]]:
    """The floors and family floors of the newest FLOOR_MEASUREMENTS measurements (each a dict with
    `floors` and `families`, oldest first): per key the median over the measurements that have it."""

    def median_of(field: str) -> dict[str, float]:
        values: dict[str, list[float]] = {}
        for m in measurements[-FLOOR_MEASUREMENTS:]:
            for key, v in m.get(field, {}).items():
                values.setdefault(str(key), []).append(float(v))
        return {k: round(statistics.median(v), 3) for k, v in sorted(values.items())}

    return median_of("floors"), median_of("families")


# Learned noise never goes below this: two runs that agree by chance do not make a kernel exact
# (frequency steps and timer granularity move every kernel here by about 1 %).
MIN_NOISE = 0.01
ONE_LAUNCH_FACTOR = 2.0
# Repeated runs looked at per machine and point (the newest, up to the compared result).
HISTORY = 10
# Runs it takes to learn a point's noise; with fewer, the measured default floor decides. Two runs that
# happen to agree make a kernel look exact, and History, which tests every boundary of every series, then
# called steps that did not happen (docs/architecture.md "History and change points").
MIN_RUNS_LEARNED = 3
# A side is tested when it has at least 2 launches, or (a result from before launches) one launch of at
# least 5 samples, as the former Mann-Whitney U test required.
MIN_SAMPLES_ONE_LAUNCH = 5


def default_noise(kernel_id: str, family: str) -> float:
    return FLOORS.kernels.get(kernel_id, FLOORS.families.get(family, FLOORS.fallback))


def spread(medians: Sequence[float]) -> float | None:
    """Relative range of a machine's run medians: the largest difference between two of its runs.
    None with fewer than MIN_RUNS_LEARNED runs."""
    m = sorted(x for x in medians if x is not None and x > 0)
    if len(m) < MIN_RUNS_LEARNED:
        return None
    mid = (m[(len(m) - 1) // 2] + m[len(m) // 2]) / 2
    return (m[-1] - m[0]) / mid


def noise_for(
    kernel_id: str, family: str, spreads: Sequence[float | None], default_factor: float = 1.0
) -> tuple[float, str]:
    """The noise of a pair and where it came from: the larger of the sides' learned spreads, and of the
    default (times default_factor: History's short sides, history/changes.py) for any side without
    MIN_RUNS_LEARNED runs ("runs" when a learned spread decides, else "default")."""
    learned = [max(s, MIN_NOISE) for s in spreads if s is not None]
    default = default_noise(kernel_id, family) * default_factor
    if len(learned) < len(spreads) and (not learned or default >= max(learned)):
        return default, "default"
    return max(learned), "runs"


def effective_noise(noise: float, source: str, launches: Sequence[int]) -> float:
    """A one-launch side (a result from before launches) has no launch-to-launch variance in its CI at
    all, so a default floor counts twice for it (the A/A figures: 11.9 % false positives with the plain
    floor, docs/architecture.md "Statistics"). Noise learned from runs of one launch each already holds
    that variance."""
    return noise * ONE_LAUNCH_FACTOR if source == "default" and min(launches) < 2 else noise


def testable(launches: int, n: int) -> bool:
    return launches >= 2 or n >= MIN_SAMPLES_ONE_LAUNCH


def rule(ci_low: float, ci_high: float, noise: float, enough: bool) -> str:
    if not enough:
        return RULE_TOO_FEW
    if ci_low <= 1.0 <= ci_high:
        return RULE_CI_INCLUDES_1
    if ci_low > 1.0 + noise or ci_high < 1.0 / (1.0 + noise):
        return RULE_SIGNIFICANT
    return RULE_WITHIN_NOISE


def history_statement(result_ids: Sequence[str]) -> Select[Any]:
    """One statement: per result, the figures (stats/figure.py) of the newest HISTORY ok results of its
    machine and point created at or before it, of its kind of sample (estimator), one indexed seek each,
    so the answer for a result never changes."""
    cur = aliased(Result, name="cur")
    cols = [
        select(Result.figure)
        .where(
            Result.kernel_id == cur.kernel_id,
            Result.machine_id == cur.machine_id,
            Result.params_key == cur.params_key,
            Result.created_at <= cur.created_at,
            Result.status == "ok",
            # the same kind of sample only: long and short samples measure different quantities
            Result.estimator.is_not_distinct_from(cur.estimator),
        )
        .order_by(Result.created_at.desc(), Result.id.desc())
        .limit(1)
        .offset(i)
        .scalar_subquery()
        .label(f"h{i}")
        for i in range(HISTORY)
    ]
    return select(cur.id, *cols).where(cur.id.in_(result_ids))


# A result's history up to it never changes: its spread is cached by result id (a 1-tuple: None is an
# answer too).
_spreads: LRU[str, tuple[float | None]] = LRU(50_000)
CHUNK = 1000  # results per statement, far under SQLite's 32 766 bound values


def clear_cache() -> None:
    _spreads.clear()


async def spreads(conn: AsyncConnection, result_ids: Sequence[str]) -> dict[str, float | None]:
    """Each result's learned spread (None: fewer than 2 runs of its machine and point), by result id."""
    out: dict[str, float | None] = {}
    todo: list[str] = []
    for rid in result_ids:
        hit = _spreads.get(rid)
        if hit is None:
            todo.append(rid)
        else:
            out[rid] = hit[0]
    for start in range(0, len(todo), CHUNK):
        for row in await conn.execute(history_statement(todo[start : start + CHUNK])):
            got = spread([float(x) for x in row[1:] if x is not None])
            _spreads.put(row[0], (got,))
            out[row[0]] = got
    return out
