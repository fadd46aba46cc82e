"""Compare sets of runs instead of machines: before and after a tuning change on one machine (A/B).

`GET /compare?sides=before:<run>,<run>;after:<run>` makes each named set of runs a column, with the same
table, ratios, significance, geomeans and facts diff as machines get. A side's cell for a kernel point is
its newest successful result among the side's runs. Its run-to-run noise is learned from the side's own
runs of that point (2 or more), never from the machine's whole history: the other side's runs would
otherwise count as noise and hide the very change being tested. A side with one run of a point falls
back to the default floor, as a machine with one run does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.compare import significance as sig
from ctxbench_server.errors import ValidationFailed, field_error
from ctxbench_server.models import Machine, Result, Run

MAX_SIDES = 20
MAX_SIDE_RUNS = 200
LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.+-]{0,31}$")


@dataclass(frozen=True)
class Side:
    label: str
    runs: list[str]


@dataclass(frozen=True)
class Column:
    """What compare's assembly reads of a machine, for a side."""

    id: str
    name: str
    hostname: str
    machine_ids: tuple[str, ...]


def parse(value: str | None, loc: Sequence[str | int] = ("query",)) -> list[Side]:
    """`label:run,run;label:run` → sides, in order. Errors name the side and what is wrong."""
    if not value:
        return []
    loc = [*loc, "sides"]
    parts = [p for p in value.split(";") if p.strip()]
    if len(parts) > MAX_SIDES:
        raise ValidationFailed([field_error(loc, f"at most {MAX_SIDES} sides", "too_many_sides")])
    out: list[Side] = []
    errors = []
    for i, part in enumerate(parts):
        label, colon, runs = part.partition(":")
        label = label.strip()
        ids = list(dict.fromkeys(r.strip() for r in runs.split(",") if r.strip()))
        if not colon or not LABEL.match(label):
            errors.append(
                field_error(
                    [*loc, i],
                    "a side is label:run,run with a label of 1-32 letters, digits, space or _.+-",
                    "bad_side",
                )
            )
        elif any(s.label == label for s in out):
            errors.append(field_error([*loc, i], f"side {label!r} is named twice", "duplicate_side"))
        elif not ids:
            errors.append(field_error([*loc, i], f"side {label!r} names no run", "missing"))
        elif len(ids) > MAX_SIDE_RUNS:
            errors.append(field_error([*loc, i], f"at most {MAX_SIDE_RUNS} runs a side", "too_long"))
        elif twice := [r for r in ids if any(r in o.runs for o in out)]:
            errors.append(field_error([*loc, i], f"run {twice[0]!r} is on two sides", "duplicate_run"))
        else:
            out.append(Side(label, ids))
    if errors:
        raise ValidationFailed(errors)
    if len(out) < 2:
        raise ValidationFailed([field_error(loc, "name at least two sides", "missing")])
    return out


@dataclass(frozen=True)
class Gathered:
    columns: dict[str, Column]
    chosen: dict[str, str]  # result id -> side label: the newest result per point of each side
    spreads: dict[str, float | None]  # by result id, learned from the side's own runs
    facts: dict[str, dict[str, Any] | None]  # by label: the snapshot of the side's newest run
    facts_run: dict[str, str | None]


async def gather(
    session: AsyncSession, sides: list[Side], kernel_filter: list[str] | None, loc: list[str | int]
) -> Gathered:
    """Per side: its column, its results' ids (the newest per point), its learned spreads by result id,
    and the facts snapshot of its newest run."""
    wanted = sorted({r for s in sides for r in s.runs})
    runs = {
        r.id: r
        for r in (
            await session.execute(
                select(Run.id, Run.machine_id, Run.facts, Run.created_at).where(Run.id.in_(wanted))
            )
        ).all()
    }
    bad = [
        field_error([*loc, "sides", i, "runs", j], f"unknown run {rid!r}", "unknown_run")
        for i, s in enumerate(sides)
        for j, rid in enumerate(s.runs)
        if rid not in runs
    ]
    if bad:
        raise ValidationFailed(bad)
    names = {
        m.id: m.name
        for m in (
            await session.execute(
                select(Machine.id, Machine.name).where(Machine.id.in_({r.machine_id for r in runs.values()}))
            )
        ).all()
    }
    stmt = select(
        Result.id, Result.run_id, Result.kernel_id, Result.params_key, Result.figure, Result.created_at
    ).where(Result.run_id.in_(wanted), Result.status == "ok", Result.figure.is_not(None))
    if kernel_filter is not None:
        stmt = stmt.where(Result.kernel_id.in_(kernel_filter))
    rows = (await session.execute(stmt)).all()

    columns: dict[str, Column] = {}
    chosen: dict[str, str] = {}  # result id -> side label
    spreads: dict[str, float | None] = {}
    facts: dict[str, dict[str, Any] | None] = {}
    facts_run: dict[str, str | None] = {}
    for s in sides:
        mine = set(s.runs)
        by_point: dict[tuple[str, str], list[Any]] = {}
        for r in rows:
            if r.run_id in mine:
                by_point.setdefault((r.kernel_id, r.params_key), []).append(r)
        for pts in by_point.values():
            pts.sort(key=lambda r: (r.created_at, r.id), reverse=True)
            newest = pts[0]
            chosen[newest.id] = s.label
            spreads[newest.id] = sig.spread([float(r.figure) for r in pts[: sig.HISTORY]])
        machines = list(dict.fromkeys(runs[r].machine_id for r in s.runs))
        columns[s.label] = Column(
            s.label, s.label, ", ".join(names.get(m, m) for m in machines), tuple(machines)
        )
        last = max((runs[r] for r in s.runs), key=lambda r: (r.created_at, r.id))
        facts[s.label] = last.facts
        facts_run[s.label] = last.id if last.facts else None
    return Gathered(columns, chosen, spreads, facts, facts_run)


def relabel(records: list[Any], chosen: dict[str, str]) -> list[Any]:
    """The records as cells of their side's column (compare groups cells by machine_id)."""
    return [replace(r, machine_id=chosen[r.id]) for r in records if r.id in chosen]
