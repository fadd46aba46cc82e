"""The run flow over real gRPC: a Python agent on the generated stub against the real server."""

from collections.abc import Callable
from typing import Any

import grpc
import httpx
import pytest

from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.main import CtxbenchServer

from .conftest import eventually
from .fake_agent import FakeAgent
from .runs_helpers import PIPE, agents, started

MakeAgent = Callable[..., FakeAgent]


async def post_run(
    http: httpx.AsyncClient, machine_id: str, items: list[dict[str, Any]], **kw: Any
) -> dict[str, Any]:
    r = await http.post("/api/v1/runs", json={"machine_id": machine_id, "items": items, **kw})
    assert r.status_code == 201, r.text
    return dict(r.json())


async def get_run(http: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    r = await http.get(f"/api/v1/runs/{run_id}")
    assert r.status_code == 200
    return dict(r.json())


@pytest.mark.parametrize("token", ["wrong-token-0123456789abcdef", ""])
async def test_wrong_token_unauthenticated(
    make_agent: MakeAgent, http: httpx.AsyncClient, token: str
) -> None:
    agent = make_agent(token=token)
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await agent.connect()
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert (await http.get("/api/v1/machines")).json() == []


async def test_first_message_must_be_hello(make_agent: MakeAgent) -> None:
    agent = make_agent()
    await agent.open()
    await agent.send(pb.ConnectRequest(heartbeat=pb.Heartbeat()))
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await agent.next()
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_hello_creates_machine_and_kernels(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    agent = make_agent(name="box-1")
    welcome = await agent.connect()
    assert welcome.machine_id == agent.agent_id
    assert welcome.heartbeat_interval_s == 10
    [m] = (await http.get("/api/v1/machines")).json()
    assert m["id"] == agent.agent_id and m["name"] == "box-1" and m["hostname"] == "box-1"
    assert m["online"] is True
    assert m["kernels"] == ["ctxsw.pipe", "syscall.getppid"]
    assert m["facts"]["cpu_model"] == "Test CPU" and m["facts"]["memory_bytes"] == 2**34
    assert m["first_seen"] and m["last_seen"]
    assert m["preflight"] == [
        {"check": "governor", "status": "ok", "detail": "scaling governor performance", "fix": ""},
        {"check": "smt", "status": "warn", "detail": "SMT on", "fix": "echo off > .../smt/control"},
    ]
    assert (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()["id"] == agent.agent_id

    kernels = {k["id"]: k for k in (await http.get("/api/v1/kernels")).json()}
    k = kernels["syscall.getppid"]
    assert k["machines"] == [agent.agent_id]
    assert k["unit"] == "ns/op" and k["seed_reference"]["seed"] == "000"
    threads = next(p for p in k["params"] if p["name"] == "threads")
    assert threads["type"] == "int" and threads["default"] == 1 and threads["sweep"] == [1, 2, 4]
    assert kernels["ctxsw.pipe"]["seed_reference"] is None

    await agent.close()

    async def offline() -> bool:
        return (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()["online"] is False

    await eventually(offline)


async def test_run_dispatched_at_once_results_stored_run_succeeds(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    [agent] = await agents(make_agent, 1)
    await agent.expect_nothing()
    run = await post_run(
        http,
        agent.agent_id,
        [
            {
                "kernel": "syscall.getppid",
                "params": {"placement": "cross_core"},
                "sweep": {"threads": [1, 2]},
            },
            {"kernel": "ctxsw.pipe"},
        ],
        repetitions=10,
        min_time_s=0.01,
    )
    assert run["status"] == "running"  # the agent was idle: StartRun went out with the POST
    assert run["progress"] == {
        **{"total": 3, "done": 0, "failed": 0, "running": 0},
        # 3 items x the default profile's 7 launches
        **{"launches_done": 0, "launches_planned": 21, "launches_wall_s": 0.0, "launch_at": None},
    }
    start = (await agent.expect("start_run")).start_run
    assert start.run_id == run["id"]
    assert [it.item_id for it in start.items] == [it["id"] for it in run["items"]]
    first = start.items[0]
    assert first.kernel_id == "syscall.getppid"
    assert dict(first.params) == {
        "threads": "1",
        "placement": "cross_core",
        "ratio": "0.5",
        "direct": "false",
        "dir": "/tmp",
    }
    assert start.items[1].params["threads"] == "2"
    assert (first.repetitions, first.min_time_s) == (10, 0.01)
    assert first.timeout_s >= 60

    await agent.running(run["id"], first.item_id)
    await agent.report(run["id"], first, samples=[float(x) for x in range(1, 11)])
    mid = await get_run(http, run["id"])
    assert mid["status"] == "running" and mid["started_at"]
    assert mid["items"][0]["state"] == "succeeded" and mid["items"][0]["result_id"]
    assert mid["progress"]["done"] == 1

    await agent.report(run["id"], start.items[1])
    await agent.report(run["id"], start.items[2])
    done = await get_run(http, run["id"])
    assert done["status"] == "succeeded" and done["finished_at"]
    assert done["facts"]["cpu_model"] == "Test CPU"
    assert done["progress"] == {
        **{"total": 3, "done": 3, "failed": 0, "running": 0},
        # the fake agent's results list no launches: one process each
        **{"launches_done": 3, "launches_planned": 3, "launches_wall_s": 0.0, "launch_at": None},
    }

    results = (await http.get(f"/api/v1/runs/{run['id']}/results")).json()
    assert len(results) == 3
    r0 = results[0]
    assert r0["kernel"] == "syscall.getppid"
    assert r0["params"] == {
        "threads": 1,
        "placement": "cross_core",
        "ratio": 0.5,
        "direct": False,
        "dir": "/tmp",
    }
    assert (r0["n"], r0["median"], r0["mean"], r0["min"], r0["max"]) == (10, 5.5, 5.5, 1.0, 10.0)
    assert 1.0 <= r0["ci_low"] < 5.5 < r0["ci_high"] <= 10.0  # one launch of 10: bootstrap, 95 %
    assert r0["ci_method"].startswith("hierarchical bootstrap")
    assert r0["stddev"] == pytest.approx(3.0276503540974917)
    assert r0["cv"] == pytest.approx(3.0276503540974917 / 5.5)
    assert r0["samples"] == [float(x) for x in range(1, 11)]
    assert r0["counters"] == {"voluntary_ctxsw_per_op": 0.0}
    assert r0["harness"]["name"] == "google-benchmark"
    assert r0["unit"] == "ns/op" and r0["ci_method"]


async def test_duplicate_result_stored_once_acked_twice(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent, run, start = await started(make_agent, http, [PIPE, PIPE])
    rid = await agent.report(run["id"], start.items[0])
    assert await agent.report(run["id"], start.items[0], result_id=rid) == rid
    results = (await http.get(f"/api/v1/runs/{run['id']}/results")).json()
    assert [r["id"] for r in results] == [rid]
    assert (await get_run(http, run["id"]))["status"] == "running"


async def test_all_failed_run_fails_and_next_queued_starts(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent, run1, start1 = await started(make_agent, http)
    run2 = await post_run(http, agent.agent_id, [{"kernel": "syscall.getppid"}])
    assert run2["status"] == "queued"  # the agent is busy: one run at a time
    await agent.expect_nothing()
    await agent.report(run1["id"], start1.items[0], status=pb.RESULT_STATUS_UNSUPPORTED, error="no greenlet")
    start2 = (await agent.expect("start_run")).start_run
    assert start2.run_id == run2["id"]
    r1 = await get_run(http, run1["id"])
    assert r1["status"] == "failed" and r1["error"]
    assert r1["items"][0]["state"] == "failed" and r1["items"][0]["error"] == "no greenlet"
    assert r1["progress"]["failed"] == 1
    assert (await http.get(f"/api/v1/runs/{run1['id']}/results")).json() == []
    # an OK report without usable samples is a failed item, not a 500 later
    await agent.report(run2["id"], start2.items[0], samples=[])
    assert (await get_run(http, run2["id"]))["status"] == "failed"


async def test_offline_machine_run_stays_queued_until_hello(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    [agent] = await agents(make_agent, 1)
    await agent.close()

    async def offline() -> bool:
        return (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()["online"] is False

    await eventually(offline)
    run = await post_run(http, agent.agent_id, [{"kernel": "ctxsw.pipe"}])
    assert run["status"] == "queued"
    assert (await get_run(http, run["id"]))["status"] == "queued"
    await agent.connect()
    start = (await agent.expect("start_run")).start_run
    assert start.run_id == run["id"]
    assert (await get_run(http, run["id"]))["status"] == "running"


async def test_redispatch_unfinished_items_after_restart(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent, run, start = await started(make_agent, http, [PIPE] * 3)
    await agent.report(run["id"], start.items[0])
    await agent.close()

    # reconnect after a restart: no current run -> the two items without a result come again
    await agent.connect()
    again = (await agent.expect("start_run")).start_run
    assert again.run_id == run["id"]
    assert [it.item_id for it in again.items] == [it.item_id for it in start.items[1:]]
    await agent.close()

    # reconnect that survived (current_run_id is this run) -> nothing re-sent
    await agent.connect(current_run_id=run["id"])
    await agent.expect_nothing()
    for item in again.items:
        await agent.report(run["id"], item)
    assert (await get_run(http, run["id"]))["status"] == "succeeded"


async def test_rejected_messages_keep_the_stream_open(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    owner, other = make_agent(), make_agent()
    await owner.connect()
    await other.connect()
    run = await post_run(http, owner.agent_id, [{"kernel": "ctxsw.pipe"}] * 2)
    start = (await owner.expect("start_run")).start_run
    item = start.items[0]

    async def rejected(req: pb.ConnectRequest, agent: FakeAgent, code: int) -> pb.Reject:
        await agent.send(req)
        reject = (await agent.expect("reject")).reject
        assert reject.code == code, reject
        if req.WhichOneof("msg") == "result_report":
            assert reject.result_id == req.result_report.result_id
        return reject

    # not this agent's run (7), unknown run or item (3)
    r = await rejected(other.result(run["id"], item), other, 7)
    assert r.run_id == run["id"] and "not this agent's" in r.message
    await rejected(other.result("no-such-run", item), other, 3)
    await rejected(
        owner.result(run["id"], pb.RunItem(item_id="no-such-item", kernel_id="ctxsw.pipe")), owner, 3
    )
    await rejected(
        pb.ConnectRequest(run_update=pb.RunUpdate(run_id="nope", state=pb.ITEM_STATE_RUNNING, item_id="x")),
        other,
        3,
    )
    await rejected(
        pb.ConnectRequest(run_update=pb.RunUpdate(run_id=run["id"], state=pb.ITEM_STATE_ACCEPTED)), other, 7
    )
    # malformed reports (3)
    for bad in ("", "not-a-uuid", "0" * 36):
        req = owner.result(run["id"], item)
        req.result_report.result_id = bad
        await rejected(req, owner, 3)
    await rejected(owner.result(run["id"], item, samples=[1.0, float("nan")]), owner, 3)
    await rejected(owner.result(run["id"], item, samples=[1.0, float("inf")]), owner, 3)
    await rejected(owner.result(run["id"], item, samples=[1.0] * 100_001), owner, 3)
    mismatch = owner.result(run["id"], item)
    del mismatch.result_report.iterations[-1]
    await rejected(mismatch, owner, 3)
    # a result id another agent already stored is not this agent's (7)
    rid = await owner.report(run["id"], item)
    await rejected(other.result(run["id"], item, result_id=rid), other, 7)

    # both streams still work: a valid report is stored and acknowledged, heartbeats pass
    await other.send(pb.ConnectRequest(heartbeat=pb.Heartbeat(current_run_id="")))
    await other.expect_nothing()
    await owner.report(run["id"], start.items[1])
    done = await get_run(http, run["id"])
    assert done["status"] == "succeeded"
    # the first malformed report of item 0 failed it (the agent drops rejected reports); later ones
    # for the same item are history
    assert done["items"][0]["state"] == "failed"
    assert done["items"][0]["error"] == "report rejected: result_id '' is not a UUID"
    machines = {m["id"]: m["online"] for m in (await http.get("/api/v1/machines")).json()}
    assert machines == {owner.agent_id: True, other.agent_id: True}


async def test_cancel(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    agent, running, _ = await started(make_agent, http, [PIPE] * 2)
    queued = await post_run(http, agent.agent_id, [{"kernel": "ctxsw.pipe"}])
    third = await post_run(http, agent.agent_id, [{"kernel": "ctxsw.pipe"}])

    r = await http.post(f"/api/v1/runs/{queued['id']}/cancel")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    await agent.expect_nothing()

    r = await http.post(f"/api/v1/runs/{running['id']}/cancel")
    assert r.json()["status"] == "cancelled"
    assert [it["state"] for it in r.json()["items"]] == ["cancelled", "cancelled"]
    assert (await agent.expect("cancel_run")).cancel_run.run_id == running["id"]
    assert (await agent.expect("start_run")).start_run.run_id == third["id"]
    assert (await http.post(f"/api/v1/runs/{running['id']}/cancel")).status_code == 409
    assert (await http.post("/api/v1/runs/nope/cancel")).status_code == 404


async def test_runs_listing(make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer) -> None:
    a, b = make_agent(), make_agent()
    await a.connect()
    await b.connect()
    ra = await post_run(http, a.agent_id, [{"kernel": "ctxsw.pipe"}])
    rb = await post_run(http, b.agent_id, [{"kernel": "ctxsw.pipe"}])
    ids = [r["id"] for r in (await http.get("/api/v1/runs")).json()]
    assert ids == [rb["id"], ra["id"]]  # newest first
    only_a = (await http.get("/api/v1/runs", params={"machine_id": a.agent_id})).json()
    assert [r["id"] for r in only_a] == [ra["id"]]
    assert len((await http.get("/api/v1/runs", params={"limit": 1})).json()) == 1
    running = (await http.get("/api/v1/runs", params={"status": "running"})).json()
    assert {r["id"] for r in running} == {ra["id"], rb["id"]}
    assert (await http.get("/api/v1/runs", params={"status": "queued"})).json() == []
    assert (await http.get("/api/v1/runs", params={"status": "bogus"})).status_code == 422


@pytest.mark.parametrize("settings_overrides", [{"heartbeat_interval_s": 1}])
async def test_silent_agent_is_disconnected(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    agent = make_agent()
    welcome = await agent.connect()
    assert welcome.heartbeat_interval_s == 1
    with pytest.raises(EOFError):
        await agent.next(wait_s=6)  # 3 missed heartbeats, then the server ends the stream
    m = (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()
    assert m["online"] is False


async def test_run_cancelled_while_agent_away_is_cancelled_on_reconnect(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post_run(http, agent.agent_id, [{"kernel": "ctxsw.pipe"}])
    await agent.expect("start_run")
    await agent.close()
    assert (await http.post(f"/api/v1/runs/{run['id']}/cancel")).json()["status"] == "cancelled"
    await agent.connect(current_run_id=run["id"])
    assert (await agent.expect("cancel_run")).cancel_run.run_id == run["id"]
    await agent.expect_nothing()
