"""Admission of agents' connects (agents/admission.py): a few recorded at a time, a bounded queue, and
the rest told when to come back (gRPC's grpc-retry-pushback-ms trailer), each at a turn of its own.
And a reconnect with the catalog the server has costs no catalog writes."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import httpx
import pytest
from sqlalchemy import event

from ctxbench_server.agents.admission import MAX_RETRY_S, MIN_RETRY_S, PUSHBACK_KEY, Admission, Busy
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2_grpc as pb_grpc
from ctxbench_server.main import CtxbenchServer

from .runs_helpers import MakeAgent


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def hold(admission: Admission, entered: asyncio.Event, leave: asyncio.Event) -> None:
    async with admission.admit():
        entered.set()
        await leave.wait()


async def test_admission_queues_then_books_each_refused_connect_a_turn_of_its_own() -> None:
    admission = Admission(concurrent=1, queue=1, rand=lambda: 0.5)  # 0.5: no jitter
    clock = Clock()
    admission._clock = clock
    admission._gap_s = 2.0  # as if the server recorded one connect every 2 s lately
    inside, leave = asyncio.Event(), asyncio.Event()
    first = asyncio.create_task(hold(admission, inside, leave))
    await inside.wait()
    second_in, second_leave = asyncio.Event(), asyncio.Event()
    second = asyncio.create_task(hold(admission, second_in, second_leave))
    await asyncio.sleep(0)
    assert admission.waiting == 1 and not second_in.is_set()

    # The queue is full: refused at once, each a turn later than the one before, never together.
    turns = []
    for _ in range(5):
        with pytest.raises(Busy) as refused:
            async with admission.admit():
                pass
        turns.append(refused.value.retry_after_s)
    assert admission.refused == 5
    # After the one inside and the one waiting (2 s each), one turn of 2 s each.
    assert turns == pytest.approx([6.0, 8.0, 10.0, 12.0, 14.0])

    # A turn is one gap: 2 s between connects makes turns 2 s apart.
    clock.now += 2.0
    leave.set()
    await first
    await second_in.wait()
    clock.now += 2.0
    second_leave.set()
    await second
    assert admission.waiting == 0
    # 4 s later, nobody inside or waiting: the next turn still comes after the 5 booked before it.
    assert admission.book() == pytest.approx(14.0 + 2.0 - 4.0)
    # Jitter is ±10 %, and no wait is longer than MAX_RETRY_S.
    admission._rand = lambda: 0.0
    assert admission.book() == pytest.approx((16.0 + 2.0 - 4.0) * 0.9)
    # Past the horizon: spread over its second half, and not booked (the next turn is where it was).
    admission._gap_s = 1000.0
    assert admission.book() == MAX_RETRY_S / 2
    admission._rand = lambda: 0.999
    assert MAX_RETRY_S / 2 < admission.book() < MAX_RETRY_S
    assert admission._booked == pytest.approx(clock.now + 14.0)


async def test_a_refused_connect_comes_back_half_a_queue_before_its_turn() -> None:
    """It joins the queue behind half a queue of others: were the rate to rise after it was booked, the
    server would still have work until it comes."""
    admission = Admission(concurrent=1, queue=8, rand=lambda: 0.5)
    clock = Clock()
    admission._clock = clock
    admission._gap_s = 1.0
    leaves = [asyncio.Event() for _ in range(9)]
    tasks = [asyncio.create_task(hold(admission, asyncio.Event(), leaves[i])) for i in range(9)]
    await asyncio.sleep(0)
    assert admission.waiting == 8
    with pytest.raises(Busy) as refused:
        async with admission.admit():
            pass
    # Its turn: after the one inside and the 8 waiting, 10 s from now; it comes back 4 turns before.
    assert refused.value.retry_after_s == pytest.approx(10.0 - 4.0)
    assert admission._booked == pytest.approx(clock.now + 10.0)
    for leave in leaves:
        leave.set()
    await asyncio.gather(*tasks)


async def test_a_connect_that_would_outwait_its_deadline_is_told_its_turn_instead() -> None:
    """An Enroll recorded after the agent gave up on it is lost to the agent (an agent without an
    enrollment key is then refused for good, as a takeover of an enrolled id; one with a key enrolls
    again): one whose turn would come after half of its remaining time is refused with a turn at once,
    however much room the queue has."""
    admission = Admission(concurrent=1, queue=100, rand=lambda: 0.5)
    admission._gap_s = 1.0
    leaves = [asyncio.Event() for _ in range(4)]
    tasks = [asyncio.create_task(hold(admission, asyncio.Event(), leaves[i])) for i in range(4)]
    await asyncio.sleep(0)
    assert admission.waiting == 3  # its turn: about 4 gaps away
    with pytest.raises(Busy):
        async with admission.admit(deadline_s=6.0):
            pass
    entered, leave = asyncio.Event(), asyncio.Event()

    async def with_deadline(deadline_s: float | None) -> None:
        async with admission.admit(deadline_s):
            entered.set()
            await leave.wait()

    patient = [asyncio.create_task(with_deadline(d)) for d in (10.0, None)]
    await asyncio.sleep(0)
    assert admission.waiting == 5 and admission.refused == 1  # 4 s of 10 s left, and no deadline: queued
    for ev in leaves:
        ev.set()
    leave.set()
    await asyncio.gather(*tasks, *patient)


async def test_the_gap_is_the_rate_connects_finish_at_while_others_wait() -> None:
    """Not a connect's own duration: 8 connects, 4 inside at a time, each inside 1.2 s but one finishing
    every 0.3 s, give a gap of 0.3 s; a connect that finishes with nobody else there does not count."""
    admission = Admission(concurrent=4, queue=8)
    clock = Clock()
    admission._clock = clock
    leaves = [asyncio.Event() for _ in range(9)]
    entered = [asyncio.Event() for _ in range(9)]
    tasks = [asyncio.create_task(hold(admission, entered[i], leaves[i])) for i in range(8)]
    await asyncio.sleep(0)
    for i in range(8):
        clock.now += 0.3
        leaves[i].set()
        await tasks[i]
    assert admission._gap_s == pytest.approx(0.3)
    # Idle for a minute, then one connect alone: the rate is what it was.
    clock.now += 60.0
    last = asyncio.create_task(hold(admission, entered[8], leaves[8]))
    await entered[8].wait()
    clock.now += 5.0
    leaves[8].set()
    await last
    assert admission._gap_s == pytest.approx(0.3)


async def test_admission_admits_in_turn_when_the_queue_has_room() -> None:
    admission = Admission(concurrent=2, queue=8)
    order: list[int] = []

    async def one(i: int) -> None:
        async with admission.admit():
            order.append(i)
            await asyncio.sleep(0.01)

    await asyncio.gather(*(one(i) for i in range(10)))
    assert sorted(order) == list(range(10)) and admission.refused == 0


def test_admission_refuses_impossible_sizes() -> None:
    with pytest.raises(ValueError):
        Admission(concurrent=0, queue=1)


async def test_a_full_server_tells_the_agent_when_to_come_back(
    server: CtxbenchServer, make_agent: MakeAgent
) -> None:
    admission = Admission(concurrent=1, queue=0)
    server.agent_service.admission = admission
    agent = make_agent(name="late-host")
    inside, leave = asyncio.Event(), asyncio.Event()
    holder = asyncio.create_task(hold(admission, inside, leave))
    await inside.wait()
    try:
        # Enrollment is a write too: refused with the trailer, the database untouched.
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await agent.enroll()
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        pushback = dict(refused.value.trailing_metadata() or ())
        assert int(pushback[PUSHBACK_KEY]) >= MIN_RETRY_S * 1000
        assert "retry in" in (refused.value.details() or "")
    finally:
        leave.set()
        await holder
    await agent.enroll()

    # A Hello waits for its turn the same way.
    inside.clear()
    leave.clear()
    holder = asyncio.create_task(hold(admission, inside, leave))
    await inside.wait()
    try:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await agent.connect()
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert PUSHBACK_KEY in dict(refused.value.trailing_metadata() or ())
    finally:
        leave.set()
        await holder
        await agent.close()
    assert (await agent.connect()).machine_id == agent.agent_id
    await agent.close()

    # Until the server has finished starting, every connect is told its turn, the way a full one is,
    # before its Hello is read. The stream here sends none: a Python client whose Hello write loses the
    # race with that early end reports gRPC's local INTERNAL instead of the server's status (the Go
    # agent reads the real one: conn.streamErr).
    admission.is_open = False
    async with agent.channel() as ch:
        call = pb_grpc.AgentServiceStub(ch).Connect(
            metadata=[("authorization", f"Bearer {agent.credential}")], timeout=10
        )
        assert await call.code() == grpc.StatusCode.UNAVAILABLE
        assert "starting" in (await call.details() or "")
        assert int(dict(await call.trailing_metadata() or ())[PUSHBACK_KEY]) >= MIN_RETRY_S * 1000
    admission.is_open = True
    assert (await agent.connect()).machine_id == agent.agent_id
    await agent.close()


async def test_a_reconnect_with_the_same_catalog_writes_no_catalog(
    server: CtxbenchServer, http: httpx.AsyncClient, make_agent: MakeAgent
) -> None:
    writes: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if "machine_kernels" in statement and statement.lstrip().split()[0].upper() in ("INSERT", "DELETE"):
            writes.append(statement.split()[0].upper())

    event.listen(server.agent_engine.sync_engine, "before_cursor_execute", seen)
    try:
        agent = make_agent(name="steady-host")
        await agent.connect()
        await agent.close()
        assert writes, "the first Hello stores the catalog"
        writes.clear()
        await agent.connect()
        await agent.close()
        assert writes == []  # the same catalog: nothing rewritten

        # A changed catalog (an upgraded agent) is stored.
        agent.kernels = agent.kernels[:1]
        await agent.connect()
        await agent.close()
        assert writes
    finally:
        event.remove(server.agent_engine.sync_engine, "before_cursor_execute", seen)
    machine = (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()
    assert machine["kernels"] == [agent.kernels[0].id]
