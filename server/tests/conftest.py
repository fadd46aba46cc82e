from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import text

from ctxbench_server.config import Settings
from ctxbench_server.db import alembic_config, create_engine
from ctxbench_server.main import CtxbenchServer

from .fake_agent import FakeAgent

TOKEN = "test-token-0123456789abcdef"
ADMIN_TOKEN = "test-admin-token-0123456789abcdef"
ADMIN = {"authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    """Override per test with @pytest.mark.parametrize("settings_overrides", [{...}])."""
    return {}


# Set to e.g. postgresql+asyncpg://postgres@127.0.0.1:55432/ctxbench to run every server test on
# PostgreSQL instead of a fresh SQLite file (the database is wiped before each server starts);
# scripts/with-postgres.sh sets it to a private server of its own (`make test-server-pg`).
TEST_DATABASE_URL = os.environ.get("CTXBENCH_TEST_DATABASE_URL", "")


def test_settings(root: Path, **overrides: Any) -> Settings:
    if TEST_DATABASE_URL:
        overrides.setdefault("database_url", TEST_DATABASE_URL)
    kw: dict[str, Any] = {
        "http_port": 0,
        "grpc_port": 0,
        "data_dir": root / "data",
        "frontend_dir": root / "frontend",
        "dist_dir": root / "dist",
        "agent_token": TOKEN,
        "admin_token": ADMIN_TOKEN,
        "log_level": "warning",
        **overrides,
    }
    return Settings(**kw)


test_settings.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


@contextlib.asynccontextmanager
async def running_server(settings: Settings) -> AsyncIterator[CtxbenchServer]:
    """The real server in this event loop, on ephemeral ports, with a fresh migrated database (a new
    SQLite file, or the PostgreSQL one wiped)."""
    if not settings.db_url.startswith("sqlite"):
        await wipe(settings.db_url)
    srv = CtxbenchServer(settings)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


HEAD = ScriptDirectory.from_config(alembic_config()).get_current_head()


async def wipe(url: str, *, drop: bool = False) -> None:
    """Empties the PostgreSQL database. At the head revision its tables are truncated (the server's
    migrations then have nothing to do: ~0.2 s, where dropping the schema and migrating from scratch
    takes ~0.5 s a test); at any other revision, or none, or with `drop`, the schema is dropped."""
    engine = create_engine(url)
    async with engine.begin() as conn:
        tables = list(await conn.scalars(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")))
        at_head = (
            not drop
            and "alembic_version" in tables
            and (await conn.scalar(text("SELECT version_num FROM alembic_version"))) == HEAD
        )
        if at_head:
            names = ", ".join(f'"{t}"' for t in tables if t != "alembic_version")
            await conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
        else:
            await conn.execute(text("DROP SCHEMA public CASCADE"))
            await conn.execute(text("CREATE SCHEMA public"))
    await engine.dispose()


@pytest.fixture
def settings(tmp_path: Path, settings_overrides: dict[str, Any]) -> Settings:
    return test_settings(tmp_path, **settings_overrides)


@pytest.fixture
async def server(settings: Settings) -> AsyncIterator[CtxbenchServer]:
    async with running_server(settings) as srv:
        yield srv


@pytest.fixture
async def http(server: CtxbenchServer) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the real server that sends the admin token."""
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{server.http_port}", headers=ADMIN, timeout=10
    ) as client:
        yield client


@pytest.fixture
async def anon(server: CtxbenchServer) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the real server without any credential."""
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.http_port}", timeout=10) as client:
        yield client


@pytest.fixture
async def make_agent(server: CtxbenchServer) -> AsyncIterator[Callable[..., FakeAgent]]:
    agents: list[FakeAgent] = []

    credentials: dict[str, str] = {}
    root_ca = server_ca(server)

    def make(**kw: object) -> FakeAgent:
        kw.setdefault("token", TOKEN)
        kw.setdefault("credentials", credentials)
        kw.setdefault("root_ca", root_ca)
        agent = FakeAgent(f"127.0.0.1:{server.grpc_port}", **kw)  # type: ignore[arg-type]
        agents.append(agent)
        return agent

    yield make
    for a in agents:
        await a.close()


def server_ca(server: CtxbenchServer) -> bytes | None:
    """The CA PEM agents of this server trust; None when it serves plaintext (grpc_tls=false)."""
    tls = server.tls
    if tls is None:
        return None
    if tls.ca_path is not None:
        return tls.ca_path.read_bytes()
    return tls.cert_chain_pem


async def eventually(check: Callable[[], Awaitable[bool]], within: float = 5.0) -> None:
    """Waits for a condition the server reaches asynchronously (after a stream closes, say)."""
    deadline = asyncio.get_running_loop().time() + within
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)
