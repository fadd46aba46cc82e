"""db.writing on SQLite: writers queue for the one write gate holding no pooled connection, so a burst
of them (a reconnect storm's Hellos) leaves the pool to readers (credential lookups, REST). A session
that reads first and only then writes waits for the gate holding the connection its read checked out:
the second test shows that starvation, which is why the burst paths open their sessions with writing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from ctxbench_server.db import create_sessionmaker, writing

POOL_TIMEOUT_S = 1.0


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    # Two connections and no overflow: the gate's holder has one, one is left for everyone else.
    eng = create_async_engine(
        f"sqlite+aiosqlite:///{tmp_path / 'q.db'}", pool_size=2, max_overflow=0, pool_timeout=POOL_TIMEOUT_S
    )
    async with eng.begin() as conn:
        await conn.execute(text("PRAGMA journal_mode=WAL"))  # as the server's (db.create_engine)
        await conn.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT)"))
    yield eng
    await eng.dispose()


async def read_then_write(maker: async_sessionmaker[AsyncSession], who: str, *, gate_first: bool) -> None:
    opened = writing(maker) if gate_first else maker()
    async with opened as session:
        await session.execute(text("SELECT count(*) FROM t"))  # e.g. the catalog a Hello compares
        await session.execute(text("INSERT INTO t (who) VALUES (:w)"), {"w": who})
        await session.commit()


async def a_read(maker: async_sessionmaker[AsyncSession]) -> int:
    async with maker() as session:
        return int(await session.scalar(text("SELECT count(*) FROM t")) or 0)


async def burst_while_gate_held(engine: AsyncEngine, *, gate_first: bool) -> tuple[BaseException | int, int]:
    """Holds the gate in one session, queues 5 read-then-write sessions behind it, then reads on the
    side; returns what the read got (or raised) and how many rows the queued writers stored in the end."""
    maker = create_sessionmaker(engine)
    async with writing(maker) as holder:
        await holder.execute(text("INSERT INTO t (who) VALUES ('holder')"))
        queued = [
            asyncio.create_task(read_then_write(maker, f"w{i}", gate_first=gate_first)) for i in range(5)
        ]
        await asyncio.sleep(0.2)  # every writer has reached its wait
        read: BaseException | int
        try:
            read = await a_read(maker)
        except Exception as exc:  # the pool's timeout
            read = exc
        await holder.commit()
    results = await asyncio.gather(*queued, return_exceptions=True)
    stored = sum(1 for r in results if r is None)
    return read, stored


async def test_writers_queued_with_writing_hold_no_connection(engine: AsyncEngine) -> None:
    read, stored = await burst_while_gate_held(engine, gate_first=True)
    assert read == 0  # answered at once (WAL: the holder's row is not committed yet)
    assert stored == 5  # every queued writer stored its row once the gate came free, in turn
    async with engine.connect() as conn:
        assert (await conn.scalar(text("SELECT count(*) FROM t"))) == 6


async def test_read_first_writers_starve_the_pool(engine: AsyncEngine) -> None:
    # Without writing: the first queued writer's read took the last connection and it waits for the gate
    # with it; the side read waits for a connection past the pool's timeout.
    read, _stored = await burst_while_gate_held(engine, gate_first=False)
    assert isinstance(read, Exception) and "QueuePool limit" in str(read)
