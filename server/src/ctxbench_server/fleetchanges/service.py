"""Fleet changes, computed on read over a bounded range (docs/architecture.md "Fleet changes").

The series looked at are those whose newest result is in the range (latest_results: one row a series,
so no scan of results); each one's steps are History's, through series_steps, the function the alerts'
checks call (its cache makes a repeated read cheap). Steps of one kernel point are grouped
(grouping.py); the hosts that measured the point in the group's window without a step are "the
others", and their facts come from their runs' snapshots, as the stepping hosts' do."""

from __future__ import annotations

import base64
import binascii
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.errors import ValidationFailed, field_error
from ctxbench_server.fleetchanges import grouping
from ctxbench_server.fleetchanges.schemas import (
    FleetChange,
    FleetChangesOut,
    OtherHost,
    SharedChange,
    StepHost,
)
from ctxbench_server.history.series_steps import series_steps
from ctxbench_server.history.service import fact_changes, watched
from ctxbench_server.models import LatestResult, Machine, Result, Run

MAX_SERIES = 1000  # series whose steps one read looks at (a read is a query and a detection each)
MAX_RANGE = timedelta(days=90)
DEFAULT_RANGE = timedelta(days=14)
MAX_KERNELS = 50
MAX_CURSOR = 200

Point = tuple[str, str]  # kernel id, params key


@dataclass(frozen=True)
class FleetQuery:
    since: datetime
    until: datetime
    window: timedelta
    kernels: Sequence[str]
    min_hosts: int
    limit: int
    cursor: tuple[datetime, str] | None


def utc(t: datetime) -> datetime:
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def encode_cursor(at: datetime, change_id: str) -> str:
    raw = json.dumps([at.isoformat(), change_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(text: str) -> tuple[datetime, str]:
    """The (last_at, id) a page ended at, or a 422 naming `cursor`."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        at, change_id = json.loads(raw)
        return utc(datetime.fromisoformat(at)), str(change_id)
    except (binascii.Error, ValueError, TypeError) as e:
        raise ValidationFailed(
            [field_error(["query", "cursor"], "not a cursor this endpoint gave (next_cursor)")]
        ) from e


async def _series(session: AsyncSession, q: FleetQuery) -> tuple[dict[Point, list[str]], int, bool]:
    """Machines by point, of the series measured since q.since (their newest result is); how many
    series; whether there were more than MAX_SERIES."""
    stmt = (
        select(LatestResult.machine_id, LatestResult.kernel_id, LatestResult.params_key)
        .where(LatestResult.created_at >= q.since)
        .order_by(LatestResult.created_at.desc())
        .limit(MAX_SERIES + 1)
    )
    if q.kernels:
        stmt = stmt.where(LatestResult.kernel_id.in_(q.kernels))
    rows = (await session.execute(stmt)).all()
    by_point: dict[Point, list[str]] = defaultdict(list)
    for mid, kernel, key in rows[:MAX_SERIES]:
        by_point[(kernel, key)].append(mid)
    return by_point, min(len(rows), MAX_SERIES), len(rows) > MAX_SERIES


async def _others(
    session: AsyncSession, point: Point, machine_ids: Sequence[str], lo: datetime, hi: datetime
) -> dict[str, tuple[int, dict[str, Any], dict[str, Any], list[dict[str, Any]]]]:
    """Each machine that measured the point in [lo, hi]: its runs there, its watched facts at its first
    and last, and the changes between them."""
    if not machine_ids:
        return {}
    rows = (
        await session.execute(
            select(Result.machine_id, Result.run_id, Result.created_at, Result.agent_version)
            .where(
                Result.kernel_id == point[0],
                Result.params_key == point[1],
                Result.machine_id.in_(machine_ids),
                Result.status == "ok",
                Result.median > 0,
                Result.created_at >= lo,
                Result.created_at <= hi,
            )
            .order_by(Result.created_at, Result.id)
        )
    ).all()
    runs: dict[str, list[Any]] = defaultdict(list)
    for r in rows:
        runs[r.machine_id].append(r)
    ends = {rid for rs in runs.values() for rid in (rs[0].run_id, rs[-1].run_id)}
    got = await session.execute(select(Run.id, Run.facts).where(Run.id.in_(ends)))
    facts: dict[str, Any] = {rid: f for rid, f in got}
    out = {}
    for mid, rs in runs.items():
        a, b = rs[0], rs[-1]
        first = watched(facts.get(a.run_id), a.agent_version)
        last = watched(facts.get(b.run_id), b.agent_version)
        out[mid] = (len(rs), first, last, fact_changes(first, last, b.run_id, b.created_at))
    return out


async def _steps_of_point(
    session: AsyncSession, point: Point, machine_ids: Sequence[str], q: FleetQuery
) -> tuple[list[grouping.HostStep], dict[str, Any]]:
    """The significant steps of the point's series (History's, as the alerts read them), and the
    point's params and unit."""
    found: list[grouping.HostStep] = []
    meta: dict[str, Any] = {}
    for mid in machine_ids:
        _, steps = await series_steps(session, mid, point[0], point[1])
        for s in steps:
            if s["significant"] and q.since <= s["at"] <= q.until:
                found.append(grouping.HostStep(mid, s))
                meta = {"params": s["params"], "unit": s["unit"]}
    return found, meta


async def _change(
    session: AsyncSession,
    point: Point,
    group: list[grouping.HostStep],
    steps: Sequence[grouping.HostStep],
    machine_ids: Sequence[str],
    meta: dict[str, Any],
    window: timedelta,
    names: dict[str, str],
) -> FleetChange:
    first_at, last_at = group[0].at, group[-1].at
    lo, hi = first_at - window, last_at + window
    stepped = {s.machine_id for s in steps if lo <= s.at <= hi}
    others = await _others(session, point, [m for m in machine_ids if m not in stepped], lo, hi)
    common = grouping.shared(group)
    shared = [
        SharedChange(
            **c,
            others_changed=sum(
                1
                for _, _, _, moved in others.values()
                if (c["fact"], repr(c["before"]), repr(c["after"])) in grouping.changes_of(moved).values()
            ),
        )
        for c in common
    ]
    ratio = grouping.median_ratio(group)
    return FleetChange(
        id=grouping.group_id(*point, group),
        summary=grouping.summary(
            *point, ratio, len(group), len(others), [s.model_dump() for s in shared], first_at, last_at
        ),
        kernel=point[0],
        params_key=point[1],
        params=meta.get("params") or {},
        unit=meta.get("unit") or "",
        direction="up" if ratio > 1 else "down",
        ratio=ratio,
        first_at=first_at,
        last_at=last_at,
        window_from=lo,
        window_to=hi,
        hosts=[
            StepHost(
                machine_id=s.machine_id,
                machine_name=names.get(s.machine_id, s.machine_id),
                run_id=s.step["run_id"],
                before_run_id=s.step["before_run_id"],
                at=s.at,
                ratio=s.step["ratio"],
                ci_low=s.step["ci_low"],
                ci_high=s.step["ci_high"],
                facts_changed=s.step["facts_changed"],
            )
            for s in group
        ],
        others=[
            OtherHost(
                machine_id=mid,
                machine_name=names.get(mid, mid),
                runs=n,
                facts_changed=moved,  # type: ignore[arg-type]  # validated from the dicts
                facts={c["fact"]: last.get(c["fact"]) for c in common},
            )
            for mid, (n, _, last, moved) in sorted(others.items(), key=lambda o: names.get(o[0], o[0]))
        ],
        shared=shared,
    )


async def fleet_changes(session: AsyncSession, q: FleetQuery) -> FleetChangesOut:
    by_point, n_series, truncated = await _series(session, q)
    names = {m: n for m, n in await session.execute(select(Machine.id, Machine.name))}
    out: list[FleetChange] = []
    for point, machine_ids in sorted(by_point.items()):
        if len(machine_ids) < q.min_hosts:
            continue
        steps, meta = await _steps_of_point(session, point, machine_ids, q)
        for group in grouping.cluster(steps, q.window):
            if len(group) >= q.min_hosts:
                out.append(await _change(session, point, group, steps, machine_ids, meta, q.window, names))
    out.sort(key=lambda c: (c.last_at, c.id), reverse=True)
    if q.cursor is not None:
        out = [c for c in out if (c.last_at, c.id) < q.cursor]
    page = out[: q.limit]
    more = len(out) > q.limit
    return FleetChangesOut(
        fleet_changes=page,
        next_cursor=encode_cursor(page[-1].last_at, page[-1].id) if more else None,
        since=q.since,
        until=q.until,
        window_hours=int(q.window.total_seconds() // 3600),
        series=n_series,
        truncated=truncated,
    )
