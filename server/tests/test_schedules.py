"""The scheduler on a real migrated database (SQLite, or PostgreSQL with CTXBENCH_TEST_DATABASE_URL;
rolled back after each test, or one of its own where several processes or sessions race): each slot
fires exactly once, whoever races for it and across restarts; busy machines are skipped; the selection
is resolved at each firing. Time is the tick's argument: nothing sleeps."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select

from ctxbench_server.models import MachineKernel, Run, Schedule, ScheduleFiring
from ctxbench_server.schedules import service, timing

from .conftest import RolledBack
from .schedules_helpers import T0, Db, migrated

S = timedelta(seconds=1)


@pytest.fixture
def db(tmp_path: Path, rolled_back: RolledBack) -> Db:
    return Db(tmp_path, rolled_back.engine, rolled_back)


@pytest.fixture
async def own_db(tmp_path: Path) -> AsyncIterator[Db]:
    """A database of its own: several processes (engines) or concurrent sessions on it."""
    async for d in migrated(tmp_path):
        yield d


async def firings(db: Db, schedule_id: str) -> list[ScheduleFiring]:
    async with db.sessionmaker() as s:
        q = select(ScheduleFiring).where(ScheduleFiring.schedule_id == schedule_id)
        return list(await s.scalars(q.order_by(ScheduleFiring.due_at)))


async def runs_of(db: Db, schedule_id: str) -> list[Run]:
    async with db.sessionmaker() as s:
        return list(
            await s.scalars(select(Run).where(Run.schedule_id == schedule_id).order_by(Run.created_at))
        )


async def schedule(db: Db, schedule_id: str) -> Schedule:
    async with db.sessionmaker() as s:
        row = await s.get(Schedule, schedule_id)
        assert row is not None
        return row


async def test_a_due_slot_fires_once_and_the_next_is_set(db: Db) -> None:
    await db.machine("m1")
    await db.machine("m2")
    sid = await db.create(machine_ids=["m1", "m2"])
    first = T0 + 60 * S
    assert (await schedule(db, sid)).next_fire_at == first
    sched = db.scheduler()
    assert await sched.tick(first - 1 * S) == []  # not due yet
    [fired] = await sched.tick(first + 1 * S)
    assert fired.due_at == first and sorted(fired.run_ids) == ["m1", "m2"] and fired.skipped == []
    assert await sched.tick(first + 2 * S) == []  # claimed: not again
    row = await schedule(db, sid)
    assert row.next_due_at == first + 60 * S
    runs = await runs_of(db, sid)
    assert sorted(r.machine_id for r in runs) == ["m1", "m2"]
    assert {r.status for r in runs} == {"queued"}  # no agent connected: they wait in the queue
    assert runs[0].spec["items"] == [{"kernel": "ctxsw.pipe", "params": {}}] and runs[0].profile == "quick"
    [f] = await firings(db, sid)
    assert sorted(f.run_ids) == sorted(r.id for r in runs) and f.error is None


@pytest.mark.parametrize("claimers", [2, 4])
async def test_racing_processes_fire_a_slot_once(own_db: Db, claimers: int) -> None:
    """Several server processes (their own engines) tick at the same moment: one claim wins."""
    await own_db.machine("m1")
    sid = await own_db.create(machine_ids=["m1"], interval_s=60)
    schedulers = [own_db.scheduler(own_db.process()) for _ in range(claimers)]
    got = await asyncio.gather(*(s.tick(T0 + 61 * S) for s in schedulers))
    assert sum(len(g) for g in got) == 1
    assert len(await firings(own_db, sid)) == 1 and len(await runs_of(own_db, sid)) == 1


async def test_two_sessions_of_one_process_claim_once(own_db: Db) -> None:
    await own_db.machine("m1")
    sid = await own_db.create(machine_ids=["m1"])
    row = await schedule(own_db, sid)
    sched = own_db.scheduler()
    now = T0 + 61 * S
    got = await asyncio.gather(*(sched.fire(sid, row.next_due_at, row.version, now) for _ in range(3)))
    assert sum(g is not None for g in got) == 1
    assert len(await runs_of(own_db, sid)) == 1


async def test_a_restart_neither_loses_nor_doubles_a_firing(own_db: Db) -> None:
    await own_db.machine("m1")
    sid = await own_db.create(machine_ids=["m1"])
    before = own_db.scheduler()
    assert len(await before.tick(T0 + 60 * S)) == 1
    await own_db.finish_runs(sid)
    # The process stops; an hour later a new one starts on the same database (its own engine).
    now = T0 + 3600 * S + 30 * S
    after = own_db.scheduler(own_db.process())
    [fired] = await after.tick(now)
    assert fired.due_at == T0 + 120 * S  # the slot missed first fires, once for all 59 missed
    assert await after.tick(now) == [] and await before.tick(now) == []
    row = await schedule(own_db, sid)
    assert row.next_due_at == timing.Timing(60, None).slot_after(now)  # counted from now
    assert len(await firings(own_db, sid)) == 2 and len(await runs_of(own_db, sid)) == 2


async def test_a_machine_with_a_run_of_the_schedule_queued_is_skipped(db: Db) -> None:
    await db.machine("m1")
    await db.machine("m2")
    sid = await db.create(machine_ids=["m1", "m2"])
    sched = db.scheduler()
    await sched.tick(T0 + 60 * S)
    async with db.sessionmaker() as s:  # m2's run finished; m1's is still queued (its agent is away)
        run = await s.scalar(select(Run).where(Run.schedule_id == sid, Run.machine_id == "m2"))
        assert run is not None
        run.status = "succeeded"
        await s.commit()
    [fired] = await sched.tick(T0 + 120 * S)
    assert list(fired.run_ids) == ["m2"]
    assert fired.skipped == [{"machine_id": "m1", "reason": "busy"}]
    async with db.sessionmaker() as s:
        queued = await s.scalar(
            select(func.count()).where(Run.schedule_id == sid, Run.machine_id == "m1", Run.status == "queued")
        )
    assert queued == 1  # never queued twice
    [fired] = await sched.tick(T0 + 180 * S)  # both still run this schedule: skipped, not an error
    assert fired.run_ids == {} and fired.error is None
    assert sorted(fired.skipped, key=lambda k: k["machine_id"]) == [
        {"machine_id": m, "reason": "busy"} for m in ("m1", "m2")
    ]
    await db.finish_runs(sid)
    [fired] = await sched.tick(T0 + 240 * S)
    assert sorted(fired.run_ids) == ["m1", "m2"]


async def test_a_selector_is_resolved_at_each_firing(db: Db) -> None:
    await db.machine("a", labels={"env": "prod"})
    await db.machine("b", labels={"env": "dev"})
    await db.machine("c", labels={"env": "prod"}, status="revoked")
    sid = await db.create(selector="env=prod")
    sched = db.scheduler()
    [fired] = await sched.tick(T0 + 60 * S)
    assert list(fired.run_ids) == ["a"]
    await db.finish_runs(sid)
    await db.machine("d", labels={"env": "prod"})  # joins later: the next firing takes it
    [fired] = await sched.tick(T0 + 120 * S)
    assert sorted(fired.run_ids) == ["a", "d"]


async def test_a_machine_that_lost_the_kernel_is_skipped_with_the_reason(db: Db) -> None:
    await db.machine("m1")
    await db.machine("m2")
    await db.create(machine_ids=["m1", "m2"])
    async with db.sessionmaker() as s:
        await s.execute(delete(MachineKernel).where(MachineKernel.machine_id == "m2"))
        await s.commit()
    [fired] = await db.scheduler().tick(T0 + 60 * S)
    assert list(fired.run_ids) == ["m1"]
    [skip] = fired.skipped
    assert skip["machine_id"] == "m2" and "unknown kernel 'ctxsw.pipe'" in skip["reason"]


async def test_no_machine_left_records_why(db: Db) -> None:
    await db.machine("m1")
    sid = await db.create(machine_ids=["m1"])
    async with db.sessionmaker() as s:
        await s.execute(delete(MachineKernel))
        await s.commit()
    [fired] = await db.scheduler().tick(T0 + 60 * S)
    assert fired.run_ids == {} and fired.error and "every selected one skipped" in fired.error
    [f] = await firings(db, sid)
    assert f.skipped[0]["machine_id"] == "m1"


async def test_paused_does_not_fire_and_resume_counts_from_now(db: Db) -> None:
    await db.machine("m1")
    sid = await db.create(machine_ids=["m1"], paused=True)
    sched = db.scheduler()
    assert await sched.tick(T0 + 600 * S) == []
    async with db.sessionmaker() as s:
        await service.set_paused(s, sid, False, db.settings, T0 + 600 * S)
    assert (await schedule(db, sid)).next_due_at == T0 + 660 * S  # the slots missed while paused: none
    assert len(await sched.tick(T0 + 660 * S)) == 1


async def test_an_edit_after_the_read_makes_the_claim_lose(db: Db) -> None:
    await db.machine("m1")
    sid = await db.create(machine_ids=["m1"])
    row = await schedule(db, sid)
    async with db.sessionmaker() as s:
        await service.patch(s, sid, service.SchedulePatch(name="renamed"), db.settings, T0 + 1 * S)
    assert await db.scheduler().fire(sid, row.next_due_at, row.version, T0 + 61 * S) is None
    assert len(await db.scheduler().tick(T0 + 61 * S)) == 1  # the next tick reads it again


async def test_jitter_delays_the_firing_the_same_on_every_process(own_db: Db) -> None:
    await own_db.machine("m1")
    sid = await own_db.create(machine_ids=["m1"], interval_s=3600, jitter_s=1800)
    row = await schedule(own_db, sid)
    assert row.next_fire_at == row.next_due_at + timing.jitter(sid, row.next_due_at, 1800)
    if row.next_fire_at > row.next_due_at:
        assert await own_db.scheduler().tick(row.next_fire_at - 1 * S) == []
    assert len(await own_db.scheduler(own_db.process()).tick(row.next_fire_at)) == 1


async def test_old_firings_are_pruned(db: Db, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxbench_server.schedules import firing

    monkeypatch.setattr(firing, "FIRINGS_KEPT", 3)
    await db.machine("m1")
    sid = await db.create(machine_ids=["m1"])
    sched = db.scheduler()
    for i in range(1, 6):
        await sched.tick(T0 + 60 * i * S)
        await db.finish_runs(sid)
    kept = await firings(db, sid)
    assert [f.due_at for f in kept] == [T0 + 60 * i * S for i in (3, 4, 5)]
