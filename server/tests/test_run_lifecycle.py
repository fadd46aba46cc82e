"""Runs you can trust to finish (2/2): cancel, retry, rejected reports, lost agents, SSE on cancel.
Real server, real gRPC (tests/fake_agent.py)."""

import asyncio
import json
from typing import Any

import grpc
import httpx
import pytest

from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb

from .conftest import eventually
from .runs_helpers import PIPE, MakeAgent, agents, finish, get_run, post, started
from .test_events import read_events

# --- cancel ---------------------------------------------------------------------------------------


async def test_cancel_running_keeps_done_items_and_stores_cancelled_reports(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": [PIPE] * 3})
    start = (await agent.expect("start_run")).start_run
    done = await agent.report(run["id"], start.items[0])
    await agent.running(run["id"], start.items[1].item_id, 1)
    r = await http.post(f"/api/v1/runs/{run['id']}/cancel")
    assert r.status_code == 200
    out = r.json()
    assert out["status"] == "cancelled" and out["finished_at"]
    assert [it["state"] for it in out["items"]] == ["succeeded", "cancelled", "cancelled"]
    assert out["items"][0]["result_id"] == done
    assert (await agent.expect("cancel_run")).cancel_run.run_id == run["id"]
    # the agent reports the killed item and the skipped one as CANCELLED: stored, acked, run unchanged
    for item in start.items[1:]:
        await agent.report(run["id"], item, status=pb.RESULT_STATUS_CANCELLED, error="cancelled")
    after = await get_run(http, run["id"])
    assert after["status"] == "cancelled"
    assert [it["state"] for it in after["items"]] == ["succeeded", "cancelled", "cancelled"]
    assert all(it["result_id"] for it in after["items"])
    assert (await http.post(f"/api/v1/runs/{run['id']}/cancel")).status_code == 409


async def test_cancel_running_run_of_offline_agent(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": [PIPE] * 2})
    await agent.expect("start_run")
    await agent.close()

    async def offline() -> bool:
        return (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()["online"] is False

    await eventually(offline)
    out = (await http.post(f"/api/v1/runs/{run['id']}/cancel")).json()
    assert out["status"] == "cancelled"
    assert [it["state"] for it in out["items"]] == ["cancelled", "cancelled"]


# --- retry ----------------------------------------------------------------------------------------


async def test_retry_requeues_unfinished_items(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": [PIPE] * 3})
    rid = run["id"]
    assert (await http.post(f"/api/v1/runs/{rid}/retry")).status_code == 409  # running
    start = (await agent.expect("start_run")).start_run
    await agent.report(rid, start.items[0])
    failed = await agent.report(rid, start.items[1], status=pb.RESULT_STATUS_FAILED, error="exit 1")
    await http.post(f"/api/v1/runs/{rid}/cancel")
    await agent.expect("cancel_run")
    await agent.report(rid, start.items[2], status=pb.RESULT_STATUS_CANCELLED)
    before = await get_run(http, rid)
    assert [it["state"] for it in before["items"]] == ["succeeded", "failed", "cancelled"]

    r = await http.post(f"/api/v1/runs/{rid}/retry")
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["status"] == "running"  # the agent is idle: dispatched at once
    assert out["finished_at"] is None and out["error"] is None and out["queued_at"] > before["queued_at"]
    assert [(it["state"], it["attempt"], it["result_id"]) for it in out["items"]] == [
        ("succeeded", 1, before["items"][0]["result_id"]),
        ("queued", 2, None),
        ("queued", 2, None),
    ]
    again = (await agent.expect("start_run")).start_run
    assert [it.item_id for it in again.items] == [it.item_id for it in start.items[1:]]

    # a repeat of the first attempt's failed result: acked, stored once, not the item's result
    assert await agent.report(rid, start.items[1], result_id=failed, status=pb.RESULT_STATUS_FAILED) == failed
    assert (await get_run(http, rid))["items"][1]["state"] == "queued"
    await finish(agent, again)
    done = await get_run(http, rid)
    assert done["status"] == "succeeded"
    assert [it["state"] for it in done["items"]] == ["succeeded"] * 3

    current = (await http.get(f"/api/v1/runs/{rid}/results")).json()
    assert [(r["item_id"], r["attempt"]) for r in current] == [
        (start.items[0].item_id, 1),
        (start.items[1].item_id, 2),
        (start.items[2].item_id, 2),
    ]
    history = (await http.get(f"/api/v1/runs/{rid}/results", params={"history": True})).json()
    assert [(r["status"], r["attempt"]) for r in history] == [
        ("ok", 1),
        ("failed", 1),
        ("ok", 2),
        ("cancelled", 1),
        ("ok", 2),
    ]
    assert history[1]["id"] == failed and history[1]["error"] == "exit 1"

    r = await http.post(f"/api/v1/runs/{rid}/retry")
    assert r.status_code == 409 and "no unfinished" in r.json()["detail"]
    assert (await http.post("/api/v1/runs/nope/retry")).status_code == 404


async def test_retry_queues_behind_the_running_run(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    [agent] = await agents(make_agent, 1)
    first = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    item = (await agent.expect("start_run")).start_run.items[0]
    await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    await agent.report(first["id"], item, status=pb.RESULT_STATUS_FAILED, error="boom")
    assert (await get_run(http, first["id"]))["status"] == "failed"
    second = (await agent.expect("start_run")).start_run
    queued = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    assert (await http.post(f"/api/v1/runs/{queued['id']}/retry")).status_code == 409  # queued

    out = (await http.post(f"/api/v1/runs/{first['id']}/retry")).json()
    assert out["status"] == "queued" and out["started_at"] is None
    await finish(agent, second)
    # FIFO by queue time: the run queued before the retry goes first
    nxt = (await agent.expect("start_run")).start_run
    assert nxt.run_id == queued["id"]
    await finish(agent, nxt)
    retried = (await agent.expect("start_run")).start_run
    assert retried.run_id == first["id"] and [it.item_id for it in retried.items] == [item.item_id]


async def test_late_cancelled_report_after_retry_is_history(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent, run, start = await started(make_agent, http)
    item = start.items[0]
    await http.post(f"/api/v1/runs/{run['id']}/cancel")
    await agent.expect("cancel_run")
    assert (await http.post(f"/api/v1/runs/{run['id']}/retry")).json()["status"] == "running"
    await agent.expect("start_run")
    # the first attempt's CANCELLED report arrives only now
    await agent.report(run["id"], item, status=pb.RESULT_STATUS_CANCELLED)
    now = await get_run(http, run["id"])
    assert (now["status"], now["items"][0]["state"], now["items"][0]["result_id"]) == (
        "running",
        "queued",
        None,
    )
    await agent.report(run["id"], item)
    assert (await get_run(http, run["id"]))["status"] == "succeeded"


async def test_rejected_report_fails_its_item_and_the_queue_moves(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent, run, start = await started(make_agent, http)
    item = start.items[0]
    nxt = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    await agent.send(agent.result(run["id"], item, samples=[1.0, float("nan")]))
    assert (await agent.expect("reject")).reject.code == 3
    assert (await agent.expect("start_run")).start_run.run_id == nxt["id"]
    out = await get_run(http, run["id"])
    assert out["status"] == "failed"
    assert out["items"][0]["error"] == "report rejected: samples are not all finite numbers"


async def test_report_without_iterations_is_stored(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    item = (await agent.expect("start_run")).start_run.items[0]
    req = agent.result(run["id"], item)
    del req.result_report.iterations[:]  # the agent sends none when the kernel printed none
    req.result_report.started_at.FromSeconds(1_800_000_000)
    req.result_report.finished_at.FromSeconds(-62135596800)  # Go's zero time.Time: never set
    await agent.send(req)
    await agent.expect("result_ack")
    [res] = (await http.get(f"/api/v1/runs/{run['id']}/results")).json()
    assert res["iterations"] == [] and res["n"] == 10
    assert res["started_at"].startswith("2027-01-15T08:00:00") and res["finished_at"] is None


# --- lost agents ----------------------------------------------------------------------------------


@pytest.mark.parametrize("settings_overrides", [{"agent_lost_grace_s": 0.5}])
async def test_agent_lost_fails_the_run(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    agent, run, start = await started(make_agent, http, [PIPE] * 2)
    await agent.report(run["id"], start.items[0])
    queued = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    async with http.stream("GET", f"/api/v1/runs/{run['id']}/events") as resp:
        events = read_events(resp)
        assert (await anext(events))[0] == "run"
        await agent.close()
        seen: list[tuple[str, Any]] = []
        async with asyncio.timeout(5):
            seen = [e async for e in events]
        kind, data = seen[-1]
        assert kind == "end" and data["status"] == "failed" and data["error"] == "agent lost"
    out = await get_run(http, run["id"])
    assert [(it["state"], it["error"]) for it in out["items"]] == [
        ("succeeded", None),
        ("failed", "agent lost"),
    ]
    assert out["progress"]["failed"] == 1
    assert (await get_run(http, queued["id"]))["status"] == "queued"  # waits for the machine
    # when the agent comes back it gets the queued run; its spooled result of the lost run is still stored
    await agent.connect(current_run_id=run["id"])
    assert (await agent.expect("cancel_run")).cancel_run.run_id == run["id"]
    assert (await agent.expect("start_run")).start_run.run_id == queued["id"]


@pytest.mark.timing  # back within a 1 s grace
@pytest.mark.parametrize("settings_overrides", [{"agent_lost_grace_s": 1.0}])
async def test_agent_back_within_grace_resumes(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    agent, run, start = await started(make_agent, http, [PIPE] * 2)
    await agent.report(run["id"], start.items[0])
    await agent.close()
    await agent.connect()  # restarted: the unfinished item comes again
    again = (await agent.expect("start_run")).start_run
    assert [it.item_id for it in again.items] == [start.items[1].item_id]
    await asyncio.sleep(1.5)
    assert (await get_run(http, run["id"]))["status"] == "running"
    await finish(agent, again)
    assert (await get_run(http, run["id"]))["status"] == "succeeded"


@pytest.mark.timing  # heartbeats counted against a 1 s interval
@pytest.mark.parametrize("settings_overrides", [{"heartbeat_interval_s": 1}])
async def test_idle_heartbeat_resends_the_running_run(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    start = (await agent.expect("start_run")).start_run
    await agent.send(pb.ConnectRequest(heartbeat=pb.Heartbeat(current_run_id=run["id"])))
    await agent.expect_nothing(0.2)
    await agent.send(pb.ConnectRequest(heartbeat=pb.Heartbeat()))  # too early to tell: nothing
    await agent.expect_nothing(0.2)
    await asyncio.sleep(2)
    await agent.send(pb.ConnectRequest(heartbeat=pb.Heartbeat()))  # idle, yet the run is running...
    await agent.expect_nothing(0.2)  # ...but a result may still be on its way
    await agent.send(pb.ConnectRequest(heartbeat=pb.Heartbeat(current_run_id=run["id"])))
    await agent.send(pb.ConnectRequest(heartbeat=pb.Heartbeat()))  # busy in between: count again
    await agent.expect_nothing(0.2)
    await agent.send(pb.ConnectRequest(heartbeat=pb.Heartbeat()))  # idle twice in a row
    again = (await agent.expect("start_run")).start_run
    assert again == start


# --- SSE on cancel --------------------------------------------------------------------------------


async def test_events_end_on_cancel(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    async with http.stream("GET", f"/api/v1/runs/{run['id']}/events") as resp:
        events = read_events(resp)
        kind, data = await anext(events)
        assert (kind, data["status"]) == ("run", "running")
        await http.post(f"/api/v1/runs/{run['id']}/cancel")
        rest = [(k, d["status"]) async for k, d in events]
    assert rest == [("run", "cancelled"), ("end", "cancelled")]


def test_sse_format() -> None:
    from ctxbench_server.runs.events import sse

    text = sse("run", {"a": 1})
    assert text == 'event: run\ndata: {"a":1}\n\n'
    assert json.loads(text.split("data: ")[1]) == {"a": 1}


async def test_messages_over_4_mib_are_refused_by_grpc(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    item = (await agent.expect("start_run")).start_run.items[0]
    req = agent.result(run["id"], item, status=pb.RESULT_STATUS_FAILED)
    req.result_report.stderr_tail = "x" * (4 * 1024 * 1024 + 1)
    await agent.send(req)
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await agent.next()
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
