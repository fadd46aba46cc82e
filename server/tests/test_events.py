"""Server-Sent Events of a run: `run` at once and on each change, each `result` as it lands, `end`."""

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from ctxbench_server.main import CtxbenchServer

from .fake_agent import FakeAgent
from .runs_helpers import PIPE, started


async def read_events(resp: httpx.Response) -> AsyncIterator[tuple[str, Any]]:
    event = ""
    async for line in resp.aiter_lines():
        if line.startswith("event: "):
            event = line[len("event: ") :]
        elif line.startswith("data: "):
            yield event, json.loads(line[len("data: ") :])


async def test_run_events(make_agent: Callable[..., FakeAgent], http: httpx.AsyncClient) -> None:
    agent, run, start = await started(make_agent, http, [PIPE] * 2)
    seen: list[str] = []
    async with http.stream("GET", f"/api/v1/runs/{run['id']}/events") as resp:
        assert resp.headers["content-type"].startswith("text/event-stream")
        events = read_events(resp)
        kind, data = await anext(events)
        assert (kind, data["status"], data["progress"]["done"]) == ("run", "running", 0)
        await agent.report(run["id"], start.items[0])
        async for kind, data in events:
            seen.append(kind)
            if kind == "result":
                assert data["item_id"] in {it.item_id for it in start.items}
                assert data["status"] == "ok" and data["median"] is not None
                if seen.count("result") == 1:
                    await agent.report(run["id"], start.items[1])
            if kind == "run":
                assert data["id"] == run["id"]
            if kind == "end":
                assert data["status"] == "succeeded" and data["progress"]["done"] == 2
        # the server closes the stream after `end`
    assert seen.count("result") == 2 and seen[-1] == "end"
    assert seen.index("result") < seen.index("run")  # progress follows the result that made it
    # a finished run's stream: the Run, its results, end, and the stream closes
    async with http.stream("GET", f"/api/v1/runs/{run['id']}/events") as resp:
        kinds = [k async for k, _ in read_events(resp)]
    assert kinds == ["run", "result", "result", "end"]
    assert (await http.get("/api/v1/runs/nope/events")).status_code == 404


async def test_stop_ends_open_streams(
    make_agent: Callable[..., FakeAgent], http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    agent, run, _ = await started(make_agent, http)
    async with http.stream("GET", f"/api/v1/runs/{run['id']}/events") as resp:
        events = read_events(resp)
        assert (await anext(events))[0] == "run"
        await asyncio.wait_for(server.stop(), 5)  # neither the SSE stream nor the agent stream holds it up
    with pytest.raises(EOFError):
        await agent.next(wait_s=5)


async def test_keepalive_comment(
    make_agent: Callable[..., FakeAgent], http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxbench_server.runs import events

    monkeypatch.setattr(events, "KEEPALIVE_S", 0.1)
    _, run, _ = await started(make_agent, http)
    async with http.stream("GET", f"/api/v1/runs/{run['id']}/events") as resp:
        lines = aiter(resp.aiter_lines())
        assert await anext(lines) == "event: run"
        async with asyncio.timeout(5):
            while (line := await anext(lines)) != ": keepalive":
                assert not line.startswith("event: "), line
