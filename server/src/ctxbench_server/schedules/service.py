"""Schedules: create, read, edit, pause and delete them, each checked as a POST /runs would be (the runs
package's own validation) before anything is stored. The firing itself is schedules.firing's."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.config import Settings
from ctxbench_server.errors import Conflict, NotFound, ValidationFailed, field_error
from ctxbench_server.machines.labels import effective, parse_selector
from ctxbench_server.models import Machine, MachineStatus, Schedule, ScheduleFiring
from ctxbench_server.models.base import new_id
from ctxbench_server.runs import service as runs_service
from ctxbench_server.runs.schemas import RunSpec
from ctxbench_server.schedules import timing
from ctxbench_server.schedules.schemas import (
    FIRINGS_SHOWN,
    FiringOut,
    ScheduleCreate,
    ScheduleDetail,
    ScheduleOut,
    SchedulePatch,
)


def _invalid(loc: list[str | int], msg: str, type_: str = "value_error") -> ValidationFailed:
    return ValidationFailed([field_error(["body", *loc], msg, type_)])


def timing_of(s: Schedule) -> timing.Timing:
    return timing.Timing(s.interval_s, s.cron, s.jitter_s)


def check_timing(
    interval_s: int | None, cron: str | None, jitter_s: int, settings: Settings, now: datetime
) -> timing.Timing:
    """The timing, or a 422 naming interval_s, cron or jitter_s."""
    least = settings.schedule_min_interval_s
    if interval_s is not None and interval_s < least:
        raise _invalid(
            ["interval_s"], f"at least {least} s (CTXBENCH_SCHEDULE_MIN_INTERVAL_S)", "interval_too_short"
        )
    if cron is not None:
        try:
            cron = timing.check_cron(cron)
        except timing.TimingError as e:
            raise _invalid(["cron"], str(e), "bad_cron") from e
    t = timing.Timing(interval_s, cron, jitter_s)
    try:
        gap = timing.shortest_gap_s(t, now)
    except timing.TimingError as e:
        raise _invalid(["cron"], str(e), "bad_cron") from e
    if cron is not None and gap < least:
        raise _invalid(
            ["cron"],
            f"fires {gap:.0f} s apart at times, under {least} s (CTXBENCH_SCHEDULE_MIN_INTERVAL_S)",
            "interval_too_short",
        )
    if jitter_s > gap:
        what = "the interval" if interval_s is not None else "the shortest gap between its slots"
        raise _invalid(["jitter_s"], f"{jitter_s} s is more than {what} ({gap:.0f} s)", "jitter_too_long")
    return t


async def active_matching(session: AsyncSession, selector: str) -> list[str]:
    """The active machines whose labels (the admin's over the agent's) the selector matches, by id."""
    sel = parse_selector(selector, ["body", "selector"])
    rows = await session.execute(
        select(Machine.id, Machine.labels, Machine.agent_labels)
        .where(Machine.status == MachineStatus.ACTIVE)
        .order_by(Machine.id)
    )
    return [mid for mid, own, agents in rows if sel.matches(effective(own or {}, agents or {}))]


async def check_selection(
    session: AsyncSession, machine_ids: list[str] | None, selector: str | None
) -> list[str]:
    """The machines the spec is checked against now: the given ones that are active (each must be
    known: else a 422 naming its index), or the active machines the selector matches."""
    if machine_ids is None:
        assert selector is not None
        return await active_matching(session, selector)
    rows = dict(
        (
            await session.execute(select(Machine.id, Machine.status).where(Machine.id.in_(set(machine_ids))))
        ).all()
    )
    errors: list[dict[str, Any]] = []
    for i, mid in enumerate(machine_ids):
        if mid not in rows:
            errors.append(
                field_error(["body", "machine_ids", i], f"unknown machine {mid!r}", "unknown_machine")
            )
        elif mid in machine_ids[:i]:
            errors.append(
                field_error(["body", "machine_ids", i], f"machine {mid!r} given twice", "duplicate_machine")
            )
    if errors:
        raise ValidationFailed(errors)
    return [mid for mid in machine_ids if rows[mid] == MachineStatus.ACTIVE]


async def check_run(session: AsyncSession, spec: RunSpec, machine_ids: list[str], settings: Settings) -> None:
    """The run spec against each selected machine's catalog and the run budgets (runs.service.check_spec);
    its 422 names the field under ["body", "run", ...]."""
    if not machine_ids:
        return
    try:
        await runs_service.check_spec(session, spec, machine_ids, settings)
    except ValidationFailed as e:
        raise ValidationFailed([{**err, "loc": ["body", "run", *err["loc"][1:]]} for err in e.errors]) from e


async def create(
    session: AsyncSession, body: ScheduleCreate, settings: Settings, who: str | None, now: datetime
) -> Schedule:
    count = await session.scalar(select(func.count()).select_from(Schedule))
    if (count or 0) >= settings.max_schedules:
        raise Conflict(
            f"at most {settings.max_schedules} schedules (CTXBENCH_MAX_SCHEDULES): delete one first"
        )
    t = check_timing(body.interval_s, body.cron, body.jitter_s or 0, settings, now)
    await check_run(
        session, body.run, await check_selection(session, body.machine_ids, body.selector), settings
    )
    sid = new_id()
    nxt = timing.first(sid, t, now)
    row = Schedule(
        id=sid,
        name=body.name,
        spec=body.run.model_dump(mode="json", exclude_none=True),
        machine_ids=body.machine_ids,
        selector=str(parse_selector(body.selector, ["body", "selector"]))
        if body.selector is not None
        else None,
        interval_s=t.interval_s,
        cron=t.cron,
        jitter_s=t.jitter_s,
        paused=body.paused,
        next_due_at=nxt.due_at,
        next_fire_at=nxt.fire_at,
        version=1,
        created_by=who,
        created_at=now,
        updated_at=now,
    )
    session.add(row)
    await session.commit()
    return row


async def load(session: AsyncSession, schedule_id: str) -> Schedule:
    row = await session.get(Schedule, schedule_id, populate_existing=True)
    if row is None:
        raise NotFound(f"schedule {schedule_id!r} not found")
    return row


async def patch(
    session: AsyncSession, schedule_id: str, body: SchedulePatch, settings: Settings, now: datetime
) -> Schedule:
    """Fields given replace the stored ones; the whole result is checked as a create would be. A change
    of timing (or a resume) counts the next slot from now."""
    row = await load(session, schedule_id)
    given = body.model_fields_set
    machine_ids, selector = row.machine_ids, row.selector
    if body.machine_ids is not None:
        machine_ids, selector = body.machine_ids, None
    elif body.selector is not None:
        machine_ids, selector = None, body.selector
    interval_s, cron = row.interval_s, row.cron
    if body.interval_s is not None:
        interval_s, cron = body.interval_s, None
    elif body.cron is not None:
        interval_s, cron = None, body.cron
    jitter_s = body.jitter_s if body.jitter_s is not None else row.jitter_s
    t = check_timing(interval_s, cron, jitter_s, settings, now)
    spec = body.run if body.run is not None else RunSpec.model_validate(row.spec)
    if {"run", "machine_ids", "selector"} & given:
        await check_run(session, spec, await check_selection(session, machine_ids, selector), settings)
    retimed = t != timing_of(row) or (row.paused and body.paused is False)
    if body.name is not None:
        row.name = body.name
    if body.run is not None:
        row.spec = body.run.model_dump(mode="json", exclude_none=True)
    row.machine_ids = machine_ids
    row.selector = str(parse_selector(selector, ["body", "selector"])) if selector is not None else None
    row.interval_s, row.cron, row.jitter_s = t.interval_s, t.cron, t.jitter_s
    if body.paused is not None:
        row.paused = body.paused
    if retimed:
        nxt = timing.first(row.id, t, now)
        row.next_due_at, row.next_fire_at = nxt.due_at, nxt.fire_at
    row.version += 1  # a firing that read the schedule before this edit loses its claim
    row.updated_at = now
    await session.commit()
    return row


async def set_paused(
    session: AsyncSession, schedule_id: str, paused: bool, settings: Settings, now: datetime
) -> Schedule:
    return await patch(session, schedule_id, SchedulePatch(paused=paused), settings, now)


async def remove(session: AsyncSession, schedule_id: str) -> None:
    """The schedule and its firings; the runs it made stay (their schedule_id names it still)."""
    await load(session, schedule_id)
    await session.execute(delete(ScheduleFiring).where(ScheduleFiring.schedule_id == schedule_id))
    await session.execute(delete(Schedule).where(Schedule.id == schedule_id))
    await session.commit()


def schedule_out(row: Schedule, last: ScheduleFiring | None) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "run": row.spec,
        "machine_ids": row.machine_ids,
        "selector": row.selector,
        "interval_s": row.interval_s,
        "cron": row.cron,
        "jitter_s": row.jitter_s,
        "paused": row.paused,
        "next_fire_at": None if row.paused else row.next_fire_at,
        "next_due_at": None if row.paused else row.next_due_at,
        "created_by": row.created_by,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "last_firing": FiringOut.model_validate(last) if last is not None else None,
    }


async def list_schedules(session: AsyncSession) -> list[ScheduleOut]:
    """Every schedule (at most CTXBENCH_MAX_SCHEDULES) by name, each with its newest firing: two queries."""
    rows = list(await session.scalars(select(Schedule).order_by(Schedule.name, Schedule.id)))
    newest = (
        select(ScheduleFiring.schedule_id, func.max(ScheduleFiring.fired_at).label("at"))
        .group_by(ScheduleFiring.schedule_id)
        .subquery()
    )
    last: dict[str, ScheduleFiring] = {}
    q = select(ScheduleFiring).join(
        newest,
        (newest.c.schedule_id == ScheduleFiring.schedule_id) & (newest.c.at == ScheduleFiring.fired_at),
    )
    for f in await session.scalars(q):
        last[f.schedule_id] = f
    return [ScheduleOut.model_validate(schedule_out(r, last.get(r.id))) for r in rows]


async def detail(session: AsyncSession, schedule_id: str) -> ScheduleDetail:
    row = await load(session, schedule_id)
    firings = list(
        await session.scalars(
            select(ScheduleFiring)
            .where(ScheduleFiring.schedule_id == schedule_id)
            .order_by(ScheduleFiring.fired_at.desc(), ScheduleFiring.due_at.desc())
            .limit(FIRINGS_SHOWN)
        )
    )
    return ScheduleDetail.model_validate(
        {
            **schedule_out(row, firings[0] if firings else None),
            "firings": [FiringOut.model_validate(f) for f in firings],
        }
    )
