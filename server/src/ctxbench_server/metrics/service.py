"""What GET /metrics reports, read from the database in four queries: agents online, machines by status,
runs by status, and each machine's newest result per kernel and parameter point (latest_results, the
table compare reads: one row per point, no scan of the results' history).

The points are capped at MAX_POINTS (in machine, kernel, parameter order); `ctxbench_result_points_dropped`
says how many were left out, so a scrape never grows without bound with the fleet."""

from __future__ import annotations

from collections.abc import Container

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.metrics.exposition import Gauge, render
from ctxbench_server.models import LatestResult, Machine, MachineStatus, Result, Run, RunStatus

# Two series per point (median, timestamp), each line a few hundred bytes at most: a scrape stays a few MB.
MAX_POINTS = 10_000


async def exposition(session: AsyncSession, online: Container[str]) -> bytes:
    return render(await families(session, online, MAX_POINTS))


async def families(session: AsyncSession, online: Container[str], max_points: int) -> list[Gauge]:
    agents = Gauge("ctxbench_agents_online", "Machines whose agent has a stream open to the server.")
    machines = Gauge(
        "ctxbench_machines", "Machines known to the server, by status (active, pending, revoked)."
    )
    by_status = {s.value: 0 for s in MachineStatus}
    up = 0
    for mid, status in await session.execute(select(Machine.id, Machine.status)):
        by_status[status] = by_status.get(status, 0) + 1
        up += mid in online
    agents.add(up)
    for status, n in by_status.items():
        machines.add(n, status=status)

    runs = Gauge("ctxbench_runs", "Runs stored, by status (queued, running, succeeded, failed, cancelled).")
    counts = {s.value: 0 for s in RunStatus}
    for status, n in await session.execute(select(Run.status, func.count()).group_by(Run.status)):
        counts[status] = n
    for status, n in counts.items():
        runs.add(n, status=status)

    median = Gauge(
        "ctxbench_result_median",
        "Median of the newest successful result of a kernel at a parameter point on a machine, in `unit`.",
    )
    measured = Gauge(
        "ctxbench_result_timestamp_seconds",
        "When that result was stored (Unix time): how old the median beside it is.",
        unit="seconds",
    )
    points = (
        select(LatestResult.machine_id, LatestResult.kernel_id, LatestResult.params_key)
        .join(Result, Result.id == LatestResult.result_id)
        .join(Machine, Machine.id == LatestResult.machine_id)
        .where(Result.median.is_not(None))
    )
    rows = await session.execute(
        points.add_columns(Machine.name, Result.unit, Result.median, Result.created_at)
        .order_by(LatestResult.machine_id, LatestResult.kernel_id, LatestResult.params_key)
        .limit(max_points)
    )
    shown = 0
    for mid, kernel, params, name, unit, value, created in rows:
        labels = {"machine_id": mid, "machine": name, "kernel": kernel, "params": params, "unit": unit}
        median.add(float(value), **labels)
        measured.add(created.timestamp(), **labels)
        shown += 1
    left_out = 0
    if shown == max_points:  # counted only when the budget was reached
        left_out = (await session.scalar(select(func.count()).select_from(points.subquery()))) or 0
        left_out -= shown
    dropped = Gauge(
        "ctxbench_result_points_dropped",
        f"Result points left out of this exposition, which shows at most {max_points}.",
    )
    dropped.add(left_out)
    return [agents, machines, runs, median, measured, dropped]
