"""The explorer's push channel, GET /api/v1/events (push/changes.py): change events for machines, runs and
batches; auth as every read; the SSE budget; Last-Event-ID replay or resync; other server processes' news
through PostgreSQL (ctxbench_change, ctxbench_run). Real server, real sockets, real database."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import httpx
import pytest

from ctxbench_server.cluster import CHANGE_CHANNEL, RUN_CHANNEL
from ctxbench_server.main import CtxbenchServer

from .conftest import TEST_DATABASE_URL, eventually
from .runs_helpers import PIPE, MakeAgent, agents, finish, post

Event = tuple[str, str, dict[str, Any]]  # (event, id, data)


class Push:
    """One open push stream and the events read from it."""

    def __init__(self, resp: httpx.Response) -> None:
        self.resp = resp
        self.lines = aiter(resp.aiter_lines())
        self.retry = ""

    async def next(self, wait_s: float = 5.0) -> Event:
        event, id_ = "message", ""
        while True:
            line = await asyncio.wait_for(anext(self.lines), wait_s)
            if line.startswith("retry: "):
                self.retry = line[len("retry: ") :]
            elif line.startswith("event: "):
                event = line[len("event: ") :]
            elif line.startswith("id: "):
                id_ = line[len("id: ") :]
            elif line.startswith("data: "):
                return event, id_, json.loads(line[len("data: ") :])

    async def until(self, event: str, match: dict[str, Any], wait_s: float = 5.0) -> Event:
        """The first `event` whose data holds `match`, skipping others."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while True:
            got = await self.next(max(0.01, deadline - loop.time()))
            if got[0] == event and all(got[2].get(k) == v for k, v in match.items()):
                return got


@contextlib.asynccontextmanager
async def push(client: httpx.AsyncClient, **headers: str) -> AsyncIterator[Push]:
    async with client.stream("GET", "/api/v1/events", headers=headers) as resp:
        assert resp.status_code == 200, (await resp.aread()).decode()
        assert resp.headers["content-type"].startswith("text/event-stream")
        yield Push(resp)


def _seq(event_id: str) -> int:
    return int(event_id.split(".")[1])


async def opened(server: CtxbenchServer, n: int) -> bool:
    return len(server.changes.streams) == n


async def test_runs_and_machines_are_pushed(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    (a,) = await agents(make_agent, 1)
    async with push(http) as p:
        await eventually(lambda: opened(server, 1))
        run = await post(http, {"machine_id": a.agent_id, "items": [PIPE]})
        _, first_id, created = await p.until("run", {"id": run["id"]})
        assert created["machine_id"] == a.agent_id and created["batch_id"] == run["batch_id"]
        assert created["what"] == "created"  # a "changed" in the same flush (it started) does not hide it
        assert p.retry == "3000"
        start = (await a.expect("start_run")).start_run
        await finish(a, start)
        _, last_id, done = await p.until("run", {"id": run["id"], "status": "succeeded"})
        assert done["what"] == "changed"
        assert last_id.split(".")[0] == first_id.split(".")[0] == server.changes.instance
        assert _seq(last_id) > _seq(first_id)

        await a.close()
        await p.until("machine", {"id": a.agent_id, "what": "offline"})
        (b,) = await agents(make_agent, 1)
        await p.until("machine", {"id": b.agent_id, "what": "online"})
        r = await http.patch(f"/api/v1/machines/{b.agent_id}", json={"name": "renamed"})
        assert r.status_code == 200, r.text
        await p.until("machine", {"id": b.agent_id, "what": "renamed"})

        assert (await http.delete(f"/api/v1/runs/{run['id']}")).status_code == 204
        # (the CI filler may tell of the run's results first: a "changed" before it)
        _, _, gone = await p.until("run", {"id": run["id"], "what": "deleted"})
        assert gone["status"] is None
    await eventually(lambda: opened(server, 0))


async def test_a_reconnect_gets_what_it_missed_or_resync(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    (a,) = await agents(make_agent, 1)
    async with push(http) as keep:  # keeps the channel publishing while the other reconnects
        async with push(http) as p:
            await eventually(lambda: opened(server, 2))
            one = await post(http, {"machine_id": a.agent_id, "items": [PIPE]})
            _, seen, _ = await p.until("run", {"id": one["id"]})
        two = await post(http, {"machine_id": a.agent_id, "items": [PIPE]})  # queued behind `one`
        await keep.until("run", {"id": two["id"]})
        async with push(http, **{"last-event-id": seen}) as p:
            _, first, _ = await p.next()
            assert _seq(first) == _seq(seen) + 1  # the next one after it, from the replay log
            await p.until("run", {"id": two["id"], "what": "created"})
        for stale in (
            "another-process.7",
            "no-dot",
            f"{server.changes.instance}.x",
            f"{server.changes.instance}.9999",
        ):
            async with push(http, **{"last-event-id": stale}) as p:
                assert (await p.next())[0] == "resync", stale
        async with push(http, **{"last-event-id": f"{server.changes.instance}.0"}) as p:
            # nothing was dropped from the replay log yet: everything since the start
            assert (await p.next())[0] == "run"


async def test_reads_need_a_credential(anon: httpx.AsyncClient, http: httpx.AsyncClient) -> None:
    r = await anon.get("/api/v1/events")
    assert r.status_code == 401, r.text
    r = await anon.get("/api/v1/events", headers={"authorization": "Bearer wrong"})
    assert r.status_code == 401, r.text
    r = await http.get("/api/v1/events", headers={"last-event-id": "x" * 65})
    assert r.status_code == 422 and "last-event-id" in r.text


@pytest.mark.parametrize("settings_overrides", [{"public_read": True}])
async def test_public_read_opens_it_to_anyone(anon: httpx.AsyncClient, server: CtxbenchServer) -> None:
    async with push(anon):
        await eventually(lambda: opened(server, 1))


@pytest.mark.parametrize("settings_overrides", [{"max_sse_per_client": 2, "max_sse_total": 3}])
async def test_one_budget_with_run_streams(
    make_agent: MakeAgent, http: httpx.AsyncClient, anon: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    (a,) = await agents(make_agent, 1)
    run = await post(http, {"machine_id": a.agent_id, "items": [PIPE]})
    async with http.stream("GET", f"/api/v1/runs/{run['id']}/events") as resp:
        assert resp.status_code == 200
        async with push(http):
            r = await http.get("/api/v1/events")
            assert r.status_code == 429, r.text
            assert "CTXBENCH_MAX_SSE_PER_CLIENT (2)" in r.json()["detail"]
            assert r.headers["retry-after"] == "5"
            token = (await http.post("/api/v1/tokens", json={"name": "other", "scope": "read"})).json()
            other = {"authorization": f"Bearer {token['token']}"}
            async with push(anon, **other):
                r = await anon.get("/api/v1/events", headers=other)
                assert r.status_code == 503, r.text
                assert "CTXBENCH_MAX_SSE_TOTAL (3)" in r.json()["detail"]
    await eventually(lambda: opened(server, 0))
    assert server.changes.budget.open == 0


async def test_news_from_other_server_processes(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    """Another process's NOTIFYs (PostgreSQL) reach this one's streams; on SQLite there is one process,
    no cluster, and the same tokens go through the handler the cluster would call."""
    (a,) = await agents(make_agent, 1)
    run = await post(http, {"machine_id": a.agent_id, "items": [PIPE]})
    async with push(http) as p:
        await eventually(lambda: opened(server, 1))
        if TEST_DATABASE_URL:
            assert server.changes.cluster is not None
            conn = await asyncpg.connect(TEST_DATABASE_URL.replace("postgresql+asyncpg", "postgresql"))
            try:
                for channel, id_ in (
                    (CHANGE_CHANNEL, "machine:offline:m-elsewhere"),
                    (RUN_CHANNEL, run["id"]),
                ):
                    payload = json.dumps({"from": "another-process", "ids": [id_]})
                    await conn.execute("SELECT pg_notify($1, $2)", channel, payload)
            finally:
                await conn.close()
        else:
            assert server.changes.cluster is None
            server.changes.received("machine:offline:m-elsewhere")
            server.changes.received_run(run["id"])
        await p.until("machine", {"id": "m-elsewhere", "what": "offline"})
        _, _, data = await p.until("run", {"id": run["id"], "what": "changed"})
        assert data["status"] in ("queued", "running")
        server.changes.received("bogus")  # malformed tokens are ignored
        server.changes.resync()  # the listener connection came back: NOTIFYs may have been lost
        assert (await p.next())[0] == "resync"


# Pool: 2 kept + 4 overflow. Before issue 25's fix the credential lookup kept one pooled connection per
# open stream for the stream's life, so a handful of streams left every other request waiting 30 s.
@pytest.mark.parametrize(
    "settings_overrides", [{"max_sse_per_client": 100, "max_sse_total": 100, "db_pool_size": 2}]
)
@contextlib.asynccontextmanager
async def run_events(client: httpx.AsyncClient, run_id: str, **headers: str) -> AsyncIterator[None]:
    async with client.stream("GET", f"/api/v1/runs/{run_id}/events", headers=headers) as resp:
        assert resp.status_code == 200, (await resp.aread()).decode()
        yield


async def test_open_streams_hold_no_database_connection(
    make_agent: MakeAgent, http: httpx.AsyncClient, anon: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    """50 event streams (issue 25: 15 used to take every pooled connection for their whole life), push
    and run streams, half with a read token, half with a session cookie made from it."""
    (a,) = await agents(make_agent, 1)
    run = await post(http, {"machine_id": a.agent_id, "items": [PIPE]})
    token = (await http.post("/api/v1/tokens", json={"name": "reader", "scope": "read"})).json()["token"]
    bearer = {"authorization": f"Bearer {token}"}
    r = await anon.post("/api/v1/session", json={"token": token})
    assert r.status_code == 200, r.text
    cookie = {"cookie": f"ctxbench_session={r.cookies['ctxbench_session']}"}
    pool = server.engine.pool
    async with contextlib.AsyncExitStack() as stack:
        for i, headers in enumerate([bearer, cookie] * 25):
            # each returns once the 200 and its headers came: the stream is open
            stream = push(anon, **headers) if i < 26 else run_events(anon, run["id"], **headers)
            await stack.enter_async_context(stream)
        await eventually(lambda: opened(server, 26))
        # no stream keeps a connection of the pool (of 5, 10 more under load) for its life
        assert pool.checkedout() <= 2, pool.status()  # type: ignore[attr-defined]
        # so plain requests still get a connection at once (the pool timeout is 30 s)
        for headers in (bearer, cookie):
            r = await asyncio.wait_for(anon.get("/api/v1/machines", headers=headers), 10)
            assert r.status_code == 200, r.text
