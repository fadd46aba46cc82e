"""The scheduler: each server process looks for due schedules every CTXBENCH_SCHEDULE_TICK_S and fires
them. A firing is claimed in the database, so it happens once however many processes share it and
whenever they restart (docs/architecture.md "Schedules"):

    UPDATE schedules SET next_due_at = :next, next_fire_at = :next_fire
     WHERE id = :id AND next_due_at = :due AND version = :version AND NOT paused

One row changed: this process won the slot. In the same transaction it records the firing (unique per
schedule and slot) and stores the runs through runs.service.add_runs, the path POST /runs takes; the
runs start once it commits. A process that loses changes nothing. On PostgreSQL the loser's UPDATE waits
for the winner's row lock and then matches no row; on SQLite the writers take turns."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server.config import Settings
from ctxbench_server.dispatch.dispatcher import Dispatcher
from ctxbench_server.errors import CtxbenchError, ValidationFailed
from ctxbench_server.models import Machine, MachineStatus, Run, RunStatus, Schedule, ScheduleFiring
from ctxbench_server.models.base import new_id, utcnow
from ctxbench_server.push.changes import Changes
from ctxbench_server.runs import service as runs_service
from ctxbench_server.runs.schemas import MAX_BATCH, RunCreate, RunSpec
from ctxbench_server.schedules import timing
from ctxbench_server.schedules.schemas import FIRINGS_KEPT
from ctxbench_server.schedules.service import active_matching, timing_of

log = logging.getLogger(__name__)
NO_MACHINE = "no machine to run on"
BUSY = "busy"  # a skip's reason: this schedule's run on the machine is still queued or running
DUE_PER_TICK = 100  # schedules fired per tick at most; the rest are due still at the next


@dataclass
class Fired:
    """One firing this process claimed and stored."""

    schedule_id: str
    due_at: datetime
    run_ids: dict[str, str]  # machine id -> run id
    skipped: list[dict[str, str]] = field(default_factory=list)
    error: str | None = None
    created: runs_service.Created | None = None  # the stored rows, to start the runs without reading them


def _message(e: CtxbenchError) -> str:
    if isinstance(e, ValidationFailed):
        return "; ".join(str(err.get("msg", "")) for err in e.errors)[:2000]
    return str(e.detail)[:2000]


class Scheduler:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        settings: Settings,
        dispatcher: Dispatcher[Any],
        changes: Changes,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.settings = settings
        self.dispatcher = dispatcher
        self.changes = changes
        self.clock = clock

    async def run(self) -> None:
        """Ticks until cancelled; a tick that fails is logged and the next one tries again."""
        while True:
            try:
                await self.tick()
            except Exception:
                log.exception("schedules: a tick failed")
            await asyncio.sleep(self.settings.schedule_tick_s)

    async def tick(self, now: datetime | None = None) -> list[Fired]:
        """Fires every unpaused schedule due by now (the clock's, unless given); returns what this
        process fired (another process may have fired the rest)."""
        now = now or self.clock()
        async with self.sessionmaker() as session:
            due = (
                await session.execute(
                    select(Schedule.id, Schedule.next_due_at, Schedule.version)
                    .where(Schedule.paused.is_(False), Schedule.next_fire_at <= now)
                    .order_by(Schedule.next_fire_at)
                    .limit(DUE_PER_TICK)
                )
            ).all()
        fired = []
        for schedule_id, due_at, version in due:
            try:
                got = await self.fire(schedule_id, due_at, version, now)
            except Exception:
                log.exception("schedules: firing %s at %s failed", schedule_id, due_at)
                continue
            if got is not None:
                fired.append(got)
        return fired

    async def fire(self, schedule_id: str, due_at: datetime, version: int, now: datetime) -> Fired | None:
        """Claims the slot `due_at` of the schedule as read at `version`; None: another claim won, or the
        schedule changed since (the next tick reads it again)."""
        async with self.sessionmaker() as session:
            row = await session.get(Schedule, schedule_id)
            if row is None or row.version != version or row.paused:
                return None
            nxt = timing.after_firing(
                row.id, timing_of(row), due_at, now, timing.late_after_s(self.settings.schedule_tick_s)
            )
            claim = await session.execute(
                update(Schedule)
                .where(
                    Schedule.id == schedule_id,
                    Schedule.next_due_at == due_at,
                    Schedule.version == version,
                    Schedule.paused.is_(False),
                )
                .values(next_due_at=nxt.due_at, next_fire_at=nxt.fire_at)
                .execution_options(synchronize_session=False)
            )
            if claim.rowcount != 1:  # type: ignore[attr-defined]
                await session.rollback()
                return None
            fired = await self._runs(session, row, due_at)
            session.add(
                ScheduleFiring(
                    id=new_id(),
                    schedule_id=schedule_id,
                    due_at=due_at,
                    fired_at=now,
                    run_ids=list(fired.run_ids.values()),
                    skipped=fired.skipped,
                    error=fired.error,
                )
            )
            try:
                await session.flush()
            except IntegrityError:  # the slot's firing is stored already (the unique key: a second guard)
                await session.rollback()
                return None
            kept = (
                select(ScheduleFiring.id)
                .where(ScheduleFiring.schedule_id == schedule_id)
                .order_by(ScheduleFiring.fired_at.desc(), ScheduleFiring.due_at.desc())
                .offset(FIRINGS_KEPT)
            )
            await session.execute(delete(ScheduleFiring).where(ScheduleFiring.id.in_(kept.scalar_subquery())))
            await session.commit()
        if fired.created is not None:
            created = fired.created
            self.changes.runs(created.run_ids.values(), "created")
            await self.dispatcher.start(created.run_ids, from_rest=True)
        log.info(
            "schedules: %s fired for %s: %d runs, %d machines skipped",
            schedule_id,
            due_at.isoformat(),
            len(fired.run_ids),
            len(fired.skipped),
        )
        return fired

    async def _runs(self, session: AsyncSession, row: Schedule, due_at: datetime) -> Fired:
        """The firing's runs stored in the claim's transaction (not committed), or why none."""
        fired = Fired(row.id, due_at, {})
        targets = await self._targets(session, row, fired.skipped)
        if not targets:
            if fired.skipped and all(s["reason"] == BUSY for s in fired.skipped):
                return fired  # not a failure: the last firing's runs still run, and the skips say so
            fired.error = NO_MACHINE + (" (every selected one skipped)" if fired.skipped else "")
            return fired
        spec = RunSpec.model_validate(row.spec)
        try:
            try:
                created = await self._add(session, row, spec, targets)
            except ValidationFailed:
                # Which machines refuse the spec (a kernel gone from a catalog): each alone, the rest run.
                ok = []
                for mid in targets:
                    try:
                        await runs_service.check_spec(session, spec, [mid], self.settings)
                        ok.append(mid)
                    except ValidationFailed as e:
                        fired.skipped.append({"machine_id": mid, "reason": _message(e)})
                if not ok:
                    fired.error = NO_MACHINE + " (every selected one skipped)"
                    return fired
                if len(ok) == len(targets):  # not one machine's catalog: a budget over all of them
                    raise
                created = await self._add(session, row, spec, ok)
        except CtxbenchError as e:
            fired.error = _message(e)
            return fired
        fired.run_ids, fired.created = created.run_ids, created
        return fired

    async def _add(
        self, session: AsyncSession, row: Schedule, spec: RunSpec, machine_ids: list[str]
    ) -> runs_service.Created:
        body = RunCreate.model_validate({**spec.model_dump(exclude_none=True), "machine_ids": machine_ids})
        return await runs_service.add_runs(session, body, self.settings, schedule_id=row.id)

    async def _targets(
        self, session: AsyncSession, row: Schedule, skipped: list[dict[str, str]]
    ) -> list[str]:
        """The machines this firing runs on, each active and without a queued or running run of this
        schedule; the others are added to `skipped` with the reason."""
        if row.machine_ids is not None:
            status = dict(
                (
                    await session.execute(
                        select(Machine.id, Machine.status).where(Machine.id.in_(set(row.machine_ids)))
                    )
                ).all()
            )
            candidates = []
            for mid in row.machine_ids:
                if mid not in status:
                    skipped.append({"machine_id": mid, "reason": "unknown machine (deleted?)"})
                elif status[mid] != MachineStatus.ACTIVE:
                    skipped.append({"machine_id": mid, "reason": f"machine is {status[mid]}"})
                else:
                    candidates.append(mid)
        else:
            candidates = await active_matching(session, row.selector or "")
        busy = set(
            await session.scalars(
                select(Run.machine_id).where(
                    Run.schedule_id == row.id,
                    Run.status.in_((RunStatus.QUEUED, RunStatus.RUNNING)),
                    Run.machine_id.in_(candidates),
                )
            )
        )
        targets: list[str] = []
        for mid in candidates:
            if mid in busy:
                skipped.append({"machine_id": mid, "reason": BUSY})
            elif len(targets) >= MAX_BATCH:
                skipped.append(
                    {"machine_id": mid, "reason": f"over the {MAX_BATCH} machines a firing runs on"}
                )
            else:
                targets.append(mid)
        return targets
