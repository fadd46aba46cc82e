"""/api/v1/schedules: the shapes, who may write, the 422s naming the field, the 404s and the budget
(served in-process on the migrated, rolled-back database, on a machine a fake agent's Hello made); a
firing's runs name their schedule in GET /runs/{id} (a real server and agent)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from ctxbench_server.main import CtxbenchServer

from .conftest import RolledBack
from .runs_helpers import MakeAgent, agents, hello_machine

PIPE_RUN = {"items": [{"kernel": "ctxsw.pipe"}], "profile": "quick"}


def body(machine: str, **kw: Any) -> dict[str, Any]:
    return {"name": "nightly pipe", "run": PIPE_RUN, "machine_ids": [machine], "interval_s": 3600, **kw}


async def test_create_read_edit_pause_delete(api: httpx.AsyncClient, rolled_back: RolledBack) -> None:
    machine = await hello_machine(rolled_back.sessionmaker)
    r = await api.post("/api/v1/schedules", json=body(machine, jitter_s=60))
    assert r.status_code == 201, r.text
    created = r.json()
    sid = created["id"]
    assert created["run"] == {"items": [{"kernel": "ctxsw.pipe", "params": {}}], "profile": "quick"}
    assert created["machine_ids"] == [machine] and created["selector"] is None
    assert created["next_fire_at"] and created["firings"] == [] and created["last_firing"] is None
    assert created["created_by"] == "admin"

    listed = (await api.get("/api/v1/schedules")).json()
    assert [s["id"] for s in listed] == [sid] and "firings" not in listed[0]

    r = await api.patch(f"/api/v1/schedules/{sid}", json={"cron": "0 3 * * *", "name": "at three"})
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["cron"] == "0 3 * * *" and got["interval_s"] is None and got["name"] == "at three"
    assert got["next_due_at"].endswith("03:00:00Z")

    r = await api.patch(f"/api/v1/schedules/{sid}", json={"selector": "env=prod"})
    assert r.json()["selector"] == "env=prod" and r.json()["machine_ids"] is None

    paused = (await api.post(f"/api/v1/schedules/{sid}/pause")).json()
    assert paused["paused"] is True and paused["next_fire_at"] is None
    resumed = (await api.post(f"/api/v1/schedules/{sid}/resume")).json()
    assert resumed["paused"] is False and resumed["next_fire_at"]

    assert (await api.delete(f"/api/v1/schedules/{sid}")).status_code == 204
    assert (await api.get(f"/api/v1/schedules/{sid}")).status_code == 404


async def test_a_firing_shows_in_the_schedule_and_its_runs(
    server: CtxbenchServer, http: httpx.AsyncClient, make_agent: MakeAgent
) -> None:
    [agent] = await agents(make_agent, 1)
    sid = (await http.post("/api/v1/schedules", json=body(agent.agent_id))).json()["id"]
    got = (await http.get(f"/api/v1/schedules/{sid}")).json()
    due = got["next_fire_at"]
    [fired] = await server.scheduler.tick(datetime.fromisoformat(due) + timedelta(seconds=1))
    [run_id] = fired.run_ids.values()
    start = await agent.expect("start_run")  # started at once: its agent is connected and idle
    assert start.start_run.run_id == run_id
    run = (await http.get(f"/api/v1/runs/{run_id}")).json()
    assert run["schedule_id"] == sid and run["status"] == "running"
    got = (await http.get(f"/api/v1/schedules/{sid}")).json()
    [firing] = got["firings"]
    assert firing["run_ids"] == [run_id] and firing["skipped"] == [] and firing["error"] is None
    assert got["last_firing"] == firing
    assert (await http.get("/api/v1/schedules")).json()[0]["last_firing"]["run_ids"] == [run_id]
    # A run posted by hand names no schedule.
    by_hand = (await http.post("/api/v1/runs", json={"machine_id": agent.agent_id, **PIPE_RUN})).json()
    assert by_hand["schedule_id"] is None


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        ({"cron": "61 * * * *", "interval_s": None}, ["body", "cron"]),
        ({"cron": "* * * * * *", "interval_s": None}, ["body", "cron"]),
        ({"cron": "0 0 31 2 *", "interval_s": None}, ["body", "cron"]),
        ({"interval_s": 30}, ["body", "interval_s"]),
        ({"interval_s": 0}, ["body", "interval_s"]),
        ({"jitter_s": 3601}, ["body", "jitter_s"]),
        ({"jitter_s": -1}, ["body", "jitter_s"]),
        ({"machine_ids": ["nope"]}, ["body", "machine_ids", 0]),
        ({"run": {"items": [{"kernel": "no.such"}]}}, ["body", "run", "items", 0, "kernel"]),
        ({"run": {"items": [{"kernel": "syscall.getppid", "params": {"threads": 0}}]}}, None),
        ({"run": {"items": []}}, ["body", "run", "items"]),
        ({"selector": "a b", "machine_ids": None}, ["body", "selector"]),
        ({"name": "x" * 201}, ["body", "name"]),
        ({"name": "two\nlines"}, ["body", "name"]),
        ({"extra": 1}, ["body", "extra"]),
    ],
)
async def test_bad_input_is_a_422_naming_the_field(
    api: httpx.AsyncClient, rolled_back: RolledBack, change: dict[str, Any], loc: list[Any] | None
) -> None:
    machine = await hello_machine(rolled_back.sessionmaker)
    b = {k: v for k, v in {**body(machine), **change}.items() if v is not None}
    r = await api.post("/api/v1/schedules", json=b)
    assert r.status_code == 422, r.text
    locs = [e["loc"] for e in r.json()["detail"]]
    if loc is None:  # out of range: named under body.run.items.0.params.threads
        assert locs == [["body", "run", "items", 0, "params", "threads"]]
    else:
        assert loc in locs, locs


@pytest.mark.parametrize(
    "change",
    [{"selector": "env=prod"}, {"cron": "0 * * * *"}],
)
async def test_one_selection_and_one_timing(
    api: httpx.AsyncClient, rolled_back: RolledBack, change: dict[str, Any]
) -> None:
    machine = await hello_machine(rolled_back.sessionmaker)
    r = await api.post("/api/v1/schedules", json={**body(machine), **change})
    assert r.status_code == 422 and "exactly one of" in r.text


async def test_patch_is_checked_like_a_create(api: httpx.AsyncClient, rolled_back: RolledBack) -> None:
    machine = await hello_machine(rolled_back.sessionmaker)
    sid = (await api.post("/api/v1/schedules", json=body(machine))).json()["id"]
    r = await api.patch(f"/api/v1/schedules/{sid}", json={"run": {"items": [{"kernel": "no.such"}]}})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "run", "items", 0, "kernel"]
    r = await api.patch(f"/api/v1/schedules/{sid}", json={"jitter_s": 4000})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "jitter_s"]
    r = await api.patch(f"/api/v1/schedules/{sid}", json={"interval_s": 60, "cron": "* * * * *"})
    assert r.status_code == 422


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", ""),
        ("PATCH", ""),
        ("DELETE", ""),
        ("POST", "/pause"),
        ("POST", "/resume"),
    ],
)
async def test_unknown_id_is_404(api: httpx.AsyncClient, method: str, path: str) -> None:
    r = await api.request(method, f"/api/v1/schedules/nope{path}", json={} if method == "PATCH" else None)
    assert r.status_code == 404 and "not found" in r.json()["detail"]


async def test_writes_need_a_credential(api_anon: httpx.AsyncClient, api: httpx.AsyncClient) -> None:
    assert (await api_anon.get("/api/v1/schedules")).status_code == 401
    assert (await api_anon.post("/api/v1/schedules", json={})).status_code == 401
    token = (await api.post("/api/v1/tokens", json={"name": "ro", "scope": "read"})).json()["token"]
    reader = {"authorization": f"Bearer {token}"}
    assert (await api_anon.get("/api/v1/schedules", headers=reader)).status_code == 200
    assert (await api_anon.post("/api/v1/schedules", json={}, headers=reader)).status_code == 403


@pytest.mark.parametrize("settings_overrides", [{"max_schedules": 1}])
async def test_max_schedules(api: httpx.AsyncClient, rolled_back: RolledBack) -> None:
    machine = await hello_machine(rolled_back.sessionmaker)
    assert (await api.post("/api/v1/schedules", json=body(machine))).status_code == 201
    r = await api.post("/api/v1/schedules", json=body(machine))
    assert r.status_code == 409 and "CTXBENCH_MAX_SCHEDULES" in r.text
