"""The one way a run starts (dispatch/starts.py RunStarter): the claim, what goes on the stream, and
what a second start or a run no longer queued gets. A migrated database rolled back after each test, a
real hub with connections whose outbox is what the agent's stream would send; the gRPC side of the same
path is tested over sockets in test_agent_flow.py, test_batches_and_queue.py and test_run_lifecycle.py."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from ctxbench_server.dispatch import repository
from ctxbench_server.dispatch.commands import StartRun
from ctxbench_server.dispatch.hub import AgentConnection, AgentHub
from ctxbench_server.dispatch.starts import RunStarter
from ctxbench_server.models import ItemState, Kernel, Machine, MachineKernel, Run, RunItem, RunStatus
from ctxbench_server.models.base import new_id, utcnow

from .conftest import RolledBack

SPEC = {
    "id": "syscall.getppid",
    "params": [
        {"name": "threads", "type": "int", "default": 1, "min": 1, "max": 64},
        {"name": "scale", "type": "float", "default": 1.0, "min": 0.5, "max": 4.0},
    ],
}


class Told:
    def __init__(self) -> None:
        self.runs: list[str] = []

    def notify(self, run_id: str) -> None:
        self.runs.append(run_id)


async def _machines(rb: RolledBack, *names: str) -> None:
    async with rb.sessionmaker() as s:
        s.add(Kernel(id=SPEC["id"], spec=SPEC))
        for name in names:
            s.add(Machine(id=name, name=name, hostname=name, facts={"host": name}))
        await s.flush()
        s.add_all(MachineKernel(machine_id=name, kernel_id=SPEC["id"], spec=SPEC) for name in names)
        await s.commit()


async def _queue(rb: RolledBack, machine_id: str, points: int, *, age_s: float = 0, done: int = 0) -> str:
    """A queued run of `points` items, item i's id `<i>-<run id's first 30 characters>` (the first
    `done` with a result: a retried run's)."""
    run_id, at = new_id(), utcnow() - timedelta(seconds=age_s)
    async with rb.sessionmaker() as s:
        s.add(
            Run(
                id=run_id,
                machine_id=machine_id,
                batch_id=run_id,
                status=RunStatus.QUEUED,
                spec={},
                repetitions=5,
                min_time_s=0.01,
                launches=3,
                created_at=at,
                queued_at=at,
            )
        )
        await s.flush()
        s.add_all(
            RunItem(
                id=_item(run_id, i),
                run_id=run_id,
                index=i,
                kernel_id=SPEC["id"],
                params={"threads": i + 1, "scale": 1.5},
                state=ItemState.SUCCEEDED if i < done else ItemState.QUEUED,
                result_id=new_id() if i < done else None,
                timeout_s=60.0,
            )
            for i in range(points)
        )
        await s.commit()
    return run_id


def _item(run_id: str, index: int) -> str:
    return f"{index}-{run_id[:30]}"


def _starter(rb: RolledBack, *online: str) -> tuple[RunStarter, dict[str, AgentConnection], Told]:
    hub, told = AgentHub(), Told()
    conns = {}
    for machine_id in online:
        conns[machine_id] = AgentConnection(machine_id)
        hub.register(conns[machine_id])
    return RunStarter(hub, rb.sessionmaker, rb.sessionmaker, told), conns, told


def _sent(conn: AgentConnection) -> list[Any]:
    out = []
    while not conn.outbox.empty():
        out.append(conn.outbox.get_nowait())
    return out


async def _status(rb: RolledBack, run_id: str) -> tuple[str, Any]:
    async with rb.sessionmaker() as s:
        run = (await s.execute(select(Run.status, Run.facts).where(Run.id == run_id))).one()
    return run.status, run.facts


async def test_a_start_claims_each_free_machines_oldest_run_once(rolled_back: RolledBack) -> None:
    await _machines(rolled_back, "a", "b", "away")
    a_old = await _queue(rolled_back, "a", 3, age_s=10)
    a_new = await _queue(rolled_back, "a", 2)
    b_first = await _queue(rolled_back, "b", 1, age_s=10)
    away = await _queue(rolled_back, "away", 1)
    starter, conns, told = _starter(rolled_back, "a", "b")
    async with rolled_back.sessionmaker() as s:  # b already runs one: it gets nothing more
        await s.execute(
            Run.__table__.update()
            .where(Run.id == b_first)
            .values(status=RunStatus.RUNNING, started_at=utcnow())
        )
        await s.commit()
    b_next = await _queue(rolled_back, "b", 1)

    started = await starter.start(["a", "b", "away"])

    assert [run.id for run in started] == [a_old] and told.runs == [a_old]
    assert started[0].facts == {"host": "a"} and started[0].started_at is not None
    assert await _status(rolled_back, a_old) == (RunStatus.RUNNING, {"host": "a"})
    for other in (a_new, b_next, away):
        assert (await _status(rolled_back, other))[0] == RunStatus.QUEUED
    (msg,) = _sent(conns["a"])
    assert isinstance(msg, StartRun) and msg.run_id == a_old and not msg.more and not msg.continued
    assert [it.item_id for it in msg.items] == [_item(a_old, i) for i in range(3)]  # in index order
    assert [it.params for it in msg.items] == [{"threads": str(i + 1), "scale": "1.5"} for i in range(3)]
    assert {(it.kernel_id, it.repetitions, it.min_time_s, it.launches, it.timeout_s) for it in msg.items} == {
        (SPEC["id"], 5, 0.01, 3, 60.0)
    }
    assert conns["a"].current_run_id == a_old and _sent(conns["b"]) == []

    assert await starter.start(["a", "b"]) == []  # a runs now: a second start starts nothing
    assert _sent(conns["a"]) == []


async def test_starts_at_once_never_start_two_runs_on_one_machine(rolled_back: RolledBack) -> None:
    await _machines(rolled_back, "a")
    first = await _queue(rolled_back, "a", 1, age_s=10)
    await _queue(rolled_back, "a", 1)
    starter, conns, _ = _starter(rolled_back, "a")
    got = await asyncio.gather(*(starter.start(["a"]) for _ in range(5)))
    assert [run.id for runs in got for run in runs] == [first]
    assert len(_sent(conns["a"])) == 1


async def test_the_claim_starts_only_a_run_still_queued(
    rolled_back: RolledBack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another server process cancelled the run between this one's read of the queue and its UPDATE:
    # the UPDATE's own condition leaves it cancelled.
    await _machines(rolled_back, "a")
    run_id = await _queue(rolled_back, "a", 1)
    async with rolled_back.sessionmaker() as s:
        await s.execute(Run.__table__.update().where(Run.id == run_id).values(status=RunStatus.CANCELLED))
        await s.commit()

    async def stale_queue(_session: Any, _machine_ids: Any) -> list[str]:
        return [run_id]

    monkeypatch.setattr(repository, "_next_queued", stale_queue)
    starter, conns, told = _starter(rolled_back, "a")
    assert await starter.start(["a"]) == [] and told.runs == []
    assert (await _status(rolled_back, run_id))[0] == RunStatus.CANCELLED
    assert _sent(conns["a"]) == []


async def test_resend_sends_a_running_runs_open_items_only(rolled_back: RolledBack) -> None:
    await _machines(rolled_back, "a")
    run_id = await _queue(rolled_back, "a", 4, done=2)  # a retried run: two items measured before
    starter, conns, _ = _starter(rolled_back, "a")
    (started,) = await starter.start(["a"])
    (first,) = _sent(conns["a"])
    assert [it.item_id for it in first.items] == [_item(run_id, 2), _item(run_id, 3)]
    async with rolled_back.sessionmaker() as s:
        assert await starter.resend(s, conns["a"], started.id) == 2
    (again,) = _sent(conns["a"])
    assert again == first
