"""Shares: a comparison frozen under a slug; the latest-result pointer kept by real agent reports."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from ctxbench_server.main import CtxbenchServer
from ctxbench_server.shares.service import only_facts

from .compare_helpers import Seeder, spread
from .conftest import RolledBack
from .fake_agent import FakeAgent
from .runs_helpers import post


@pytest.fixture
async def seed(rolled_back: RolledBack) -> AsyncIterator[Seeder]:
    s = Seeder(rolled_back.sessionmaker)
    await s.kernels()
    yield s


async def share(http: httpx.AsyncClient, view: dict[str, Any], status: int = 201) -> Any:
    r = await http.post("/api/v1/shares", json={"view": view})
    assert r.status_code == status, r.text
    return r.json()


async def test_share_is_frozen_while_compare_moves_on(api: httpx.AsyncClient, seed: Seeder) -> None:
    a, b = await seed.machine("a"), await seed.machine("b")
    first = await seed.result(await seed.run(a), a, "ctxsw.pipe", spread(100))
    other = await seed.result(await seed.run(b), b, "ctxsw.pipe", spread(150))
    view = {"machines": ["a", "b"], "kernels": ["ctxsw.*"], "sort": "ratio", "cell": None}
    created = await share(api, view)
    assert re.fullmatch(r"[0-9A-Za-z]{16}", created["slug"]) and created["url"] == f"/s/{created['slug']}"
    frozen = (await api.get(f"/api/v1/shares/{created['slug']}")).json()
    assert frozen["view"]["sort"] == "ratio" and frozen["view"]["baseline"] == "a"  # UI state kept
    assert frozen["result_ids"] == sorted([first, other]) == frozen["compare"]["result_ids"]
    live = (await api.get("/api/v1/compare", params={"machines": "a,b", "kernels": "ctxsw.*"})).json()
    assert frozen["compare"] == only_facts(live, frozen["view"]["facts"])  # the facts the share carries

    newer = await seed.result(await seed.run(a), a, "ctxsw.pipe", spread(50))
    live = (await api.get("/api/v1/compare", params={"machines": "a,b", "kernels": "ctxsw.*"})).json()
    assert live["rows"][0]["cells"]["a"]["result_id"] == newer
    again = (await api.get(f"/api/v1/shares/{created['slug']}")).json()
    assert again == frozen and again["compare"]["rows"][0]["cells"]["a"]["result_id"] == first
    assert (await share(api, view))["slug"] != created["slug"]


async def test_share_slugs_and_validation(api: httpx.AsyncClient, seed: Seeder) -> None:
    await seed.machine("a")
    for slug in ("AAAAAAAAAAAAAAAA", "short", "has-dash-0123456789", "x" * 65):
        assert (await api.get(f"/api/v1/shares/{slug}")).status_code == 404
    [e] = (await share(api, {"machines": ["a", "ghost"]}, 422))["detail"]
    assert e["loc"] == ["body", "view", "machines", 1] and "ghost" in e["msg"]
    [e] = (await share(api, {"machines": ["a"], "kernels": ["nope"]}, 422))["detail"]
    assert e["loc"] == ["body", "view", "kernels", 0]
    [e] = (await share(api, {"machines": ["a"], "baseline": "b"}, 422))["detail"]
    assert e["loc"] == ["body", "view", "baseline"]
    [e] = (await share(api, {"machines": "a"}, 422))["detail"]
    assert e["loc"] == ["body", "view", "machines"]
    assert (await api.post("/api/v1/shares", json={})).status_code == 422
    assert (await share(api, {"machines": ["a"]}))["slug"]


async def test_spa_serves_compare_and_share_pages(http: httpx.AsyncClient, server: CtxbenchServer) -> None:
    root = server.settings.frontend_dir
    root.mkdir(parents=True, exist_ok=True)
    (root / "index.html").write_text("<!doctype html><title>explorer</title>")
    for path in ("/compare?machines=a,b", "/s/AbCdEfGhIjKlMnOp"):
        r = await http.get(path)
        assert r.status_code == 200 and "explorer" in r.text


async def test_agent_results_move_the_latest_pointer(
    http: httpx.AsyncClient, make_agent: Callable[..., FakeAgent]
) -> None:
    """Results stored from real reports over gRPC are what compare picks, newest first."""
    one, two = make_agent(name="one"), make_agent(name="two")
    for agent in (one, two):
        await agent.connect()
    ids = [one.agent_id, two.agent_id]
    for round_ in range(2):
        await post(http, {"machine_ids": ids, "items": [{"kernel": "ctxsw.pipe"}]})
        for agent in (one, two):
            start = (await agent.expect("start_run")).start_run
            samples = [x * (round_ + 1) for x in spread(10)]
            await agent.report(start.run_id, start.items[0], samples=samples)
    body = (await http.get("/api/v1/compare", params={"machines": ",".join(ids)})).json()
    [row] = body["rows"]
    assert row["cells"][one.agent_id]["median"] == pytest.approx(20)
    assert row["ratios"][two.agent_id]["ratio"] == pytest.approx(1.0)
    assert body["facts_diff"] == [] or all(d["fact"] != "hostname" for d in body["facts_diff"])
