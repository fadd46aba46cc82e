"""Helpers shared by the orchestration tests (runs over REST, a fake agent over gRPC)."""

from collections.abc import Callable
from typing import Any

import httpx

from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb

from .fake_agent import FakeAgent

MakeAgent = Callable[..., FakeAgent]
PIPE = {"kernel": "ctxsw.pipe"}


async def post(http: httpx.AsyncClient, body: dict[str, Any], status: int = 201) -> Any:
    r = await http.post("/api/v1/runs", json=body)
    assert r.status_code == status, r.text
    return r.json()


async def get_run(http: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    r = await http.get(f"/api/v1/runs/{run_id}")
    assert r.status_code == 200
    return dict(r.json())


async def agents(make_agent: MakeAgent, n: int, **kw: Any) -> list[FakeAgent]:
    out = [make_agent(**kw) for _ in range(n)]
    for a in out:
        await a.connect()
    return out


async def finish(agent: FakeAgent, start: pb.StartRun) -> None:
    for item in start.items:
        await agent.report(start.run_id, item)
