from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import event, make_url, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import NullPool

from ctxbench_server.app import create_app
from ctxbench_server.config import Settings
from ctxbench_server.db import alembic_config, create_engine, migrate
from ctxbench_server.dispatch.dispatcher import Dispatcher
from ctxbench_server.dispatch.hub import AgentHub
from ctxbench_server.main import CtxbenchServer
from ctxbench_server.push.budget import StreamBudget
from ctxbench_server.push.changes import Changes
from ctxbench_server.runs.events import RunEvents
from ctxbench_server.sql.one_writer import one_writer_kwargs

from .fake_agent import FakeAgent

TOKEN = "test-token-0123456789abcdef"
ADMIN_TOKEN = "test-admin-token-0123456789abcdef"
ADMIN = {"authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    """Override per test with @pytest.mark.parametrize("settings_overrides", [{...}])."""
    return {}


def with_database(url: str, name: str) -> str:
    """The URL of another database on the same PostgreSQL server (the query, e.g. a socket dir, kept)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


# Set to e.g. postgresql+asyncpg://postgres@127.0.0.1:55432/ctxbench to run every server test on
# PostgreSQL instead of a fresh SQLite file (the database is wiped before each server starts);
# scripts/with-postgres.sh sets it to a private server of its own (`make test-server-pg`).
BASE_DATABASE_URL = os.environ.get("CTXBENCH_TEST_DATABASE_URL", "")
# Under pytest-xdist (`-n N`) each worker wipes and migrates a database of its own on that server.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
TEST_DATABASE_URL = (
    with_database(BASE_DATABASE_URL, f"{urlsplit(BASE_DATABASE_URL).path.strip('/')}_{WORKER}")
    if BASE_DATABASE_URL and WORKER
    else BASE_DATABASE_URL
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "timing: asserts how fast something answers; `make test-server` runs these after the parallel "
        "part, alone, so that other tests' load cannot fail them",
    )
    config.addinivalue_line(
        "markers",
        "server: boots a real server, through a `server` or `*_server` fixture or running_server() (set "
        "here) or as a process; `make check` leaves these out",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        code = getattr(getattr(item, "function", None), "__code__", None)
        fixtures = getattr(item, "fixturenames", ())
        if any(f == "server" or f.endswith("_server") for f in fixtures) or (
            code is not None and "running_server" in code.co_names
        ):
            item.add_marker(pytest.mark.server)


async def create_database(url: str) -> None:
    """CREATE DATABASE for `url` on its server unless it exists (from a connection to BASE_DATABASE_URL)."""
    name = urlsplit(url).path.strip("/")
    engine = create_async_engine(BASE_DATABASE_URL, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        async with engine.connect() as conn:
            q = text("SELECT 1 FROM pg_database WHERE datname = :n")
            if (await conn.execute(q, {"n": name})).scalar() is None:
                await conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        await engine.dispose()


@pytest.fixture(scope="session", autouse=True)
def _worker_database() -> None:
    if TEST_DATABASE_URL and TEST_DATABASE_URL != BASE_DATABASE_URL:
        asyncio.run(create_database(TEST_DATABASE_URL))


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
    else:
        await from_template(settings.db_url)
    srv = CtxbenchServer(settings)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


HEAD = ScriptDirectory.from_config(alembic_config()).get_current_head()
_TEMPLATE: list[Path] = []  # this process's migrated, empty SQLite file, made on first use


async def from_template(url: str) -> None:
    """A new SQLite database starts as a copy of one migrated once in this process: the server's own
    `alembic upgrade head` then finds it at the head revision and has nothing to do. A file that exists
    (a server restarted on its data dir) is left as it is. Migrations from nothing: test_db.py."""
    path = make_url(url).database
    if not path or path == ":memory:" or _exists(path):
        return
    if not _TEMPLATE:
        template = Path(tempfile.mkdtemp(prefix="ctxbench-migrated-")) / "ctxbench.db"
        atexit.register(shutil.rmtree, template.parent, True)
        engine = create_engine(f"sqlite+aiosqlite:///{template}")
        try:
            await migrate(engine)
        finally:
            await engine.dispose()  # the last connection closed: the WAL is in the file
        _TEMPLATE.append(template)
    _copy(_TEMPLATE[0], path)


def _exists(path: str) -> bool:
    return Path(path).exists()


def _copy(template: Path, path: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, path)


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


# ---------------------------------------------------------------- migrate once, roll back each test
# Tests of a service (and of a REST read served in-process) need a migrated database, not a server:
# `alembic upgrade head` runs once per test run (per xdist worker), and each test works inside one
# outer transaction that is rolled back after it, as full-stack-fastapi-template's tests do. Tests of
# the seams (gRPC streams, REST and SSE over sockets, several processes on one database) keep `server`.


@pytest.fixture(scope="session")
def migrated_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database at the head revision: a SQLite file of this run, or a PostgreSQL database of its own
    (never the one `server` wipes)."""
    if TEST_DATABASE_URL:
        url = with_database(TEST_DATABASE_URL, urlsplit(TEST_DATABASE_URL).path.strip("/") + "_rollback")
        asyncio.run(create_database(url))
        asyncio.run(wipe(url, drop=True))
    else:
        url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('migrated') / 'ctxbench.db'}"

    async def upgrade() -> None:
        engine = create_engine(url)
        try:
            await migrate(engine)
        finally:
            await engine.dispose()

    asyncio.run(upgrade())
    return url


@dataclass
class RolledBack:
    """One connection in a transaction that the test's end rolls back; `sessionmaker`'s sessions work in
    savepoints inside it, so their commits and rollbacks behave as on their own."""

    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]


@pytest.fixture
async def rolled_back(migrated_url: str) -> AsyncIterator[RolledBack]:
    engine = create_engine(migrated_url)
    sqlite = engine.dialect.name == "sqlite"
    if sqlite:
        # pysqlite begins transactions itself and would let a RELEASE commit the outer one: SQLAlchemy's
        # recipe for SAVEPOINT on SQLite hands BEGIN to SQLAlchemy.
        @event.listens_for(engine.sync_engine, "connect")
        def _autocommit(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None

        @event.listens_for(engine.sync_engine, "begin")
        def _begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN")

    async with engine.connect() as conn:
        outer = await conn.begin()
        sessionmaker = async_sessionmaker(
            bind=conn,
            expire_on_commit=False,
            join_transaction_mode="create_savepoint",
            **(one_writer_kwargs() if sqlite else {}),  # as the server's own sessions on SQLite
        )
        try:
            yield RolledBack(engine, sessionmaker)
        finally:
            try:
                await outer.rollback()
            except BaseException:
                # (a task of the test still running a query on it, say) the connection is dropped, so
                # that the database lets go of what it wrote: a later test never waits on those rows
                await conn.invalidate()
                raise
    await engine.dispose()


@pytest.fixture
def api_transport(settings: Settings, rolled_back: RolledBack) -> httpx.ASGITransport:
    """The server's FastAPI app in this process (no sockets, no agents, no background tasks) on the
    rolled-back database: for tests of what a REST route answers. Sockets, streams and agents are
    tested through `server`."""
    sm = rolled_back.sessionmaker
    hub = AgentHub()
    budget = StreamBudget(settings.max_sse_per_client, settings.max_sse_total)
    events = RunEvents(sm, budget=budget)
    app = create_app(settings, sm, hub, Dispatcher(hub, sm, events, sm), ADMIN_TOKEN)
    app.state.changes = events.changes = Changes(budget, sm)
    return httpx.ASGITransport(app=app)


@pytest.fixture
async def api(api_transport: httpx.ASGITransport) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the in-process app that sends the admin token."""
    async with httpx.AsyncClient(
        transport=api_transport, base_url="http://127.0.0.1", headers=ADMIN, timeout=10
    ) as client:
        yield client


@pytest.fixture
async def api_anon(api_transport: httpx.ASGITransport) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the in-process app without any credential."""
    async with httpx.AsyncClient(transport=api_transport, base_url="http://127.0.0.1", timeout=10) as client:
        yield client
