"""The latest_results pointer: each machine's newest successful result per (kernel, params_key)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.models import LatestResult, Result


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
