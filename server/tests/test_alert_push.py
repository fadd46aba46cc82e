"""Alerts on the push channel (GET /api/v1/events): an alert the watcher opens, and one acknowledged or
resolved through REST, reach every open explorer as an `alert` event, so the header's count follows
without a timer. Real reports over gRPC, a real server, a real SSE stream."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from ctxbench_server.main import CtxbenchServer

from .compare_helpers import spread
from .conftest import eventually
from .fake_agent import FakeAgent
from .runs_helpers import post
from .test_push import opened, push


@pytest.mark.parametrize("settings_overrides", [{"alert_settle_s": 0.05}])
async def test_an_opened_and_a_resolved_alert_are_pushed(
    http: httpx.AsyncClient, server: CtxbenchServer, make_agent: Callable[..., FakeAgent]
) -> None:
    agent = make_agent(name="stepper")
    await agent.connect()
    async with push(http) as p:
        await eventually(lambda: opened(server, 1))
        for i in range(8):
            run = await post(http, {"machine_id": agent.agent_id, "items": [{"kernel": "ctxsw.pipe"}]})
            start = (await agent.expect("start_run")).start_run
            assert start.run_id == run["id"]
            await agent.report(start.run_id, start.items[0], samples=spread(100.0 if i < 4 else 160.0, n=12))
        _, _, event = await p.until("alert", {"what": "opened"}, wait_s=15)
        [a] = (await http.get("/api/v1/alerts")).json()
        assert event["id"] == a["id"]
        r = await http.post(f"/api/v1/alerts/{a['id']}/resolve")
        assert r.status_code == 200, r.text
        await p.until("alert", {"id": a["id"], "what": "changed"})
