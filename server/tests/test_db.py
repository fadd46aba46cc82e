"""Migrations match the models, and SQLite connections get their pragmas."""

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from ctxbench_server.db import create_engine, migrate
from ctxbench_server.models import Base


async def test_migrations_match_models_and_pragmas(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
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
            assert (await conn.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
            assert (await conn.execute(text("PRAGMA foreign_keys"))).scalar() == 1
            assert (await conn.execute(text("PRAGMA busy_timeout"))).scalar() == 5000
            assert (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar() == "0002"
            indexes = {
                r[1] for r in await conn.execute(text("SELECT * FROM sqlite_master WHERE type = 'index'"))
            }
            assert {
                "ix_runs_machine_status_created",
                "ix_runs_machine_status_queued",
                "ix_runs_batch_id",
                "ix_results_kernel_machine_params",
            } <= indexes
    finally:
        await engine.dispose()
