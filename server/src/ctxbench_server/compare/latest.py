"""The latest_results pointer: each machine's newest successful result per (kernel, params_key)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.models import LatestResult, Result
from ctxbench_server.stored import ResultStored


def upsert(dialect: str, rows: list[dict[str, Any]]) -> Any:
    """INSERT .. ON CONFLICT that moves a pointer only forward in time (a result delivered late from an
    agent's spool, created earlier, does not replace a newer one)."""
    ins = (postgresql if dialect == "postgresql" else sqlite).insert(LatestResult).values(rows)
    return ins.on_conflict_do_update(
        index_elements=["machine_id", "kernel_id", "params_key"],
        set_={"result_id": ins.excluded.result_id, "created_at": ins.excluded.created_at},
        where=LatestResult.created_at <= ins.excluded.created_at,
    )


async def record(session: AsyncSession, result: Result) -> None:
    """Called with a measured (status ok) result already added to the session."""
    await session.flush()
    row = {
        "machine_id": result.machine_id,
        "kernel_id": result.kernel_id,
        "params_key": result.params_key,
        "result_id": result.id,
        "created_at": result.created_at,
    }
    await session.execute(upsert(session.get_bind().dialect.name, [row]))


async def on_results_stored(session: AsyncSession, stored: Sequence[ResultStored]) -> None:
    """The "result stored" listener (stored.py), inside ingest's transaction: each measured result
    moves its pointer, in one statement (one row per pointer: PostgreSQL refuses to update a row twice
    in one statement, so of a batch's results for one pointer the newest is kept)."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in stored:
        if r.status != "ok":
            continue
        key = (r.machine_id, r.kernel_id, r.params_key)
        kept = rows.get(key)
        if kept is None or kept["created_at"] <= r.created_at:
            rows[key] = {
                "machine_id": r.machine_id,
                "kernel_id": r.kernel_id,
                "params_key": r.params_key,
                "result_id": r.result_id,
                "created_at": r.created_at,
            }
    if rows:
        await session.execute(_upsert_many(session.get_bind().dialect.name), list(rows.values()))


@functools.cache
def _upsert_many(dialect: str) -> Any:
    """upsert's statement for an executemany of rows: one statement whatever the number of rows, so
    SQLAlchemy compiles it once (a multi-VALUES statement is compiled again for each length)."""
    table = cast(Table, LatestResult.__table__)
    ins = (postgresql if dialect == "postgresql" else sqlite).insert(table)
    return ins.on_conflict_do_update(
        index_elements=["machine_id", "kernel_id", "params_key"],
        set_={"result_id": ins.excluded.result_id, "created_at": ins.excluded.created_at},
        where=table.c.created_at <= ins.excluded.created_at,
    )
