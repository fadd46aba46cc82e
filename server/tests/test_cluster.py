"""Several server processes on one PostgreSQL (cluster.py), seen from one real server: another process is
played by plain connections to the same database (its locks, its NOTIFYs). On SQLite there is one server:
no cluster, the machine lock is the process's own, and `online` is this process's streams.
tests/multiserver runs two real server processes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
import grpc
import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from ctxbench_server import cluster
from ctxbench_server.cluster import RELEASE_CHANNEL, advisory_key, presence_key
from ctxbench_server.db import create_engine
from ctxbench_server.main import CtxbenchServer

from .conftest import TEST_DATABASE_URL, eventually
from .runs_helpers import MakeAgent


@pytest.fixture
async def elsewhere() -> AsyncIterator[AsyncEngine | None]:
    """Connections of "another server process" (PostgreSQL only)."""
    if not TEST_DATABASE_URL:
        yield None
        return
    engine = create_engine(TEST_DATABASE_URL)
    yield engine
    await engine.dispose()


async def _raw(engine: AsyncEngine) -> asyncpg.Connection:
    _, kw = engine.dialect.create_connect_args(engine.url)
    kw.pop("prepared_statement_cache_size", None)
    return await asyncpg.connect(**kw)


async def test_a_machine_lock_holds_the_machine_in_every_transaction_under_it(
    server: CtxbenchServer, elsewhere: AsyncEngine | None
) -> None:
    if elsewhere is None:
        assert server.hub.cluster is None  # one server: its lock is its own
        async with server.hub.locks["m-1"]:
            assert server.hub.locks["m-1"].locked()
        return
    key = advisory_key("machine", "m-1")

    async def free_elsewhere() -> bool:
        async with elsewhere.connect() as conn:
            got = await conn.scalar(text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": key})
            await conn.rollback()
            return bool(got)

    assert await free_elsewhere()
    async with server.hub.locks["m-1"]:
        async with server.agent_sessionmaker() as session:
            await session.execute(text("SELECT 1"))
            assert not await free_elsewhere()  # another process's change of m-1 waits
            await session.commit()
            assert await free_elsewhere()  # it ends with the transaction
            await session.execute(text("SELECT 1"))
            assert not await free_elsewhere()  # and the next transaction under the lock takes it again
    async with server.agent_sessionmaker() as session:
        await session.execute(text("SELECT 1"))
        assert await free_elsewhere()


async def test_one_server_process_serves_a_machine_at_a_time(
    server: CtxbenchServer,
    make_agent: MakeAgent,
    http: httpx.AsyncClient,
    elsewhere: AsyncEngine | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a = make_agent()
    await a.connect()

    async def online() -> bool:
        machines = (await http.get("/api/v1/machines")).json()
        return any(m["id"] == a.agent_id and m["online"] for m in machines)

    assert await online()
    if elsewhere is None:
        await a.close()
        await eventually(lambda: _not(online))
        return

    other = await _raw(elsewhere)
    released: asyncio.Queue[str] = asyncio.Queue()
    await other.add_listener(RELEASE_CHANNEL, lambda *args: released.put_nowait(args[3]))
    key = presence_key(a.agent_id)

    async def held_here() -> bool:
        return server.cluster.holds(a.agent_id)

    try:
        await eventually(held_here)
        assert not await other.fetchval("SELECT pg_try_advisory_lock($1)", key)  # this server holds it
        # Another process got a newer stream of the machine: this one lets go at once.
        await other.execute(
            "SELECT pg_notify($1, $2)", RELEASE_CHANNEL, json.dumps({"from": "x", "ids": [a.agent_id]})
        )
        with pytest.raises(EOFError):
            await a.next(5)

        async def taken() -> bool:
            return bool(await other.fetchval("SELECT pg_try_advisory_lock($1)", key))

        await eventually(taken)
        assert await online()  # served by "the other process": online here too

        # The agent comes back here while the other process will not let go: it is asked to, then the
        # stream is refused (the agent retries).
        monkeypatch.setattr(cluster, "CLAIM_WAIT_S", 0.5)
        await a.connect()
        asked = json.loads(await asyncio.wait_for(released.get(), 5))
        if asked["from"] == "x":  # the one this test sent
            asked = json.loads(await asyncio.wait_for(released.get(), 5))
        assert asked == {"from": server.cluster.instance, "ids": [a.agent_id]}
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await a.next(5)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "another server" in (refused.value.details() or "")

        await other.fetchval("SELECT pg_advisory_unlock($1)", key)  # the other process let go
        await eventually(lambda: _not(online))
        await a.connect()

        await eventually(held_here)
        assert not await other.fetchval("SELECT pg_try_advisory_lock($1)", key)
        assert await online()

        # Revoked here: its stream on any other process ends too.
        r = await http.post(f"/api/v1/machines/{a.agent_id}/revoke")
        assert r.status_code == 200, r.text
        asked = json.loads(await asyncio.wait_for(released.get(), 5))
        assert asked == {"from": server.cluster.instance, "ids": [a.agent_id]}
    finally:
        await other.close()


async def _not(check: Callable[[], Awaitable[bool]]) -> bool:
    return not await check()
