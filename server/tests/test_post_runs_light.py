"""POST /runs?items=false (issue 12, "The server holds"): the answer's runs without their items, as
GET /runs?items=false lists them; the default answer keeps every item. Real server, real gRPC."""

from typing import Any

import httpx

from .runs_helpers import PIPE, MakeAgent, agents

SWEEP = {"kernel": "syscall.getppid", "sweep": {"threads": [1, 2, 4]}}  # 3 items


async def post(http: httpx.AsyncClient, body: dict[str, Any], items: str | None) -> httpx.Response:
    return await http.post("/api/v1/runs", json=body, params={"items": items} if items is not None else None)


async def test_batch_answer_without_items(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    a, b = await agents(make_agent, 2)
    r = await post(http, {"machine_ids": [a.agent_id, b.agent_id], "items": [SWEEP, PIPE]}, "false")
    assert r.status_code == 201, r.text
    out = r.json()
    assert set(out) == {"batch_id", "runs"}
    assert [run["machine_id"] for run in out["runs"]] == [a.agent_id, b.agent_id]
    listed = {run["id"]: run for run in (await http.get("/api/v1/runs?items=false")).json()}
    for agent, run in zip((a, b), out["runs"], strict=True):
        assert run["items"] == []
        assert run["progress"] == {
            **{"total": 4, "done": 0, "failed": 0, "running": 0},
            # launches (issue 27): 7 an item in the default profile, none done yet
            **{"launches_done": 0, "launches_planned": 28, "launches_wall_s": 0.0, "launch_at": None},
        }
        assert run["kernels"] == ["syscall.getppid", "ctxsw.pipe"]
        assert run["status"] == "running"
        assert run == listed[run["id"]]  # the light shape of the list, field for field
        full = (await http.get(f"/api/v1/runs/{run['id']}")).json()
        assert len(full["items"]) == 4  # stored with every item all the same
        assert {k: v for k, v in full.items() if k != "items"} == {
            k: v for k, v in run.items() if k != "items"
        }
        start = (await agent.expect("start_run")).start_run
        assert start.run_id == run["id"] and len(start.items) == 4


async def test_single_run_answer_without_items(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    [a] = await agents(make_agent, 1)
    r = await post(http, {"machine_id": a.agent_id, "items": [SWEEP]}, "false")
    assert r.status_code == 201, r.text
    run = r.json()
    assert run["batch_id"] == run["id"] and run["items"] == []
    assert run["progress"]["total"] == 3 and run["kernels"] == ["syscall.getppid"]


async def test_default_answer_keeps_every_item(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    a, b = await agents(make_agent, 2)
    for items in (None, "true"):
        r = await post(http, {"machine_ids": [a.agent_id, b.agent_id], "items": [SWEEP]}, items)
        assert r.status_code == 201, r.text
        for run in r.json()["runs"]:
            assert [(it["index"], it["kernel"], it["params"]["threads"]) for it in run["items"]] == [
                (0, "syscall.getppid", 1),
                (1, "syscall.getppid", 2),
                (2, "syscall.getppid", 4),
            ]
            assert run["progress"]["total"] == 3
            full = (await http.get(f"/api/v1/runs/{run['id']}")).json()
            assert run == full  # field for field: the request (from the body, not read back) included


async def test_bad_items_value_is_refused_naming_it(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    [a] = await agents(make_agent, 1)
    r = await post(http, {"machine_id": a.agent_id, "items": [PIPE]}, "maybe")
    assert r.status_code == 422, r.text
    assert [e["loc"] for e in r.json()["detail"]] == [["query", "items"]]
    assert (await http.get("/api/v1/runs")).json() == []  # nothing stored
    await a.expect_nothing(0.1)
