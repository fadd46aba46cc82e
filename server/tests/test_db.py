"""Migrations match the models and upgrade stored data, on SQLite and (CTXBENCH_TEST_DATABASE_URL) on
PostgreSQL; SQLite connections get their pragmas."""

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from ctxbench_server.db import alembic_config, create_engine, create_sessionmaker, migrate
from ctxbench_server.models import Base

from .conftest import TEST_DATABASE_URL, wipe


def upgrade(conn: Connection, rev: str) -> None:
    """Migrates to `rev` only (run_sync on an AsyncConnection): the tests store rows as older servers did."""
    cfg = alembic_config()
    cfg.attributes["connection"] = conn
    command.upgrade(cfg, rev)


async def stored_at(conn: AsyncConnection, rev: str, run: dict[str, str]) -> str:
    """The database migrated to `rev` only, holding machine 'm' and its run 'r' as a server of that
    revision stored them (`run`: the run's other columns, as SQL literals); returns their timestamp."""
    await conn.run_sync(upgrade, rev)
    now = "2026-11-22 01:00:00.000000"
    await conn.execute(
        text(
            "INSERT INTO machines (id, name, hostname, agent_version, first_seen, last_seen, facts)"
            f" VALUES ('m', 'm', 'm', 'v', '{now}', '{now}', '{{}}')"
        )
    )
    row = {"id": "'r'", "machine_id": "'m'", **run, "created_at": f"'{now}'"}
    await conn.execute(text(f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join(row.values())})"))
    return now


async def fresh_engine(tmp_path: Path) -> AsyncEngine:
    """An empty database, without even the tables: the PostgreSQL one of the test run, its schema
    dropped, or a new SQLite file."""
    if TEST_DATABASE_URL:
        await wipe(TEST_DATABASE_URL, drop=True)
        return create_engine(TEST_DATABASE_URL)
    return create_engine(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")


async def test_migrations_match_models_and_pragmas(tmp_path: Path) -> None:
    engine = await fresh_engine(tmp_path)
    try:
        await migrate(engine)
        await migrate(engine)  # idempotent: a restart runs it again
        async with engine.connect() as conn:
            diff = await conn.run_sync(
                lambda c: compare_metadata(
                    MigrationContext.configure(c, opts={"compare_type": True}), Base.metadata
                )
            )
            assert diff == []
            if engine.dialect.name == "sqlite":
                assert (await conn.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
                assert (await conn.execute(text("PRAGMA foreign_keys"))).scalar() == 1
                assert (await conn.execute(text("PRAGMA busy_timeout"))).scalar() == 5000
            assert (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar() == "0020"

            def indexes_and_pk(c: Connection) -> tuple[set[str], list[str]]:
                insp = inspect(c)
                names = {i["name"] for t in insp.get_table_names() for i in insp.get_indexes(t)}
                return names, insp.get_pk_constraint("latest_results")["constrained_columns"]

            indexes, latest_pk = await conn.run_sync(indexes_and_pk)
            assert {
                "ix_runs_machine_status_created",
                "ix_runs_machine_status_queued",
                "ix_runs_batch_id",
                "ix_results_kernel_machine_params",
                "ix_latest_results_result_id",
                "ix_shares_created_at",
            } <= indexes
            # compare reads latest_results by its primary key (machine, kernel, params_key)
            assert latest_pk == ["machine_id", "kernel_id", "params_key"]
    finally:
        await engine.dispose()


async def test_0002_upgrades_stored_runs(tmp_path: Path) -> None:
    """Runs stored before batches become their own batch, queued when created; items and results keep
    (SQLite must not recreate the runs table: dropping it would cascade to both) and get defaults."""
    engine = await fresh_engine(tmp_path)

    try:
        async with engine.begin() as conn:
            now = await stored_at(conn, "0001", {"status": "'succeeded'", "spec": "'{}'"})
            await conn.execute(
                text(
                    'INSERT INTO run_items (id, run_id, "index", kernel_id, params, state, timeout_s)'
                    " VALUES ('i', 'r', 0, 'k', '{}', 'succeeded', 60)"
                )
            )
            await conn.execute(
                text(
                    "INSERT INTO results (id, run_id, item_id, machine_id, kernel_id, status, params,"
                    " params_key, unit, samples, iterations, counters, harness, n, exit_code, created_at)"
                    " VALUES ('x', 'r', 'i', 'm', 'k', 'ok', '{}', '', '', '[]', '[]', '{}', '{}', 0, 0,"
                    f" '{now}')"
                )
            )
        await migrate(engine)
        async with engine.connect() as conn:
            q = "SELECT batch_id, queued_at = created_at, profile FROM runs"
            assert tuple((await conn.execute(text(q))).one()) == ("r", True, "default")
            assert (await conn.execute(text("SELECT attempt FROM run_items"))).scalar() == 1
            res = (await conn.execute(text("SELECT attempt, reruns, noisy, attempt_cvs FROM results"))).one()
            cvs = json.loads(res[3]) if isinstance(res[3], str) else res[3]  # asyncpg decodes JSON
            assert (*res[:3], cvs) == (1, 0, False, [])
            # 0006: an old result has no launch data (one launch), and stays readable
            q = "SELECT sample_launches, launches, disturbance, agent_version FROM results"
            assert tuple((await conn.execute(text(q))).one()) == (None, None, None, None)
    finally:
        await engine.dispose()


async def test_0003_fills_latest_results(tmp_path: Path) -> None:
    """Results stored before 0003: the newest ok one per machine and point becomes the pointer."""
    engine = await fresh_engine(tmp_path)

    cols = (
        "id, run_id, item_id, machine_id, kernel_id, status, params, params_key, unit, samples, iterations,"
        " counters, harness, n, median, exit_code, created_at"
    )
    try:
        sqlite = engine.dialect.name == "sqlite"
        async with engine.begin() as conn:
            await stored_at(conn, "0002", {"batch_id": "'r'", "status": "'succeeded'", "spec": "'{}'"})
            await conn.execute(
                text(
                    'INSERT INTO run_items (id, run_id, "index", kernel_id, params, state, timeout_s)'
                    " VALUES ('i', 'r', 0, 'k', '{}', 'succeeded', 60)"
                )
            )
            for rid, status, median, t in (
                ("old", "ok", 1.0, "2026-11-22 01:00:01"),
                ("new", "ok", 2.0, "2026-11-22 01:00:02"),
                ("bad", "failed", None, "2026-11-22 01:00:03"),
            ):
                await conn.execute(
                    text(
                        f"INSERT INTO results ({cols}) VALUES (:id, 'r', 'i', 'm', 'k', :status, '{{}}', '',"
                        " 'ns/op', '[]', '[]', '{}', '{}', 1, :median, 0, :t)"
                    ),
                    # asyncpg binds a timestamp parameter only as a datetime; SQLite stores the text
                    {
                        "id": rid,
                        "status": status,
                        "median": median,
                        "t": t if sqlite else datetime.fromisoformat(t).replace(tzinfo=UTC),
                    },
                )
        await migrate(engine)
        async with engine.connect() as conn:
            rows = (
                await conn.execute(text("SELECT machine_id, kernel_id, result_id FROM latest_results"))
            ).all()
            assert [tuple(r) for r in rows] == [("m", "k", "new")]
    finally:
        await engine.dispose()


async def test_sqlite_writers_wait_their_turn_instead_of_failing(tmp_path: Path) -> None:
    """50 sessions that each hold the write lock across awaits for 0.15 s: together longer than the
    5 s busy timeout, so without one writer at a time the last ones failed with "database is locked"."""
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    sessionmaker = create_sessionmaker(engine)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"))

        async def writer() -> None:
            async with sessionmaker() as session:
                await session.execute(text("SELECT count(*) FROM t"))
                await session.execute(text("INSERT INTO t (v) VALUES ('x')"))
                await asyncio.sleep(0.15)  # a busy event loop, while this transaction holds the lock
                await session.execute(text("SELECT count(*) FROM t"))
                await session.commit()

        outcomes = await asyncio.gather(*(writer() for _ in range(50)), return_exceptions=True)
        assert [o for o in outcomes if o is not None] == []
        async with sessionmaker() as session:
            assert await session.scalar(text("SELECT count(*) FROM t")) == 50
            # a failed write gives the gate back: the next writer is not stuck behind it
            with pytest.raises(OperationalError):
                await session.execute(text("INSERT INTO nope VALUES (1)"))
        await asyncio.wait_for(writer(), 2)
    finally:
        await engine.dispose()


def test_new_ids_are_uuid4s_like_new_id() -> None:
    import uuid

    from ctxbench_server.models.base import new_id, new_ids

    ids = new_ids(2000)
    assert len(set(ids)) == 2000 and new_ids(0) == []
    for s in [*ids, new_id()]:
        u = uuid.UUID(s)
        assert str(u) == s and u.version == 4 and u.variant == uuid.RFC_4122


async def test_the_sqlite_file_is_private(tmp_path: Path) -> None:
    """0600 like the secrets beside it, its WAL too; a file made 0644 before this rule is tightened."""
    path = tmp_path / "ctxbench.db"
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    try:
        async with engine.begin() as conn:
            await conn.execute(text("CREATE TABLE t (x INTEGER)"))
            await conn.execute(text("INSERT INTO t VALUES (1)"))
        assert path.stat().st_mode & 0o777 == 0o600
        wal = tmp_path / "ctxbench.db-wal"
        assert wal.exists() and wal.stat().st_mode & 0o777 == 0o600
    finally:
        await engine.dispose()
    older = tmp_path / "older.db"
    older.touch(mode=0o644)
    older.chmod(0o644)
    await create_engine(f"sqlite+aiosqlite:///{older}").dispose()
    assert older.stat().st_mode & 0o777 == 0o600
