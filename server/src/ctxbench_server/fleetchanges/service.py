"""Fleet changes, computed on read over a bounded range (docs/architecture.md "Fleet changes").

The series looked at are those whose newest result is in the range (latest_results: one row a series,
so no scan of results); their steps are History's, through history/series_steps.py, the rule and cache
the alerts' checks use, read for all the series at once (a few statements, not one a series). Steps of
one kernel point are grouped (grouping.py) and the changes paged; for a page's changes, the hosts that
measured the point in the group's window without a step are "the others", their runs taken from the
series already read, and their facts from their runs' snapshots, as the stepping hosts' are."""

from __future__ import annotations

import base64
import binascii
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, or_, select
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
from ctxbench_server.history.series_steps import COLUMNS, SeriesKey, covers, many_series_steps, run_facts
from ctxbench_server.history.service import fact_changes, watched
from ctxbench_server.models import LatestResult, Machine, Result

MAX_SERIES = 1000  # series whose steps one read looks at (a read is a query and a detection each)
MAX_RANGE = timedelta(days=90)
DEFAULT_RANGE = timedelta(days=14)
DEFAULT_WINDOW_HOURS = 24
DEFAULT_MIN_HOSTS = 2
MAX_KERNELS = 50
MAX_CURSOR = 200

Point = tuple[str, str]  # kernel id, params key
SeriesSteps = dict[SeriesKey, tuple[list[Any], list[dict[str, Any]]]]  # as many_series_steps gives them


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


def _steps_of_point(
    got: SeriesSteps, point: Point, machine_ids: Sequence[str], q: FleetQuery
) -> tuple[list[grouping.HostStep], dict[str, Any]]:
    """The significant steps in the range of the point's series (History's, as the alerts read them),
    and the point's params and unit."""
    found: list[grouping.HostStep] = []
    meta: dict[str, Any] = {}
    for mid in machine_ids:
        _, steps = got.get((mid, *point), ([], []))
        for s in steps:
            if s["significant"] and q.since <= s["at"] <= q.until:
                found.append(grouping.HostStep(mid, s))
                meta = {"params": s["params"], "unit": s["unit"]}
    return found, meta


@dataclass(frozen=True)
class Draft:
    """A group of steps that is a fleet change, before its other hosts are looked at."""

    point: Point
    group: list[grouping.HostStep]
    steps: list[grouping.HostStep]  # every significant step of the point in the range
    machine_ids: Sequence[str]  # the machines whose series of the point were read
    meta: dict[str, Any]
    window: timedelta

    @property
    def id(self) -> str:
        return grouping.group_id(*self.point, self.group)

    @property
    def lo(self) -> datetime:
        return self.group[0].at - self.window

    @property
    def hi(self) -> datetime:
        return self.group[-1].at + self.window

    def others(self) -> list[str]:
        """The machines of the point with no step in [lo, hi] (either direction)."""
        stepped = {s.machine_id for s in self.steps if self.lo <= s.at <= self.hi}
        return [m for m in self.machine_ids if m not in stepped]


def _in_window(rs: Sequence[Any], d: Draft) -> list[Any]:
    return [r for r in rs if d.lo <= r.created_at <= d.hi]


async def _window_rows(
    session: AsyncSession, page: Sequence[Draft], got: SeriesSteps
) -> list[dict[str, list[Any]]]:
    """For each change, each other host's results of the point in [lo, hi], oldest first. The series
    read for the steps hold them unless a series has more than MAX_POINTS results and its newest do not
    reach back to lo: those are read in one statement for the page."""
    out: list[dict[str, list[Any]]] = []
    needs: list[tuple[int, Draft, list[str]]] = []
    for i, d in enumerate(page):
        found: dict[str, list[Any]] = {}
        missing = []
        for mid in d.others():
            rs = got.get((mid, *d.point), ([], []))[0]
            if covers(rs, d.lo):
                found[mid] = _in_window(rs, d)
            else:
                missing.append(mid)
        out.append(found)
        if missing:
            needs.append((i, d, missing))
    if needs:
        cond = [
            and_(
                Result.kernel_id == d.point[0],
                Result.params_key == d.point[1],
                Result.machine_id.in_(mids),
                Result.created_at >= d.lo,
                Result.created_at <= d.hi,
            )
            for _, d, mids in needs
        ]
        stmt = (
            select(*COLUMNS)
            .where(Result.status == "ok", Result.figure > 0, or_(*cond))
            .order_by(Result.created_at, Result.id)
        )
        read: dict[SeriesKey, list[Any]] = defaultdict(list)
        for r in await session.execute(stmt):
            read[(r.machine_id, r.kernel_id, r.params_key)].append(r)
        for i, d, mids in needs:
            for mid in mids:
                out[i][mid] = _in_window(read.get((mid, *d.point), []), d)
    return [{m: rs for m, rs in found.items() if rs} for found in out]


def _others(
    runs: dict[str, list[Any]], facts: dict[str, Any]
) -> dict[str, tuple[int, dict[str, Any], dict[str, Any], list[dict[str, Any]]]]:
    """Each other host: its runs in the window, its watched facts at its first and last, and the
    changes between them."""
    out = {}
    for mid, rs in runs.items():
        a, b = rs[0], rs[-1]
        first = watched(facts.get(a.run_id), a.agent_version)
        last = watched(facts.get(b.run_id), b.agent_version)
        out[mid] = (len(rs), first, last, fact_changes(first, last, b.run_id, b.created_at))
    return out


def _change(
    d: Draft,
    others: dict[str, tuple[int, dict[str, Any], dict[str, Any], list[dict[str, Any]]]],
    names: dict[str, str],
) -> FleetChange:
    point, group, meta = d.point, d.group, d.meta
    first_at, last_at = group[0].at, group[-1].at
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
        id=d.id,
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
        window_from=d.lo,
        window_to=d.hi,
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
    """Statements a read: the series, their rows (one a hundred series), the kernels' families when a
    detection is not cached, the facts of the runs around steps, the machines' names, and for the page:
    the other hosts' runs' facts (and, rarely, their results in a window the series rows miss)."""
    by_point, n_series, truncated = await _series(session, q)
    by_point = {p: ms for p, ms in by_point.items() if len(ms) >= q.min_hosts}
    got = await many_series_steps(session, [(m, *p) for p, ms in by_point.items() for m in ms])
    drafts: list[Draft] = []
    for point, machine_ids in sorted(by_point.items()):
        steps, meta = _steps_of_point(got, point, machine_ids, q)
        drafts.extend(
            Draft(point, group, steps, machine_ids, meta, q.window)
            for group in grouping.cluster(steps, q.window)
            if len(group) >= q.min_hosts
        )
    drafts.sort(key=lambda d: (d.group[-1].at, d.id), reverse=True)
    if q.cursor is not None:
        drafts = [d for d in drafts if (d.group[-1].at, d.id) < q.cursor]
    page, more = drafts[: q.limit], len(drafts) > q.limit
    runs = await _window_rows(session, page, got)
    facts = await run_facts(
        session, {r.run_id for found in runs for rs in found.values() for r in (rs[0], rs[-1])}
    )
    names = {m: n for m, n in await session.execute(select(Machine.id, Machine.name))}
    out = [_change(d, _others(found, facts), names) for d, found in zip(page, runs, strict=True)]
    return FleetChangesOut(
        fleet_changes=out,
        next_cursor=encode_cursor(out[-1].last_at, out[-1].id) if more else None,
        since=q.since,
        until=q.until,
        window_hours=int(q.window.total_seconds() // 3600),
        series=n_series,
        truncated=truncated,
    )
