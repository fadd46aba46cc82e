"""Runs: validate against the machine's catalog, expand sweeps, store; read back with progress."""

from __future__ import annotations

import itertools
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from ctxbench_server.kit.errors import NotFound, ValidationFailed, field_error
from ctxbench_server.kit.params import ParamError, check_value, defaults, params_by_name
from ctxbench_server.machines.service import catalog
from ctxbench_server.models import ItemState, Machine, Result, Run, RunItem, RunStatus
from ctxbench_server.runs.schemas import MAX_ITEMS, Progress, ResultOut, RunCreate, RunItemOut, RunOut

# Kernels' own defaults when a run leaves these unset (used only to size the item timeout).
ASSUMED_REPETITIONS = 10
ASSUMED_MIN_TIME_S = 0.5


def item_timeout_s(repetitions: int | None, min_time_s: float | None, floor_s: float) -> float:
    """Generous: a repetition may take many times min_time_s while the harness calibrates."""
    reps = repetitions or ASSUMED_REPETITIONS
    mt = min_time_s or ASSUMED_MIN_TIME_S
    return float(max(floor_s, 20 * reps * mt + 60))


def expand(body: RunCreate, machine_catalog: dict[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(kernel id, typed params with defaults) per item, sweeps expanded. Raises ValidationFailed."""
    errors: list[dict[str, Any]] = []
    out: list[tuple[str, dict[str, Any]]] = []
    for i, item in enumerate(body.items):
        base: list[str | int] = ["body", "items", i]
        spec = machine_catalog.get(item.kernel)
        if spec is None:
            errors.append(
                field_error(
                    [*base, "kernel"],
                    f"unknown kernel {item.kernel!r}: not in the catalog of machine {body.machine_id!r}",
                    "unknown_kernel",
                )
            )
            continue
        by_name = params_by_name(spec)
        fixed = defaults(spec)
        for name, value in item.params.items():
            if name not in by_name:
                errors.append(_unknown_param([*base, "params", name], item.kernel, by_name))
                continue
            try:
                fixed[name] = check_value(value, by_name[name])
            except ParamError as e:
                errors.append(field_error([*base, "params", name], e.msg, e.type))
        axes: list[tuple[str, list[Any]]] = []
        for name, values in (item.sweep or {}).items():
            loc: list[str | int] = [*base, "sweep", name]
            if name not in by_name:
                errors.append(_unknown_param(loc, item.kernel, by_name))
                continue
            if not values:
                errors.append(field_error(loc, "a sweep needs at least one value", "too_short"))
                continue
            checked = []
            for j, v in enumerate(values):
                try:
                    checked.append(check_value(v, by_name[name]))
                except ParamError as e:
                    errors.append(field_error([*loc, j], e.msg, e.type))
            axes.append((name, checked))
        if errors:
            continue
        points = 1
        for _, vs in axes:
            points *= len(vs)
        if len(out) + points > MAX_ITEMS:
            raise ValidationFailed(
                [
                    field_error(
                        ["body", "items"],
                        f"the sweeps expand to more than {MAX_ITEMS} items (item {i} alone adds {points})",
                        "too_many_items",
                    )
                ]
            )
        for combo in itertools.product(*(vs for _, vs in axes)):
            params = dict(fixed)
            params.update({name: v for (name, _), v in zip(axes, combo, strict=True)})
            out.append((item.kernel, params))
    if errors:
        raise ValidationFailed(errors)
    return out


def _unknown_param(loc: list[str | int], kernel: str, by_name: dict[str, Any]) -> dict[str, Any]:
    known = ", ".join(sorted(by_name)) or "none"
    return field_error(loc, f"unknown parameter for kernel {kernel!r} (known: {known})", "unknown_param")


async def create_run(session: AsyncSession, body: RunCreate, timeout_floor_s: float) -> Run:
    if await session.get(Machine, body.machine_id) is None:
        raise NotFound(f"machine {body.machine_id!r} not found")
    expanded = expand(body, await catalog(session, body.machine_id))
    timeout = item_timeout_s(body.repetitions, body.min_time_s, timeout_floor_s)
    run = Run(
        machine_id=body.machine_id,
        status=RunStatus.QUEUED,
        spec=body.model_dump(mode="json"),
        repetitions=body.repetitions,
        min_time_s=body.min_time_s,
    )
    run.items = [
        RunItem(index=i, kernel_id=k, params=p, state=ItemState.QUEUED, timeout_s=timeout)
        for i, (k, p) in enumerate(expanded)
    ]
    session.add(run)
    await session.commit()
    return run


async def load_run(session: AsyncSession, run_id: str) -> Run:
    run = await session.get(Run, run_id, options=[selectinload(Run.items)], populate_existing=True)
    if run is None:
        raise NotFound(f"run {run_id!r} not found")
    return run


def run_out(run: Run) -> RunOut:
    items = [
        RunItemOut(
            id=it.id,
            index=it.index,
            kernel=it.kernel_id,
            params=it.params,
            state=it.state,
            error=it.error,
            result_id=it.result_id,
            timeout_s=it.timeout_s,
        )
        for it in sorted(run.items, key=lambda it: it.index)
    ]
    return RunOut(
        id=run.id,
        machine_id=run.machine_id,
        status=run.status,
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
        error=run.error,
        repetitions=run.repetitions,
        min_time_s=run.min_time_s,
        facts=run.facts,
        items=items,
        progress=Progress(
            total=len(items),
            done=sum(1 for it in items if it.result_id is not None),
            failed=sum(1 for it in items if it.state == ItemState.FAILED),
            running=sum(1 for it in items if it.state == ItemState.RUNNING),
        ),
    )


async def list_runs(
    session: AsyncSession, machine_id: str | None, limit: int, status: RunStatus | None = None
) -> list[RunOut]:
    q = select(Run).options(selectinload(Run.items)).order_by(Run.created_at.desc(), Run.id).limit(limit)
    if machine_id:
        q = q.where(Run.machine_id == machine_id)
    if status:
        q = q.where(Run.status == status.value)
    return [run_out(r) for r in await session.scalars(q)]


async def list_results(session: AsyncSession, run_id: str) -> list[ResultOut]:
    if await session.get(Run, run_id) is None:
        raise NotFound(f"run {run_id!r} not found")
    q = (
        select(Result)
        .join(RunItem, RunItem.id == Result.item_id)
        .where(Result.run_id == run_id, Result.status == "ok")
        .order_by(RunItem.index, Result.created_at)
    )
    return [result_out(r) for r in await session.scalars(q)]


def result_out(r: Result) -> ResultOut:
    return ResultOut(
        id=r.id,
        run_id=r.run_id,
        item_id=r.item_id,
        machine_id=r.machine_id,
        kernel=r.kernel_id,
        status=r.status,
        params=r.params,
        params_key=r.params_key,
        unit=r.unit,
        n=r.n,
        median=r.median,
        mean=r.mean,
        stddev=r.stddev,
        cv=r.cv,
        min=r.min,
        max=r.max,
        ci_low=r.ci_low,
        ci_high=r.ci_high,
        ci_method=r.ci_method,
        samples=r.samples,
        iterations=r.iterations,
        counters=r.counters,
        harness=r.harness,
        started_at=r.started_at,
        finished_at=r.finished_at,
        created_at=r.created_at,
    )
