"""Housekeeping of runs and batches: a person's title and note, and deleting finished ones with their
results. Every change is one INFO line on the `ctxbench.audit` logger (who, what)."""

from __future__ import annotations

import logging

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.compare import latest
from ctxbench_server.errors import Conflict, NotFound
from ctxbench_server.machines.service import drop_empty_batches
from ctxbench_server.models import FINISHED_RUN, Batch, LatestResult, Result, Run
from ctxbench_server.runs.schemas import BatchInfo, TitleNotePatch

audit = logging.getLogger("ctxbench.audit")


def _apply(target: Run | Batch, patch: TitleNotePatch) -> list[str]:
    """Sets the fields the patch gives ("" clears, like null); the names of those it changed."""
    changed: list[str] = []
    for field in ("name", "note"):
        if field in patch.model_fields_set:
            value = getattr(patch, field) or None
            if getattr(target, field) != value:
                setattr(target, field, value)
                changed.append(field)
    return changed


async def patch_run(session: AsyncSession, run_id: str, patch: TitleNotePatch, who: str) -> None:
    run = await session.get(Run, run_id, populate_existing=True)
    if run is None:
        raise NotFound(f"run {run_id!r} not found")
    changed = _apply(run, patch)
    await session.commit()
    if changed:
        audit.info("run %s: %s set by %s", run_id, " and ".join(changed), who)


async def batch_info(session: AsyncSession, batch_id: str) -> BatchInfo:
    rows = (
        await session.execute(
            select(Run.id, Run.machine_id).where(Run.batch_id == batch_id).order_by(Run.created_at, Run.id)
        )
    ).all()
    if not rows:
        raise NotFound(f"batch {batch_id!r} not found")
    b = await session.get(Batch, batch_id, populate_existing=True)
    return BatchInfo(
        id=batch_id,
        name=b.name if b else None,
        note=b.note if b else None,
        run_ids=[r for r, _ in rows],
        machine_ids=list(dict.fromkeys(m for _, m in rows)),
    )


async def patch_batch(session: AsyncSession, batch_id: str, patch: TitleNotePatch, who: str) -> None:
    await batch_info(session, batch_id)  # 404 for a batch without runs
    b = await session.get(Batch, batch_id, populate_existing=True)
    if b is None:
        b = Batch(id=batch_id)
        session.add(b)
    changed = _apply(b, patch)
    await session.commit()
    if changed:
        audit.info("batch %s: %s set by %s", batch_id, " and ".join(changed), who)


async def delete_runs(session: AsyncSession, run_ids: list[str], what: str, who: str) -> None:
    """Deletes finished runs with their items and results (the database cascades), moves each latest
    pointer those results held back to the newest result left, and drops batch names left without
    runs. Refused (409) when one of them is queued or running: cancel it first."""
    runs = list(await session.scalars(select(Run).where(Run.id.in_(run_ids))))
    busy = [r for r in runs if r.status not in FINISHED_RUN]
    if busy:
        raise Conflict(f"{what}: run {busy[0].id!r} is {busy[0].status}: cancel it first")
    results = select(Result.id).where(Result.run_id.in_(run_ids))
    n_results = await session.scalar(select(func.count()).where(Result.run_id.in_(run_ids)))
    # The compare defaults these results are: after the delete, the newest result left takes over.
    held = (
        await session.execute(
            select(LatestResult.machine_id, LatestResult.kernel_id, LatestResult.params_key).where(
                LatestResult.result_id.in_(results)
            )
        )
    ).all()
    batch_ids = list({r.batch_id for r in runs})
    await session.execute(delete(Run).where(Run.id.in_(run_ids)))
    await session.flush()
    rows = []
    for machine_id, kernel_id, params_key in held:
        newest = (
            await session.execute(
                select(Result.id, Result.created_at)
                .where(
                    Result.machine_id == machine_id,
                    Result.kernel_id == kernel_id,
                    Result.params_key == params_key,
                    Result.status == "ok",
                )
                .order_by(Result.created_at.desc())
                .limit(1)
            )
        ).first()
        if newest is not None:
            rows.append(
                {
                    "machine_id": machine_id,
                    "kernel_id": kernel_id,
                    "params_key": params_key,
                    "result_id": newest.id,
                    "created_at": newest.created_at,
                }
            )
    if rows:
        await session.execute(latest.upsert(session.get_bind().dialect.name, rows))
    await drop_empty_batches(session, batch_ids)
    await session.commit()
    audit.info("%s deleted by %s: %d runs, %d results", what, who, len(runs), n_results or 0)


async def delete_run(session: AsyncSession, run_id: str, who: str) -> None:
    if await session.get(Run, run_id) is None:
        raise NotFound(f"run {run_id!r} not found")
    await delete_runs(session, [run_id], f"run {run_id}", who)


async def delete_batch(session: AsyncSession, batch_id: str, who: str) -> None:
    info = await batch_info(session, batch_id)
    await delete_runs(session, info.run_ids, f"batch {batch_id}", who)
