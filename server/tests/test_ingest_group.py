"""Group commit (ingest/writer.py): the batches several streams have ready are stored in one
transaction, each stream still gets its own answers, and one report the database refuses is rejected for
itself only while the other streams' reports are stored (real gRPC, a real database)."""

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from ctxbench_server.cluster import advisory_key
from ctxbench_server.db import create_engine
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.main import CtxbenchServer

from .conftest import TEST_DATABASE_URL, eventually
from .fake_agent import FakeAgent
from .test_stream_robustness import INVALID_ARGUMENT, post_run, refuse_unit_in_database

MakeAgent = Callable[..., FakeAgent]


async def three_streams_held(
    make_agent: MakeAgent,
    http: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
    batched_acks: tuple[bool, bool, bool] = (False, False, False),
) -> tuple[list[FakeAgent], list[tuple[str, list[pb.RunItem]]], asyncio.Event, list[list[str]]]:
    """Three agents with a run of two items each (their Hellos' batched_acks as given); the writer's
    first transaction (agent 0's RUNNING) held until `release` is set, so what agents 1 and 2 send
    meanwhile waits for one turn. Returns the agents, their runs, the release and the machines of each
    transaction the writer begins."""
    from ctxbench_server.ingest import service as ingest

    agents = [make_agent() for _ in range(3)]
    runs = []
    for a, batched in zip(agents, batched_acks, strict=True):
        await a.connect(batched_acks=batched)
        run = await post_run(http, a.agent_id, [{"kernel": "ctxsw.pipe"}] * 2)
        runs.append((run["id"], list((await a.expect("start_run")).start_run.items)))
    transactions: list[list[str]] = []
    entered, release = asyncio.Event(), asyncio.Event()
    record_batch, record_group = ingest.record_batch, ingest.record_group

    async def held(*args: Any) -> ingest.Recorded:
        if not entered.is_set():
            entered.set()
            await release.wait()
        return await record_batch(*args)  # (which calls record_group: counted there)

    async def group(session: Any, batches: list[ingest.Pending], events: Any) -> list[ingest.Recorded]:
        transactions.append(sorted(p.machine_id for p in batches))
        return await record_group(session, batches, events)

    monkeypatch.setattr(ingest, "record_batch", held)
    monkeypatch.setattr(ingest, "record_group", group)
    await agents[0].running(runs[0][0], runs[0][1][0].item_id)
    await asyncio.wait_for(entered.wait(), 5)
    return agents, runs, release, transactions


async def queued(server: CtxbenchServer, agents: list[FakeAgent]) -> bool:
    return {a.agent_id for a in agents} <= server.agent_service.writer.waiting()


async def test_two_streams_batches_are_committed_together(
    make_agent: MakeAgent, server: CtxbenchServer, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents, runs, release, transactions = await three_streams_held(make_agent, http, monkeypatch)
    sent = {}
    for a, (run_id, items) in zip(agents[1:], runs[1:], strict=True):
        sent[a.agent_id] = [a.result(run_id, it) for it in items]
        for req in sent[a.agent_id]:
            await a.send(req)
    await eventually(lambda: queued(server, agents[1:]))  # both streams' batches wait behind the held one
    release.set()

    for a in agents[1:]:
        acks = [(await a.expect("result_ack")).result_ack.result_id for _ in range(2)]
        assert acks == [r.result_report.result_id for r in sent[a.agent_id]]
    # one transaction for agent 0's update, then one for both other streams' reports
    assert transactions[:2] == [[agents[0].agent_id], sorted(a.agent_id for a in agents[1:])]
    for run_id, _ in runs[1:]:
        run = (await http.get(f"/api/v1/runs/{run_id}")).json()
        assert run["status"] == "succeeded"  # each run ended in the shared transaction
        assert [it["state"] for it in run["items"]] == ["succeeded", "succeeded"]
    assert (await http.get(f"/api/v1/runs/{runs[0][0]}")).json()["items"][0]["state"] == "running"


async def test_an_agent_that_reads_batched_acks_gets_one_ack_for_its_batch(
    make_agent: MakeAgent, server: CtxbenchServer, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents, runs, release, _ = await three_streams_held(make_agent, http, monkeypatch, (False, True, False))
    service = server.agent_service
    heard: dict[str, int] = {}
    hear = service.liveness.heard

    def counted(conn: Any) -> None:
        heard[conn.machine_id] = heard.get(conn.machine_id, 0) + 1
        hear(conn)

    monkeypatch.setattr(service.liveness, "heard", counted)
    sent = {}
    for a, (run_id, items) in zip(agents[1:], runs[1:], strict=True):
        await a.running(run_id, items[0].item_id)  # a batch of its own, waiting behind the held one
    await eventually(lambda: queued(server, agents[1:]))
    for a, (run_id, items) in zip(agents[1:], runs[1:], strict=True):
        reqs = [a.result(run_id, it) for it in items]
        sent[a.agent_id] = [r.result_report.result_id for r in reqs]
        for req in reqs:
            await a.send(req)

    async def all_read() -> bool:  # both reports read while the update waits: the next batch holds two
        return all(heard.get(a.agent_id, 0) == 3 for a in agents[1:])

    await eventually(all_read)
    release.set()

    batched, plain = agents[1:]
    ack = (await batched.expect("result_ack")).result_ack
    assert [ack.result_id, *ack.more_result_ids] == sent[batched.agent_id]
    # an agent whose Hello did not ask for them: an Ack per result, as before
    acks = [(await plain.expect("result_ack")).result_ack for _ in range(2)]
    assert [(a.result_id, list(a.more_result_ids)) for a in acks] == [(r, []) for r in sent[plain.agent_id]]
    for a in agents[1:]:
        await a.expect_nothing()


async def test_a_report_refused_in_a_shared_transaction_is_rejected_alone(
    make_agent: MakeAgent, server: CtxbenchServer, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    await refuse_unit_in_database(server, "refused/op")
    agents, runs, release, transactions = await three_streams_held(make_agent, http, monkeypatch)
    (bad_run, bad_items), (ok_run, ok_items) = runs[1], runs[2]
    bad = agents[1].result(bad_run, bad_items[0])
    bad.result_report.unit = "refused/op"
    good = agents[2].result(ok_run, ok_items[0])
    await agents[1].send(bad)
    await agents[2].send(good)
    await eventually(lambda: queued(server, agents[1:]))
    release.set()

    reject = (await agents[1].expect("reject")).reject
    assert reject.code == INVALID_ARGUMENT and reject.result_id == bad.result_report.result_id
    assert "secret" not in reject.message
    assert (await agents[2].expect("result_ack")).result_ack.result_id == good.result_report.result_id
    # tried together, then each batch alone
    assert transactions[1] == sorted(a.agent_id for a in agents[1:])
    assert sorted(transactions[2:4]) == sorted([a.agent_id] for a in agents[1:])

    # neither stream is wedged: both go on and their runs end
    await agents[1].send(pb.ConnectRequest(heartbeat=pb.Heartbeat(current_run_id=bad_run)))
    await agents[1].report(bad_run, bad_items[1])
    await agents[2].report(ok_run, ok_items[1])
    bad_done = (await http.get(f"/api/v1/runs/{bad_run}")).json()
    assert [it["state"] for it in bad_done["items"]] == ["failed", "succeeded"]
    assert bad_done["items"][0]["error"].startswith("report rejected: the database refused")
    assert (await http.get(f"/api/v1/runs/{ok_run}")).json()["status"] == "succeeded"


async def test_a_shared_transaction_holds_each_of_its_machines_across_processes(
    make_agent: MakeAgent, server: CtxbenchServer, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL a machine's lock is cluster-wide (cluster.py): the writer's transaction of several
    streams waits while another process holds any one of their machines."""
    if not TEST_DATABASE_URL:
        assert server.hub.cluster is None  # one server: the streams' own locks are all there is
        return
    agents, runs, release, _ = await three_streams_held(make_agent, http, monkeypatch)
    elsewhere = create_engine(TEST_DATABASE_URL)
    try:
        async with elsewhere.connect() as conn:  # "another process" changing agent 2's machine
            key = advisory_key("machine", agents[2].agent_id)
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})
            sent = [
                a.result(run_id, items[0]) for a, (run_id, items) in zip(agents[1:], runs[1:], strict=True)
            ]
            for a, req in zip(agents[1:], sent, strict=True):
                await a.send(req)
            await eventually(lambda: queued(server, agents[1:]))
            release.set()
            await agents[1].expect_nothing(1.0)  # stored with agent 2's report: it waits too
            await conn.rollback()
        for a, req in zip(agents[1:], sent, strict=True):
            assert (await a.expect("result_ack")).result_ack.result_id == req.result_report.result_id
    finally:
        await elsewhere.dispose()


async def test_a_stream_cancelled_waits_for_its_batch_under_way_and_drops_one_not_begun(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stream that ends while the writer stores its batch keeps its machine's lock until that
    transaction ends (no cancel interleaves with it); a batch still queued is not stored at all."""
    from ctxbench_server.ingest import service as ingest
    from ctxbench_server.ingest.messages import Update
    from ctxbench_server.ingest.writer import IngestWriter
    from ctxbench_server.stored import StoredEvents

    class Session:
        def get_bind(self) -> Any:
            return type("Bind", (), {"dialect": type("Dialect", (), {"name": "sqlite"})})

    class Maker:
        async def __aenter__(self) -> Session:
            return Session()

        async def __aexit__(self, *_: object) -> None:
            return None

    stored: list[str] = []
    entered, release = asyncio.Event(), asyncio.Event()

    async def held(_session: Any, machine_id: str, *_: Any) -> ingest.Recorded:
        stored.append(machine_id)
        entered.set()
        await release.wait()
        return ingest.Recorded([None], [])

    monkeypatch.setattr(ingest, "record_batch", held)
    writer = IngestWriter(lambda: Maker(), StoredEvents())  # type: ignore[arg-type]
    msgs = [Update("r", "i", True, "RUNNING")]
    under_way = asyncio.create_task(writer.store("m-1", msgs))
    await asyncio.wait_for(entered.wait(), 5)
    queued = asyncio.create_task(writer.store("m-2", msgs))
    await asyncio.sleep(0.05)
    under_way.cancel()
    queued.cancel()
    await asyncio.sleep(0.2)
    assert not under_way.done()  # still waiting for its transaction
    assert queued.done()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await under_way
    await asyncio.sleep(0.05)
    assert stored == ["m-1"]  # the queued batch was dropped, not stored
