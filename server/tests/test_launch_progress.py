"""Live progress counted in launches (issue 27): launches interleave round-robin over a run's items, so
every item runs at once and none finishes before the last round; the agent's RunUpdates say how many of
each item's launches are done. Also: machines' last_seen fresh for online agents, and the words for
disturbed launches. Real server, real gRPC (tests/fake_agent.py)."""

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import update

from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.main import CtxbenchServer
from ctxbench_server.models import Machine
from ctxbench_server.stats.interference import disturbed_why

from .conftest import eventually
from .runs_helpers import PIPE, MakeAgent, agents, get_run, post
from .test_events import read_events


def launch(run_id: str, item: pb.RunItem, index: int, done: int, planned: int = 3, wall: float = 0.0) -> Any:
    """The RUNNING update an agent sends as one of an item's launches starts (or, done grown, ends)."""
    return pb.ConnectRequest(
        run_update=pb.RunUpdate(
            run_id=run_id,
            state=pb.ITEM_STATE_RUNNING,
            item_id=item.item_id,
            item_index=index,
            message=f"{item.kernel_id} launch {done + 1}/{planned}",
            launches_done=done,
            launches_planned=planned,
            launches_wall_s=wall,
        )
    )


async def started(
    make_agent: MakeAgent, http: httpx.AsyncClient, items: list[dict[str, Any]]
) -> tuple[Any, dict[str, Any], pb.StartRun]:
    """A connected fake agent and a run of `items`, 3 launches each, with the StartRun it got."""
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": items, "launches": 3})
    return agent, run, (await agent.expect("start_run")).start_run


async def finish(
    agent: Any, http: httpx.AsyncClient, run_id: str, item: pb.RunItem, walls: list[float]
) -> dict[str, Any]:
    """The item's result with one launch a wall time (10 samples spread over them); the run after it."""
    req = agent.result(run_id, item)
    req.result_report.launches.extend(
        pb.Launch(index=i, wall_s=w, kept=True, samples=2) for i, w in enumerate(walls)
    )
    req.result_report.sample_launches.extend(i * len(walls) // 10 for i in range(10))
    await agent.send(req)
    await agent.expect("result_ack")
    return await get_run(http, run_id)


async def launches_done(http: httpx.AsyncClient, run_id: str, want: int) -> dict[str, Any]:
    """The run once its progress counts `want` launches done (updates get no answer: wait for them)."""
    got: dict[str, Any] = {}

    async def counted() -> bool:
        got.update(await get_run(http, run_id))
        return bool(got["progress"]["launches_done"] == want)

    await eventually(counted)
    return got


async def test_progress_counts_launches_before_any_item_finishes(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent, run, start = await started(make_agent, http, [PIPE] * 3)
    assert run["progress"]["launches_planned"] == 9  # 3 launches an item
    assert all((it["launches_done"], it["launches_planned"]) == (0, 3) for it in run["items"])
    # round 1: each item's first launch starts and ends
    for i, item in enumerate(start.items):
        await agent.send(launch(run["id"], item, i, 0))
        await agent.send(launch(run["id"], item, i, 1, wall=0.5))
    # round 2 begins: item 0's second launch ends
    await agent.send(launch(run["id"], start.items[0], 0, 1, wall=0.5))
    await agent.send(launch(run["id"], start.items[0], 0, 2, wall=1.1))
    got = await launches_done(http, run["id"], 4)
    assert got["status"] == "running" and got["progress"]["done"] == 0  # no item has finished
    assert [it["state"] for it in got["items"]] == ["running"] * 3
    assert [(it["launches_done"], it["launches_planned"]) for it in got["items"]] == [(2, 3), (1, 3), (1, 3)]
    assert [it["launches_wall_s"] for it in got["items"]] == [1.1, 0.5, 0.5]
    p = got["progress"]
    assert (p["launches_done"], p["launches_planned"]) == (4, 9)
    assert abs(p["launches_wall_s"] - 2.1) < 1e-9
    at = datetime.fromisoformat(p["launch_at"])
    assert abs((datetime.now(UTC) - at).total_seconds()) < 5

    # the light list counts the same (in SQL)
    light = (await http.get("/api/v1/runs", params={"items": "false"})).json()
    [entry] = [r for r in light if r["id"] == run["id"]]
    assert entry["items"] == []
    assert {k: entry["progress"][k] for k in p} == p

    # a re-measurement adds a launch to the plan; a finished item counts the launches it ran
    await agent.send(launch(run["id"], start.items[1], 1, 1, planned=4, wall=0.5))
    got = await finish(agent, http, run["id"], start.items[0], [0.5] * 3)  # its result: 3 launches ran
    assert [(it["launches_done"], it["launches_planned"]) for it in got["items"]] == [(3, 3), (1, 4), (1, 3)]
    assert (got["progress"]["launches_done"], got["progress"]["launches_planned"]) == (5, 10)
    # a result stands for the progress the agent no longer sends after it (agent/internal/runner
    # progress.go): the wall time of the launches it ran, a re-measurement no update announced
    assert got["items"][0]["launches_wall_s"] == 1.5
    got = await finish(agent, http, run["id"], start.items[2], [0.25] * 4)
    assert [(it["launches_done"], it["launches_planned"]) for it in got["items"]] == [(3, 3), (1, 4), (4, 4)]
    assert got["items"][2]["launches_wall_s"] == 1.0


async def test_launches_from_an_agent_before_the_fields(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    """An older agent says only "<kernel> launch 2/3" as a launch starts: the launches before it are done."""
    agent, run, start = await started(make_agent, http, [PIPE] * 2)
    item = start.items[1]
    update = pb.RunUpdate(
        run_id=run["id"], state=pb.ITEM_STATE_RUNNING, item_id=item.item_id, item_index=1,
        message="ctxsw.pipe launch 2/3",
    )  # fmt: skip
    await agent.send(pb.ConnectRequest(run_update=update))
    got = await launches_done(http, run["id"], 1)
    assert [(it["launches_done"], it["launches_planned"]) for it in got["items"]] == [(0, 3), (1, 3)]
    # its one-process result (no launches listed) counts at least one launch
    await agent.report(run["id"], start.items[0])
    got = await get_run(http, run["id"])
    assert [(it["launches_done"], it["launches_planned"]) for it in got["items"]] == [(1, 1), (1, 3)]


async def test_events_carry_launch_progress(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    agent, run, start = await started(make_agent, http, [PIPE] * 2)
    async with http.stream("GET", f"/api/v1/runs/{run['id']}/events") as resp:
        events = read_events(resp)
        kind, data = await anext(events)
        assert (kind, data["progress"]["launches_done"], data["progress"]["launches_planned"]) == (
            "run",
            0,
            6,
        )
        await agent.send(launch(run["id"], start.items[0], 0, 0))
        await agent.send(launch(run["id"], start.items[0], 0, 1, wall=0.4))
        async for kind, data in events:
            assert kind == "run"
            if data["progress"]["launches_done"] == 1:
                assert data["items"][0]["launches_done"] == 1 and data["progress"]["done"] == 0
                break


async def test_retry_counts_launches_again(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    agent, run, start = await started(make_agent, http, [PIPE])
    await agent.send(launch(run["id"], start.items[0], 0, 1, wall=0.4))
    await launches_done(http, run["id"], 1)
    await agent.report(run["id"], start.items[0], status=pb.RESULT_STATUS_FAILED, error="boom")
    assert (await get_run(http, run["id"]))["status"] == "failed"
    r = await http.post(f"/api/v1/runs/{run['id']}/retry")
    assert r.status_code == 200, r.text
    p = r.json()["progress"]
    assert (p["launches_done"], p["launches_planned"], p["launches_wall_s"], p["launch_at"]) == (
        0,
        3,
        0.0,
        None,
    )


async def test_last_seen_of_an_online_machine_is_its_last_message(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    """last_seen is written in bulk, each machine at most every 6 heartbeats (a minute by default); GET
    /machines reports an online agent's last message instead of that older value."""
    agent = make_agent()
    await agent.connect()
    liveness = server.agent_service.liveness
    await agent.send(pb.ConnectRequest(heartbeat=pb.Heartbeat()))

    async def written() -> bool:  # last_seen written for this message: not again for a minute
        await liveness.flush_last_seen()
        return agent.agent_id in liveness._written

    await eventually(written)
    long_ago = datetime.now(UTC) - timedelta(seconds=50)
    async with server.sessionmaker() as session:
        await session.execute(update(Machine).where(Machine.id == agent.agent_id).values(last_seen=long_ago))
        await session.commit()
    await agent.send(pb.ConnectRequest(heartbeat=pb.Heartbeat()))

    async def fresh() -> bool:
        [m] = [m for m in (await http.get("/api/v1/machines")).json() if m["id"] == agent.agent_id]
        one = (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()
        ages = [
            (datetime.now(UTC) - datetime.fromisoformat(x["last_seen"])).total_seconds() for x in (m, one)
        ]
        return all(age < 5 for age in ages)

    await eventually(fresh)
    await agent.close()

    async def offline() -> bool:
        return (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()["online"] is False

    await eventually(offline)
    m = (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()
    assert (
        datetime.now(UTC) - datetime.fromisoformat(m["last_seen"])
    ).total_seconds() < 5  # written at the end


def test_disturbed_launches_in_words() -> None:
    assert disturbed_why([]) is None
    busy = [{"disturbed": True, "other_busy_frac": f} for f in (0.78, 0.891)]
    assert disturbed_why(busy) == "other processes kept 78\u201389 % of its CPUs busy"
    mixed = [
        {"disturbed": True, "other_busy_frac": 0.4, "steal_frac": 0.0},
        {"disturbed": True, "other_busy_frac": 0.02, "steal_frac": 0.12},
        {"disturbed": True, "other_busy_frac": 0.01, "steal_frac": None},
    ]
    assert disturbed_why(mixed) == (
        "other processes kept 40 % of its CPUs busy; steal took 12 % of its CPUs; "
        "the kernel waited for a CPU (its CPU time fell well short of its wall time)"
    )
