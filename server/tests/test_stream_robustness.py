"""One bad report never wedges a stream; many Hellos at once never fail (issue 12, item 2).

Real gRPC over sockets: the server refuses what the database cannot store with a Reject for that
report, the stream stays open and later reports are stored; concurrent first Hellos all get a Welcome.
"""

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import grpc
import httpx
import pytest
from sqlalchemy import text

from ctxbench_server.db import create_engine
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.main import CtxbenchServer

from .fake_agent import FakeAgent, fake_catalog

MakeAgent = Callable[..., FakeAgent]

INVALID_ARGUMENT = 3
# A burst of connects on a loaded 2-CPU machine: each Welcome may take a while, but none may fail.
BURST_WAIT_S = 30.0


async def post_run(http: httpx.AsyncClient, machine_id: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    r = await http.post("/api/v1/runs", json={"machine_id": machine_id, "items": items})
    assert r.status_code == 201, r.text
    return dict(r.json())


async def refuse_unit_in_database(server: CtxbenchServer, unit: str) -> None:
    """Makes the database itself refuse results with this unit, as PostgreSQL refuses an over-long value:
    a trigger on SQLite, a CHECK constraint on PostgreSQL."""
    engine = create_engine(server.settings.db_url)
    async with engine.begin() as conn:
        if engine.dialect.name == "sqlite":
            await conn.execute(
                text(
                    "CREATE TRIGGER refuse_unit BEFORE INSERT ON results "
                    f"WHEN NEW.unit = '{unit}' BEGIN SELECT RAISE(ABORT, 'secret internals'); END"
                )
            )
        else:  # the wipe between tests truncates tables and keeps their constraints
            await conn.execute(text("ALTER TABLE results DROP CONSTRAINT IF EXISTS refuse_unit"))
            await conn.execute(
                text(f"ALTER TABLE results ADD CONSTRAINT refuse_unit CHECK (unit <> '{unit}')")
            )
    await engine.dispose()


async def test_a_report_the_database_refuses_is_rejected_and_the_stream_goes_on(
    make_agent: MakeAgent, server: CtxbenchServer, http: httpx.AsyncClient
) -> None:
    agent = make_agent()
    await agent.connect()
    await refuse_unit_in_database(server, "refused/op")
    run = await post_run(http, agent.agent_id, [{"kernel": "ctxsw.pipe"}] * 2)
    start = (await agent.expect("start_run")).start_run

    bad = agent.result(run["id"], start.items[0])
    bad.result_report.unit = "refused/op"
    await agent.send(bad)
    reject = (await agent.expect("reject")).reject
    # INVALID_ARGUMENT: the agent sets the report aside instead of re-sending it for ever
    assert reject.code == INVALID_ARGUMENT and reject.result_id == bad.result_report.result_id
    assert reject.run_id == run["id"]
    assert "database refused" in reject.message
    assert "secret" not in reject.message and "INSERT" not in reject.message

    # the same stream goes on: heartbeats pass, the next report is stored and acknowledged
    await agent.send(pb.ConnectRequest(heartbeat=pb.Heartbeat(current_run_id=run["id"])))
    await agent.report(run["id"], start.items[1])
    done = (await http.get(f"/api/v1/runs/{run['id']}")).json()
    # the refused report failed its item (the agent dropped it), so the run still ends
    assert done["status"] == "succeeded"
    assert [it["state"] for it in done["items"]] == ["failed", "succeeded"]
    assert done["items"][0]["error"].startswith("report rejected: the database refused")


async def test_reports_stored_together_are_answered_alone(
    make_agent: MakeAgent, server: CtxbenchServer, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reports that arrive together are stored in one transaction, yet each gets its own answer: a
    malformed one and one the database refuses are rejected alone, the others stored and acknowledged,
    a report sent twice is stored once and acknowledged twice."""
    from ctxbench_server.ingest import service as ingest

    agent = make_agent()
    await agent.connect()
    await refuse_unit_in_database(server, "refused/op")
    run = await post_run(http, agent.agent_id, [{"kernel": "ctxsw.pipe"}] * 6)
    items = (await agent.expect("start_run")).start_run.items

    # Hold the first transaction until everything else has arrived: the rest then comes in one batch.
    entered, release = asyncio.Event(), asyncio.Event()
    sizes: list[int] = []
    record_batch = ingest.record_batch

    async def held(*args: Any) -> ingest.Recorded:
        sizes.append(len(args[2]))
        if len(sizes) == 1:
            entered.set()
            await release.wait()
        return await record_batch(*args)

    monkeypatch.setattr(ingest, "record_batch", held)
    await agent.running(run["id"], items[0].item_id)
    await asyncio.wait_for(entered.wait(), 5)
    ok = [agent.result(run["id"], items[i]) for i in (0, 3, 4, 5)]
    malformed = agent.result(run["id"], items[1], samples=[1.0, float("nan")])
    refused = agent.result(run["id"], items[2])
    refused.result_report.unit = "refused/op"
    sent = [ok[0], malformed, refused, ok[1], ok[1], ok[2], ok[3]]
    for req in sent:
        await agent.send(req)
    await asyncio.sleep(0.5)
    release.set()

    answers = [await agent.next() for _ in sent]
    got = [
        (m.WhichOneof("msg"), m.result_ack.result_id if m.HasField("result_ack") else m.reject.result_id)
        for m in answers
    ]
    assert got == [
        ("result_ack", ok[0].result_report.result_id),
        ("reject", malformed.result_report.result_id),
        ("reject", refused.result_report.result_id),
        ("result_ack", ok[1].result_report.result_id),
        ("result_ack", ok[1].result_report.result_id),
        ("result_ack", ok[2].result_report.result_id),
        ("result_ack", ok[3].result_report.result_id),
    ]
    assert [m.reject.code for m in answers if m.HasField("reject")] == [INVALID_ARGUMENT, INVALID_ARGUMENT]
    assert sizes[:2] == [1, len(sent)]  # the update alone (held), then every report in one batch
    done = (await http.get(f"/api/v1/runs/{run['id']}")).json()
    assert done["status"] == "succeeded"
    assert [it["state"] for it in done["items"]] == ["succeeded", "failed", "failed"] + ["succeeded"] * 3
    results = (await http.get(f"/api/v1/runs/{run['id']}/results", params={"history": "true"})).json()
    assert sorted(r["id"] for r in results if r["n"]) == sorted(r.result_report.result_id for r in ok)
    assert len(results) == 6  # the four measured (one of them sent twice) and two failed items


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("unit", lambda r: setattr(r, "unit", "u" * 33)),
        ("kernel_id", lambda r: setattr(r, "kernel_id", "k" * 201)),
        ("params", lambda r: r.params.update({"dir": "/d" * 2100})),
        ("params", lambda r: r.params.update({f"p{i}": "1" for i in range(100)})),
        ("error", lambda r: setattr(r, "error", "e" * 5000)),
        ("stderr_tail", lambda r: setattr(r, "stderr_tail", "s" * 20000)),
        ("harness.name", lambda r: r.harness.MergeFrom(pb.Harness(name="h" * 300))),
        ("counters", lambda r: r.counters.update({"c" * 300: 1.0})),
    ],
)
async def test_strings_over_their_column_size_are_rejected_naming_the_field(
    make_agent: MakeAgent, http: httpx.AsyncClient, field: str, change: Callable[[pb.ResultReport], None]
) -> None:
    agent = make_agent()
    await agent.connect()
    run = await post_run(http, agent.agent_id, [{"kernel": "syscall.getppid"}] * 2)
    start = (await agent.expect("start_run")).start_run

    bad = agent.result(run["id"], start.items[0])
    change(bad.result_report)
    await agent.send(bad)
    reject = (await agent.expect("reject")).reject
    assert reject.code == INVALID_ARGUMENT and reject.result_id == bad.result_report.result_id
    assert reject.message.startswith(f"{field}: "), reject.message
    await agent.report(run["id"], start.items[1])
    done = (await http.get(f"/api/v1/runs/{run['id']}")).json()
    assert [it["state"] for it in done["items"]] == ["failed", "succeeded"]


def server_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        f"{r.name}: {r.getMessage()} {r.exc_text or ''}"
        for r in caplog.records
        if r.name.startswith("ctxbench_server") and (r.levelno >= logging.ERROR or r.exc_info)
    ]


async def test_simultaneous_first_hellos_for_one_machine(
    make_agent: MakeAgent, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    # kernels no machine has listed yet, listed by other machines at the same moment too
    catalog = fake_catalog() + [pb.KernelSpec(id=f"new.k{i}", unit="ns/op") for i in range(20)]
    first = make_agent(kernels=catalog)
    others = [make_agent(kernels=catalog) for _ in range(8)]
    await asyncio.gather(*(a.enroll() for a in [first, *others]))
    same = [first] + [make_agent(agent_id=first.agent_id, kernels=catalog) for _ in range(7)]
    outcomes = await asyncio.gather(
        *(a.connect(wait_s=BURST_WAIT_S) for a in same + others), return_exceptions=True
    )
    failed = [o for o in outcomes if not isinstance(o, pb.Welcome)]
    assert failed == []
    machines = {m["id"]: m for m in (await http.get("/api/v1/machines")).json()}
    assert set(machines) == {first.agent_id} | {a.agent_id for a in others}
    assert sorted(machines[first.agent_id]["kernels"]) == sorted(k.id for k in catalog)
    assert server_errors(caplog) == []


async def test_many_agents_connecting_at_once(
    make_agent: MakeAgent, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    agents = [make_agent(name=f"host-{i}") for i in range(50)]
    # More than the server records at once and queues (4 + 32): the rest come back when it says, as the
    # real agent does (agents/admission.py).
    await asyncio.gather(*(a.admitted(a.enroll) for a in agents))
    outcomes = await asyncio.gather(
        *(a.admitted(lambda a=a: a.connect(wait_s=BURST_WAIT_S)) for a in agents), return_exceptions=True
    )
    failed = [o for o in outcomes if not isinstance(o, pb.Welcome)]
    assert failed == []
    machines = (await http.get("/api/v1/machines")).json()
    assert len(machines) == 50 and all(m["online"] for m in machines)
    errors = server_errors(caplog)
    assert errors == []
    assert not any("database is locked" in r.getMessage() for r in caplog.records)


async def test_unexpected_error_on_a_stream_is_a_generic_status(
    make_agent: MakeAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxbench_server.ingest import service as ingest

    async def boom(*_: object) -> None:
        raise RuntimeError("secret internals")

    agent = make_agent()
    await agent.connect()
    monkeypatch.setattr(ingest, "record_batch", boom)
    await agent.send(pb.ConnectRequest(run_update=pb.RunUpdate(run_id="r", state=pb.ITEM_STATE_ACCEPTED)))
    with pytest.raises(grpc.aio.AioRpcError) as e:
        while True:
            await agent.next()
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "secret" not in (e.value.details() or "")


async def test_a_report_not_stored_just_now_is_unavailable_and_kept(
    make_agent: MakeAgent, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.exc import OperationalError

    from ctxbench_server.ingest import service as ingest

    agent = make_agent()
    await agent.connect()
    run = await post_run(http, agent.agent_id, [{"kernel": "ctxsw.pipe"}])
    start = (await agent.expect("start_run")).start_run
    record = ingest.record_batch

    async def locked(*_: object) -> ingest.Recorded:
        raise OperationalError("INSERT INTO results secret", {}, Exception("database is locked"))

    monkeypatch.setattr(ingest, "record_batch", locked)
    req = agent.result(run["id"], start.items[0])
    await agent.send(req)
    reject = (await agent.expect("reject")).reject
    # UNAVAILABLE: the agent keeps the report and sends it again; its item is not failed
    assert reject.code == 14 and reject.result_id == req.result_report.result_id
    assert "secret" not in reject.message and "locked" not in reject.message
    assert (await http.get(f"/api/v1/runs/{run['id']}")).json()["items"][0]["state"] != "failed"

    monkeypatch.setattr(ingest, "record_batch", record)
    await agent.send(req)  # the same report again, on the same stream
    assert (await agent.expect("result_ack")).result_ack.result_id == req.result_report.result_id
    assert (await http.get(f"/api/v1/runs/{run['id']}")).json()["status"] == "succeeded"


async def test_a_database_error_before_hello_is_a_generic_status(
    make_agent: MakeAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.exc import OperationalError

    from ctxbench_server.fleet import service as fleet

    agent = make_agent()
    await agent.enroll()

    async def down(*_: object) -> None:
        raise OperationalError("SELECT machines.token_hash secret", {}, Exception("disk I/O error"))

    monkeypatch.setattr(fleet, "machine_for_credential", down)
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await agent.connect()
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "secret" not in (e.value.details() or "") and "SELECT" not in (e.value.details() or "")
