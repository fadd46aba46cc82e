"""What one ingest transaction writes of its runs and items (ingest/repository.py reads them as plain rows
and writes their changes at its end): a RUNNING and the result of one item in one batch, a RUNNING alone,
a run's start stamped, the run ended; the params of a report that names none, and of the failed result a
malformed report leaves. The batch goes through the server's own writer (one transaction, as a stream's
batch does), on a real database; what it stored is read back with plain SQL."""

import json
from typing import Any

import httpx
from sqlalchemy import text

from ctxbench_server.agents import reports_wire
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.ingest.messages import Refused
from ctxbench_server.main import CtxbenchServer

from .runs_helpers import MakeAgent, get_run, started

GETPPID = {"kernel": "syscall.getppid", "params": {"threads": 2, "placement": "cross_core"}}


def running(run_id: str, item: pb.RunItem) -> pb.ConnectRequest:
    return pb.ConnectRequest(
        run_update=pb.RunUpdate(run_id=run_id, state=pb.ITEM_STATE_RUNNING, item_id=item.item_id)
    )


async def rows(server: CtxbenchServer, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    """Plain SQL's rows, JSON text decoded (SQLite gives it as text, PostgreSQL's driver decodes it)."""
    async with server.sessionmaker() as session:
        got = await session.execute(text(sql), params)
        return [tuple(json.loads(v) if isinstance(v, str) and v[:1] == "{" else v for v in g) for g in got]


async def test_one_batch_writes_its_items_states_the_runs_start_and_its_end(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    agent, run, start = await started(make_agent, http, [GETPPID] * 4)
    first, second, third, fourth = start.items
    async with server.sessionmaker() as session:  # as a run requeued and started again has none yet
        await session.execute(text("UPDATE runs SET started_at = NULL WHERE id = :id"), {"id": run["id"]})
        await session.commit()
    msgs = [
        running(run["id"], first),
        agent.result(run["id"], first),  # its RUNNING and its result in one batch: succeeded
        running(run["id"], second),  # RUNNING alone: running
        agent.result(run["id"], fourth),  # the same point as the first's: parsed once
    ]
    done = await server.agent_service.writer.store(agent.agent_id, reports_wire.messages(msgs))
    assert [type(o).__name__ for o in done.outcomes] == ["NoneType", "Stored", "NoneType", "Stored"]
    out = await get_run(http, run["id"])
    assert [it["state"] for it in out["items"]] == ["succeeded", "running", "queued", "succeeded"]
    assert out["status"] == "running" and out["started_at"] and not out["finished_at"]
    # a report naming no params takes its item's; a malformed one fails its item with the item's params
    bare = agent.result(run["id"], second)
    bare.result_report.ClearField("params")
    bad = agent.result(run["id"], third, samples=[1.0, float("nan")])
    done = await server.agent_service.writer.store(agent.agent_id, reports_wire.messages([bare, bad]))
    assert done.outcomes[0] is not None and not isinstance(done.outcomes[0], Refused)
    assert isinstance(done.outcomes[1], Refused) and done.finished == [run["id"]]
    got = await rows(
        server,
        "SELECT r.item_id, r.status, r.params, r.params_key, r.error, i.params FROM results r"
        " JOIN run_items i ON i.id = r.item_id WHERE r.run_id = :id",
        id=run["id"],
    )
    by_item = {g[0]: g[1:] for g in got}
    measured_key = by_item[first.item_id][2]  # of the params the agent named
    assert "placement=cross_core" in measured_key and "threads=2" in measured_key
    for item in (second, third, fourth):
        _, params, key, _, item_params = by_item[item.item_id]
        assert params == item_params and params["threads"] == 2 and key == measured_key
    assert by_item[second.item_id][0] == "ok"
    assert by_item[third.item_id][0] == "failed"
    assert by_item[third.item_id][3] == "report rejected: samples are not all finite numbers"
    out = await get_run(http, run["id"])
    assert [it["state"] for it in out["items"]] == ["succeeded", "succeeded", "failed", "succeeded"]
    assert out["status"] == "succeeded" and out["finished_at"] and out["error"] is None


async def test_a_run_ends_with_its_last_open_item_in_any_order(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    """Whether a run is left with an open item is read from its last item back (ingest/repository.py):
    items that finish out of order end the run with the last one to finish, not the last by index; a
    run whose items all failed ends failed."""
    agent, run, start = await started(make_agent, http, [GETPPID] * 3)
    first, second, third = start.items
    failed = pb.RESULT_STATUS_FAILED
    for item, finished in ((third, []), (first, []), (second, [run["id"]])):
        done = await server.agent_service.writer.store(
            agent.agent_id, reports_wire.messages([agent.result(run["id"], item, status=failed)])
        )
        assert done.finished == finished
        out = await get_run(http, run["id"])
        assert out["status"] == ("failed" if finished else "running")
    assert out["error"] == "no item produced a measurement" and out["finished_at"]
    agent, run, start = await started(make_agent, http, [GETPPID] * 2)
    last, first = reversed(start.items)
    done = await server.agent_service.writer.store(
        agent.agent_id,
        reports_wire.messages([agent.result(run["id"], last), agent.result(run["id"], first, status=failed)]),
    )
    assert done.finished == [run["id"]]
    assert (await get_run(http, run["id"]))["status"] == "succeeded"
