"""The steps of series with their fact changes, as /changes gives them, for the readers that check
series rather than the whole fleet: the alerts (one series whenever results land on it) and fleet
changes (up to a thousand a read). One rule and one cache with service.fleet_changes; only the columns
the rule needs are read (each run's median and CI of it, not the samples: those only of a result whose
CI the filler has not written yet, history/run_cis.py), for many series in a few statements."""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import anyio
from sqlalchemy import bindparam, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.history import changes
from ctxbench_server.history.run_cis import run_cis
from ctxbench_server.history.service import (
    MAX_POINTS,
    _steps,
    fact_changes,
    series_filter,
    step_out,
    steps_key,
    watched,
)
from ctxbench_server.models import Kernel, Result, Run

SeriesKey = tuple[str, str, str]  # machine id, kernel id, params key
# Series read by one statement: a UNION ALL of one bounded subquery each (SQLite allows 500 terms).
SERIES_PER_STATEMENT = 100
IDS_PER_STATEMENT = 500  # ids in one IN (...)
# Not the params (JSON, the same along a series): read for the steps' runs only.
COLUMNS = (
    Result.id,
    Result.run_id,
    Result.machine_id,
    Result.kernel_id,
    Result.params_key,
    Result.unit,
    Result.figure,
    Result.ci_low,
    Result.ci_high,
    Result.ci_method,
    Result.created_at,
    Result.agent_version,
    Result.disturbance,
)


def chunks(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    return (items[i : i + size] for i in range(0, len(items), size))


@functools.cache
def _union(n: int, points: int) -> Any:
    """The statement that reads n series, their keys bound as m{i}, k{i}, p{i}: built once a size."""
    subs = []
    for i in range(n):
        key: Any = (bindparam(f"m{i}"), bindparam(f"k{i}"), bindparam(f"p{i}"))  # bound, not values
        subs.append(
            select(*COLUMNS)
            .where(*series_filter(*key))
            .order_by(Result.created_at.desc(), Result.id.desc())
            .limit(points)
            .subquery()
        )
    return union_all(*(select(s) for s in subs)) if n > 1 else select(subs[0])


async def read_series(session: AsyncSession, keys: Collection[SeriesKey]) -> dict[SeriesKey, list[Any]]:
    """Each series' newest MAX_POINTS measured results (COLUMNS), oldest first; a series with none is
    absent. Each series is its own subquery with its own LIMIT (an index range), so a long series costs
    no more than a short one; SERIES_PER_STATEMENT of them a statement."""
    out: dict[SeriesKey, list[Any]] = {}
    for part in chunks(sorted(set(keys)), SERIES_PER_STATEMENT):
        bound = {f"{c}{i}": v for i, key in enumerate(part) for c, v in zip("mkp", key, strict=True)}
        for r in await session.execute(_union(len(part), MAX_POINTS), bound):
            out.setdefault((r.machine_id, r.kernel_id, r.params_key), []).append(r)
    for rs in out.values():
        rs.sort(key=lambda r: (r.created_at, r.id))
    return out


def covers(rs: Sequence[Any], since: datetime) -> bool:
    """Whether a series' rows (read_series) hold every one of its results from `since` on: all of them
    (fewer than MAX_POINTS), or the oldest read is older."""
    return len(rs) < MAX_POINTS or rs[0].created_at < since


async def families(session: AsyncSession, kernel_ids: Collection[str]) -> dict[str, str]:
    """Each kernel's family (its spec's, else its id's first part), as Compare's noise floor uses it."""
    known = {
        k: spec
        for part in chunks(sorted(set(kernel_ids)), IDS_PER_STATEMENT)
        for k, spec in await session.execute(select(Kernel.id, Kernel.spec).where(Kernel.id.in_(part)))
    }
    return {k: str((known.get(k) or {}).get("family") or k.partition(".")[0]) for k in kernel_ids}


async def params_of(session: AsyncSession, result_ids: Collection[str]) -> dict[str, Any]:
    """Each result's params, by result id."""
    out: dict[str, Any] = {}
    for part in chunks(sorted(set(result_ids)), IDS_PER_STATEMENT):  # none: no statement
        got = await session.execute(select(Result.id, Result.params).where(Result.id.in_(part)))
        out.update((rid, params) for rid, params in got)
    return out


async def run_facts(session: AsyncSession, run_ids: Collection[str]) -> dict[str, Any]:
    """Each run's facts snapshot, by run id."""
    out: dict[str, Any] = {}
    for part in chunks(sorted(set(run_ids)), IDS_PER_STATEMENT):  # none: no statement
        got = await session.execute(select(Run.id, Run.facts).where(Run.id.in_(part)))
        out.update((rid, facts) for rid, facts in got)
    return out


def cached(rows: Mapping[SeriesKey, Sequence[Any]]) -> dict[SeriesKey, list[changes.Step]]:
    """The steps of the series whose detection is cached (or that are too short to have any)."""
    out: dict[SeriesKey, list[changes.Step]] = {}
    for key, rs in rows.items():
        steps = [] if len(rs) < 2 * changes.MIN_SEGMENT else _steps.get(steps_key(key, rs))
        if steps is not None:
            out[key] = steps
    return out


def detect(
    rows: Mapping[SeriesKey, Sequence[Any]],
    family: Mapping[str, str],
    cis: Mapping[str, changes.RunCI],
) -> dict[SeriesKey, list[changes.Step]]:
    """Each series' steps from its rows (oldest first) and its runs' CIs (by result id, run_cis),
    History's rule, cached while a series has no new result (the cache /changes and History share).
    Blocking: call it off the event loop."""
    out = cached(rows)
    for key, rs in rows.items():
        if key not in out:
            kernel_id = key[1]
            steps = changes.detect(
                [float(r.figure) for r in rs],
                kernel_id,
                family[kernel_id],
                [r.run_id for r in rs],
                [cis.get(r.id, (None, None)) for r in rs],
                [r.disturbance for r in rs],
            )
            _steps.put(steps_key(key, rs), steps)
            out[key] = steps
    return out


def step_entries(
    rs: Sequence[Any], steps: Sequence[changes.Step], facts: Mapping[str, Any], params: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The steps as /changes gives them, with the fact changes between each one's two runs, plus the
    series' params and unit (`facts` by run id, `params` by result id: of at least those runs)."""
    out = []
    for s in steps:
        a, b = rs[s.index - 1], rs[s.index]
        moved = fact_changes(
            watched(facts.get(a.run_id), a.agent_version),
            watched(facts.get(b.run_id), b.agent_version),
            b.run_id,
            b.created_at,
        )
        entry = step_out(s, b.created_at, b.run_id, a.run_id, moved)
        entry.update(params=params.get(b.id) or {}, unit=b.unit)
        out.append(entry)
    return out


async def many_series_steps(
    session: AsyncSession, keys: Collection[SeriesKey]
) -> dict[SeriesKey, tuple[list[Any], list[dict[str, Any]]]]:
    """Each series' rows (read_series) and steps as /changes gives them, in a bounded number of
    statements whatever the number of series: the rows, the kernels' families and the samples of
    results without a stored CI (when a detection is not cached), the facts and params of the runs
    around the steps. A series with no measured result is absent."""
    rows = await read_series(session, keys)
    if not rows:
        return {}
    steps = cached(rows)
    if len(steps) < len(rows):
        todo = [k for k in rows if k not in steps]
        fams = await families(session, {k[1] for k in todo})
        cis = await run_cis(session, (r for k in todo for r in rows[k]))
        steps = await anyio.to_thread.run_sync(detect, rows, fams, cis)
    around = [rows[k][i] for k, ss in steps.items() for s in ss for i in (s.index - 1, s.index)]
    facts = await run_facts(session, {r.run_id for r in around})
    params = await params_of(session, {r.id for r in around})
    return {k: (rs, step_entries(rs, steps[k], facts, params)) for k, rs in rows.items()}


async def series_steps(
    session: AsyncSession, machine_id: str, kernel_id: str, params_key: str
) -> tuple[list[str], list[dict[str, Any]]]:
    """The run ids of one series (the newest MAX_POINTS, oldest first) and its steps as /changes gives
    them: each tested with Compare's rule, with the fact changes between its two runs, plus the series'
    params and unit."""
    got = await many_series_steps(session, [(machine_id, kernel_id, params_key)])
    rs, steps = got.get((machine_id, kernel_id, params_key), ([], []))
    return [r.run_id for r in rs], steps
