"""Engine, sessions and migrations. SQLite gets WAL, foreign keys and a busy timeout on every connection."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from alembic import command
from alembic.config import Config
from fastapi import Depends, Request
from sqlalchemy import event, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from ctxbench_server.sql import json_once
from ctxbench_server.sql.one_writer import OneWriterSession, one_writer_kwargs, write_gate

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
MIGRATION_LOCK = (
    0x63747862656E6368  # "ctxbench": servers starting at once on PostgreSQL migrate one at a time
)


def create_engine(url: str, pool_size: int | None = None) -> AsyncEngine:
    """`pool_size` connections kept, twice as many more opened under load (SQLAlchemy's 5 + 10 when None)."""
    sizes = {} if pool_size is None else {"pool_size": pool_size, "max_overflow": 2 * pool_size}
    engine = create_async_engine(
        url, pool_pre_ping=not url.startswith("sqlite"), json_serializer=json_once.serialize, **sizes
    )
    if engine.dialect.name == "sqlite":
        private_file(engine.url.database)

        @event.listens_for(engine.sync_engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=5000")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

    return engine


def private_file(database: str | None) -> None:
    """The SQLite file readable by its owner only (0600, like the secrets beside it): it holds token and
    session digests and every host's facts. SQLite creates the -wal and -shm files with the database
    file's mode."""
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    os.close(os.open(database, os.O_CREAT | os.O_WRONLY, 0o600))
    os.chmod(database, 0o600)  # a file made before this rule


def is_data_error(exc: BaseException) -> bool:
    """A value the database refused (SQLSTATE class 22: a NUL character or an over-long string on
    PostgreSQL, a number out of range), as opposed to a fault of the database or of the server."""
    if not isinstance(exc, DBAPIError):
        return False
    orig = getattr(exc.orig, "driver_exception", exc.orig)  # asyncpg's own error under SQLAlchemy's
    return str(getattr(orig, "sqlstate", "") or "").startswith("22")


def create_sessionmaker(
    engine: AsyncEngine, share_writes_with: async_sessionmaker[AsyncSession] | None = None
) -> async_sessionmaker[AsyncSession]:
    """On SQLite its sessions write one at a time, waiting their turn (sql/one_writer.py), with those of
    `share_writes_with` (another engine's maker on the same database file) too."""
    if engine.dialect.name == "sqlite":
        gate = write_gate(share_writes_with) if share_writes_with is not None else None
        return async_sessionmaker(engine, expire_on_commit=False, **one_writer_kwargs(gate))
    return async_sessionmaker(engine, expire_on_commit=False)


@asynccontextmanager
async def writing(sessionmaker: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """A session that is going to write. On SQLite it takes the write gate before its first statement,
    so while it waits its turn it holds no pooled connection (a session that reads first and writes
    later waits for the gate holding the connection its reads checked out: a burst of those starves
    every reader of the pool). Its reads then run under the gate too. It must not open a second session
    that writes before this one's transaction ends: that one would wait for this one's gate."""
    async with sessionmaker() as session:
        if isinstance(session, OneWriterSession):
            await session.before_write()
        yield session


def alembic_config(url: str | None = None) -> Config:
    """An Alembic config built in code: works from a source checkout and from an installed package."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


async def migrate(engine: AsyncEngine) -> None:
    """`alembic upgrade head` on the engine's database, inside this event loop."""

    def upgrade(conn: Connection) -> None:
        cfg = alembic_config()
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")

    async with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK})
        await conn.run_sync(upgrade)


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    sessionmaker: async_sessionmaker[AsyncSession] = request.app.state.sessionmaker
    async with sessionmaker() as session:
        yield session


SessionDep = Annotated[AsyncSession, Depends(get_session)]
