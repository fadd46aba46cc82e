"""A run's progress: its items counted (total, done, failed, running) and its launches (issue 27: launches
interleave round-robin over the items, so every item runs at once and none finishes before the last
round; progress moves per launch). From items as read (run_out), as just inserted, or in SQL for a page
of the light list."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.models import ItemState, Run, RunItem
from ctxbench_server.runs.schemas import Progress, RunItemOut


def counted(run: Run, items: list[dict[str, Any]]) -> tuple[Progress, list[str]]:
    """The progress and kernels of a run from its item rows as just inserted (nothing launched yet)."""
    progress = Progress(
        total=len(items),
        done=sum(1 for it in items if it["result_id"] is not None),
        failed=sum(1 for it in items if it["state"] == ItemState.FAILED),
        running=sum(1 for it in items if it["state"] == ItemState.RUNNING),
        launches_planned=len(items) * planned_launches(run),
    )
    return progress, list(dict.fromkeys(it["kernel_id"] for it in items))


OPEN_ITEM = (ItemState.QUEUED, ItemState.RUNNING)


def planned_launches(run: Run) -> int:
    """Launches each item of the run takes as planned (runs stored before launches: one process)."""
    return run.launches or 1


def count_launches(run: Run, items: list[RunItemOut]) -> None:
    """Each item's launches_planned as the API says it: an open item's as its agent last told it (else the
    run's plan), never below what it has done; a finished item's, the launches it ran."""
    planned = planned_launches(run)
    for it in items:
        if it.state in OPEN_ITEM:
            it.launches_planned = max(it.launches_planned or planned, it.launches_done)
        else:
            it.launches_planned = it.launches_done


def items_progress(items: list[RunItemOut]) -> Progress:
    """The progress of a run's items (their launches_planned already counted: count_launches)."""
    return Progress(
        total=len(items),
        done=sum(1 for it in items if it.result_id is not None),
        failed=sum(1 for it in items if it.state == ItemState.FAILED),
        running=sum(1 for it in items if it.state == ItemState.RUNNING),
        launches_done=sum(it.launches_done for it in items),
        launches_planned=sum(it.launches_planned for it in items),
        launches_wall_s=sum(it.launches_wall_s for it in items),
        launch_at=max((it.launch_at for it in items if it.launch_at is not None), default=None),
    )


async def summaries(
    session: AsyncSession, runs: list[Run]
) -> tuple[dict[str, Progress], dict[str, list[str]]]:
    if not runs:
        return {}, {}
    is_open = RunItem.state.in_([s.value for s in OPEN_ITEM])
    # One pass over the page's items: per run and kernel, its counts and where it first appears; its
    # launches as count_launches counts them (an open item whose agent told no plan: the run's).
    q = (
        select(
            RunItem.run_id,
            RunItem.kernel_id,
            func.min(RunItem.index),
            func.count(),
            func.count(RunItem.result_id),
            func.count(case((RunItem.state == ItemState.FAILED, 1))),
            func.count(case((RunItem.state == ItemState.RUNNING, 1))),
            func.coalesce(func.sum(RunItem.launches_done), 0),
            func.coalesce(
                func.sum(
                    case((is_open, func.coalesce(RunItem.launches_planned, 0)), else_=RunItem.launches_done)
                ),
                0,
            ),
            func.count(case((and_(is_open, RunItem.launches_planned.is_(None)), 1))),
            func.coalesce(func.sum(RunItem.launches_wall_s), 0.0),
            func.max(RunItem.launch_at),
        )
        .where(RunItem.run_id.in_([r.id for r in runs]))
        .group_by(RunItem.run_id, RunItem.kernel_id)
    )
    planned_of = {r.id: planned_launches(r) for r in runs}
    progress: dict[str, Progress] = {}
    kernels: dict[str, list[tuple[int, str]]] = {}
    for (
        rid,
        kernel,
        first,
        total,
        done,
        failed,
        running,
        ldone,
        lplanned,
        untold,
        wall,
        at,
    ) in await session.execute(q):
        p = progress.setdefault(rid, Progress(total=0, done=0, failed=0, running=0))
        p.total += total
        p.done += done
        p.failed += failed
        p.running += running
        p.launches_done += ldone
        p.launches_planned += lplanned + untold * planned_of[rid]
        p.launches_wall_s += wall
        if at is not None and (p.launch_at is None or at > p.launch_at):
            p.launch_at = at
        kernels.setdefault(rid, []).append((first, kernel))
    return progress, {rid: [k for _, k in sorted(ks)] for rid, ks in kernels.items()}
