"""Event streams under load (issue 12, item 1): budgets per client and in all, released on disconnect;
one database read per change of a run however many streams follow it; a slow stream dropped without
holding up the others; agents' heartbeats and reports never wait for a browser's database connection.
Real server, real sockets, real database."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select, text

from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.main import CtxbenchServer
from ctxbench_server.models import Machine, Result
from ctxbench_server.runs import events as run_events

from .conftest import ADMIN, TOKEN, eventually
from .runs_helpers import PIPE, MakeAgent, agents, post


@contextlib.asynccontextmanager
async def open_stream(http: httpx.AsyncClient, run_id: str) -> AsyncIterator[httpx.Response]:
    """A stream that has sent its first event, kept open until the block ends (the caller may close
    it sooner with `aclose`)."""
    async with http.stream("GET", f"/api/v1/runs/{run_id}/events") as resp:
        assert resp.status_code == 200
        lines = aiter(resp.aiter_lines())  # kept: a dropped line iterator closes the response
        assert await anext(lines) == "event: run"
        yield resp


@pytest.mark.parametrize("settings_overrides", [{"max_sse_per_client": 2}])
async def test_streams_per_client_are_limited_and_given_back(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    (a,) = await agents(make_agent, 1)
    run = await post(http, {"machine_id": a.agent_id, "items": [PIPE]})
    async with contextlib.AsyncExitStack() as held:
        await held.enter_async_context(open_stream(http, run["id"]))
        second = await held.enter_async_context(open_stream(http, run["id"]))
        r = await http.get(f"/api/v1/runs/{run['id']}/events")
        assert r.status_code == 429, r.text
        assert "CTXBENCH_MAX_SSE_PER_CLIENT (2)" in r.json()["detail"]
        assert r.headers["retry-after"] == "5"
        await second.aclose()  # the browser goes away: its stream is given back
        await eventually(lambda: _open_is(server, 1))
        await held.enter_async_context(open_stream(http, run["id"]))
    await eventually(lambda: _open_is(server, 0))


@pytest.mark.parametrize("settings_overrides", [{"max_sse_per_client": 10, "max_sse_total": 2}])
async def test_streams_in_all_are_limited(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    (a,) = await agents(make_agent, 1)
    run = await post(http, {"machine_id": a.agent_id, "items": [PIPE]})
    async with open_stream(http, run["id"]), open_stream(http, run["id"]):
        r = await http.get(f"/api/v1/runs/{run['id']}/events")
        assert r.status_code == 503, r.text
        assert "CTXBENCH_MAX_SSE_TOTAL (2)" in r.json()["detail"]
    assert (await http.get("/api/v1/runs/nope/events")).status_code == 404
    await eventually(lambda: _open_is(server, 0))


async def _open_is(server: CtxbenchServer, n: int) -> bool:
    return server.dispatcher.events.open_streams == n


STORM = 300


@pytest.mark.timing  # 300 streams open, a report timed under them
@pytest.mark.parametrize("settings_overrides", [{"max_sse_per_client": 1000, "db_pool_size": 2}])
async def test_storm_of_streams_then_cancel(make_agent: MakeAgent, server: CtxbenchServer) -> None:
    """Before: 300 streams each re-read the run and all its results on every change; the pool ran
    dry, streams got 500s, and the agent's heartbeat waited for a connection (dropped for 37 s)."""
    (a,) = await agents(make_agent, 1)
    base = f"http://127.0.0.1:{server.http_port}"
    tls = ssl.create_default_context()  # shared: each client would load the CA bundle again
    async with httpx.AsyncClient(base_url=base, headers=ADMIN, timeout=30) as http:
        run = await post(http, {"machine_id": a.agent_id, "items": [PIPE, PIPE, PIPE]})
        start = (await a.expect("start_run")).start_run
        first = await a.report(run["id"], start.items[0])
        feeds = server.dispatcher.events
        reads0 = feeds.reads
        statuses: list[int] = []
        tails: list[list[tuple[str, Any]]] = []
        connected = 0
        all_in = asyncio.Event()

        async def follow() -> None:
            nonlocal connected
            events: list[tuple[str, Any]] = []
            # A client each, as 300 browsers would be (one client's pool is O(n^2) in its connections).
            async with (
                httpx.AsyncClient(base_url=base, headers=ADMIN, timeout=60, verify=tls) as own,
                own.stream("GET", f"/api/v1/runs/{run['id']}/events") as resp,
            ):
                statuses.append(resp.status_code)
                if resp.status_code != 200:
                    return
                kind = ""
                async for line in resp.aiter_lines():
                    if line.startswith("event: "):
                        kind = line[len("event: ") :]
                    elif line.startswith("data: "):
                        events.append((kind, json.loads(line[len("data: ") :])))
                        if len(events) == 2:  # the Run, then the result stored before it joined
                            connected += 1
                            if connected == STORM:
                                all_in.set()
            tails.append(events)

        tasks = [asyncio.create_task(follow()) for _ in range(STORM)]
        async with asyncio.timeout(60):
            await all_in.wait()
        assert feeds.open_streams == STORM
        joined_reads = feeds.reads - reads0
        # A report while 300 streams follow the run: acknowledged at once, and read once for all.
        t0 = time.monotonic()
        second = await a.report(run["id"], start.items[1])
        ack_s = time.monotonic() - t0
        r = await http.post(f"/api/v1/runs/{run['id']}/cancel")
        assert r.status_code == 200, r.text
        assert (await a.expect("cancel_run", wait_s=10)).cancel_run.run_id == run["id"]
        async with asyncio.timeout(60):
            await asyncio.gather(*tasks)
    assert statuses == [200] * STORM
    for events in tails:
        kinds = [k for k, _ in events]
        assert kinds[:2] == ["run", "result"] and kinds[-1] == "end", kinds
        assert events[-1][1]["status"] == "cancelled"
        # each result once, and again when its CI is filled in after the ack (ingest/ci.py)
        assert {body["id"] for k, body in events if k == "result"} == {first, second}, events
    # One database read per change, not per stream: the joins shared a few reads, then the report and
    # the cancel (and its dispatch notice) each took about one.
    assert joined_reads <= 5, joined_reads
    assert feeds.reads - reads0 <= joined_reads + 6, feeds.reads - reads0
    assert ack_s < 2.0, f"a report waited {ack_s:.2f} s behind {STORM} event streams"
    await eventually(lambda: _open_is(server, 0))


async def test_a_slow_stream_is_dropped_and_holds_nobody_up(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_events, "MAX_QUEUED", 4)
    server.ci_filler.updated = None  # it counts chunks: no result sent again with its CI (test_ci_fill)
    (a,) = await agents(make_agent, 1)
    run = await post(http, {"machine_id": a.agent_id, "items": [PIPE] * 4})
    start = (await a.expect("start_run")).start_run
    feeds = server.dispatcher.events
    slow = await feeds.subscribe(run["id"], "slow")  # never reads until the end
    fast = await feeds.subscribe(run["id"], "fast")

    async def drain(sub: run_events.Subscriber) -> list[str]:
        return [chunk async for chunk in feeds.stream(sub)]

    fast_chunks: list[str] = []

    async def follow() -> None:
        async for chunk in feeds.stream(fast):
            fast_chunks.append(chunk)

    async def fast_has(n: int) -> bool:
        return sum(c.startswith("event: result") for c in fast_chunks) >= n

    fast_task = asyncio.create_task(follow())
    for n, item in enumerate(start.items, 1):
        await a.report(run["id"], item)  # each: a result and a Run, 2 chunks
        # One report read at a time: the feed's reader coalesces what landed during a read, and 4
        # results in one read would be more than MAX_QUEUED for the fast stream too.
        await eventually(lambda n=n: fast_has(n))
    await asyncio.wait_for(fast_task, 10)
    assert sum(c.startswith("event: result") for c in fast_chunks) == 4
    assert fast_chunks[-1].startswith("event: end")
    slow_chunks = await asyncio.wait_for(drain(slow), 5)
    assert slow_chunks[-1] == run_events.DROPPED  # closed without waiting for it; EventSource reconnects
    assert feeds.open_streams == 0


async def test_a_late_stream_gets_every_result_once_when_the_feed_keeps_none(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_events, "CACHE_BYTES", 1)  # a run whose results are too big to keep
    server.ci_filler.updated = None  # every result once: none sent again with its CI (test_ci_fill)
    (a,) = await agents(make_agent, 1)
    run = await post(http, {"machine_id": a.agent_id, "items": [PIPE] * 3})
    start = (await a.expect("start_run")).start_run
    feeds = server.dispatcher.events
    early = await feeds.subscribe(run["id"], "early")

    async def drain(sub: run_events.Subscriber) -> list[str]:
        return [chunk async for chunk in feeds.stream(sub)]

    early_task = asyncio.create_task(drain(early))
    ids = [await a.report(run["id"], item) for item in start.items[:2]]
    await eventually(lambda: _feed_sent(server, run["id"], 2))
    reads = feeds.reads
    late = await feeds.subscribe(run["id"], "late")
    assert feeds.reads == reads + 1  # its own read of the results the feed did not keep
    late_task = asyncio.create_task(drain(late))
    ids.append(await a.report(run["id"], start.items[2]))
    for task in (early_task, late_task):
        chunks = await asyncio.wait_for(task, 10)
        got = [json.loads(c.split("data: ", 1)[1])["id"] for c in chunks if c.startswith("event: result")]
        assert got == ids
        assert chunks[0].startswith("event: run") and chunks[-1].startswith("event: end")


async def _feed_sent(server: CtxbenchServer, run_id: str, n: int) -> bool:
    feed = server.dispatcher.events._feeds.get(run_id)
    return feed is not None and len(feed.seen) == n


@pytest.mark.timing
@pytest.mark.parametrize("settings_overrides", [{"db_pool_size": 1}])
async def test_agents_go_through_while_browsers_hold_every_connection(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    (a,) = await agents(make_agent, 1)
    run = await post(http, {"machine_id": a.agent_id, "items": [PIPE, PIPE]})
    start = (await a.expect("start_run")).start_run
    async with contextlib.AsyncExitStack() as held:
        for _ in range(3):  # pool 1 + overflow 2: every REST connection held (slow requests, say)
            s = await held.enter_async_context(server.sessionmaker())
            await s.execute(text("SELECT 1"))
        with pytest.raises(httpx.TimeoutException):
            await http.get("/api/v1/machines", timeout=1.0)  # REST waits for a connection
        async with server.agent_sessionmaker() as s:
            seen = await s.scalar(select(Machine.last_seen).where(Machine.id == a.agent_id))
        t0 = time.monotonic()
        await a.report(run["id"], start.items[0])  # stored and acknowledged
        await a.send(pb.ConnectRequest(heartbeat=pb.Heartbeat(current_run_id=run["id"])))

        async def touched() -> bool:
            async with server.agent_sessionmaker() as s:
                now = await s.scalar(select(Machine.last_seen).where(Machine.id == a.agent_id))
            return bool(now and seen and now > seen)

        await eventually(touched, within=3)
        assert time.monotonic() - t0 < 3
    assert (await http.get(f"/api/v1/runs/{run['id']}")).json()["progress"]["done"] == 1


ROOT = Path(__file__).resolve().parents[2]
AGENT_BIN = ROOT / "build" / "bin" / "ctxbench-agent"


@pytest.mark.parametrize("settings_overrides", [{"db_pool_size": 1, "heartbeat_interval_s": 1}])
async def test_real_agent_keeps_its_stream_while_browsers_hold_every_connection(
    http: httpx.AsyncClient, server: CtxbenchServer, tmp_path: Path
) -> None:
    """The real agent (`make build`): with every REST connection held, its heartbeats and its report
    still reach the database, so it is never taken for silent and dropped (before: 37 s offline)."""
    assert AGENT_BIN.exists(), f"{AGENT_BIN} is missing: run `make build`"
    assert server.tls is not None and server.tls.ca_path is not None
    token_file = tmp_path / "agent-token"
    token_file.write_text(TOKEN)
    log = (tmp_path / "agent.log").open("wb")
    proc = await asyncio.create_subprocess_exec(
        str(AGENT_BIN),
        *("--server", f"127.0.0.1:{server.grpc_port}", "--token-file", str(token_file)),
        *("--ca-file", str(server.tls.ca_path), "--kernels", str(ROOT / "build" / "kernels")),
        *("--spool", str(tmp_path / "spool"), "--name", "real-agent"),
        stdout=log,
        stderr=log,
    )
    try:
        await eventually(lambda: _online(server), within=30)
        (machine_id,) = server.hub.online_ids()
        run = await post(
            http,
            {
                "machine_id": machine_id,
                "items": [{"kernel": "syscall.getppid"}],
                "repetitions": 2,
                "min_time_s": 0.05,
                "launches": 1,
            },
        )
        conn = server.hub.get(machine_id)
        assert conn is not None
        async with contextlib.AsyncExitStack() as held:
            for _ in range(3):  # pool 1 + overflow 2: every REST connection held
                s = await held.enter_async_context(server.sessionmaker())
                await s.execute(text("SELECT 1"))
            with pytest.raises(httpx.TimeoutException):
                await http.get("/api/v1/machines", timeout=1.0)
            async with server.agent_sessionmaker() as s:
                seen = await s.scalar(select(Machine.last_seen).where(Machine.id == machine_id))

            async def measured_and_touched() -> bool:
                async with server.agent_sessionmaker() as s:
                    stored = await s.scalar(select(Result.id).where(Result.run_id == run["id"]))
                    now = await s.scalar(select(Machine.last_seen).where(Machine.id == machine_id))
                return stored is not None and bool(now and seen and now > seen)

            await eventually(measured_and_touched, within=30)
            await asyncio.sleep(4)  # over 3 heartbeat intervals: a stalled stream would be closed by now
            assert server.hub.get(machine_id) is conn and not conn.closed
        r = await http.get(f"/api/v1/runs/{run['id']}")
        assert r.json()["status"] == "succeeded", r.text
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 10)
        log.close()


async def _online(server: CtxbenchServer) -> bool:
    return len(server.hub.online_ids()) == 1
