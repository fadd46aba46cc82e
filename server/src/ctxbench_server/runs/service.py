"""Runs: validate against the machine's catalog, expand sweeps, store; read back with progress."""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import and_, case, func, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from ctxbench_server.config import Settings
from ctxbench_server.dispatch.dispatcher import load_run as load_run
from ctxbench_server.kit.errors import Conflict, NotFound, ValidationFailed, field_error
from ctxbench_server.kit.params import ParamError, check_value, defaults, params_by_name
from ctxbench_server.machines.service import catalogs as machine_catalogs
from ctxbench_server.models import ItemState, Machine, Result, Run, RunItem, RunStatus
from ctxbench_server.models.base import new_id, utcnow
from ctxbench_server.runs.schemas import (
    MAX_ITEMS,
    PROFILES,
    Progress,
    ResultOut,
    RunColumns,
    RunCreate,
    RunItemOut,
    RunOut,
)

# Kernels' own defaults when a run leaves these unset (used only to size the item timeout).
ASSUMED_REPETITIONS = 10
ASSUMED_MIN_TIME_S = 0.5


def item_timeout_s(repetitions: int | None, min_time_s: float | None, floor_s: float) -> float:
    """Generous: a repetition may take many times min_time_s while the harness calibrates."""
    reps = repetitions or ASSUMED_REPETITIONS
    mt = min_time_s or ASSUMED_MIN_TIME_S
    return float(max(floor_s, 20 * reps * mt + 60))


def thin(points: list[Any]) -> list[Any]:
    """Every other point, the first and the last kept (the quick profile's sweeps)."""
    kept = points[::2]
    if points and kept[-1] != points[-1]:
        kept.append(points[-1])
    return kept


# A 422 lists at most this many field errors (a body can hold ~100k bad values; the user fixes the first).
MAX_ERRORS = 100


class _Errors(list[dict[str, Any]]):
    """Field errors, at most MAX_ERRORS, duplicates dropped in O(1)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()
        self.dropped = 0

    def append(self, err: dict[str, Any]) -> None:
        key = repr((err["loc"], err["msg"]))
        if key in self.seen:
            return
        if len(self) >= MAX_ERRORS:
            self.dropped += 1
            return
        self.seen.add(key)
        super().append(err)

    def raise_if_any(self) -> None:
        if not self:
            return
        errors = list(self)
        if self.dropped:
            errors.append(field_error(["body"], f"{self.dropped} more errors not listed", "too_many_errors"))
        raise ValidationFailed(errors)


def expand(
    body: RunCreate,
    machine_id: str,
    machine_catalog: dict[str, dict[str, Any]],
    errors: _Errors | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """(kernel id, typed params with defaults) per item, sweeps expanded. Raises ValidationFailed, or
    adds to `errors` when given (the caller raises)."""
    own = errors is None
    errors = _Errors() if errors is None else errors
    thin_sweeps = PROFILES[body.profile].thin_sweeps
    out: list[tuple[str, dict[str, Any]]] = []
    for i, item in enumerate(body.items):
        base: list[str | int] = ["body", "items", i]
        spec = machine_catalog.get(item.kernel)
        if spec is None:
            errors.append(
                field_error(
                    [*base, "kernel"],
                    f"unknown kernel {item.kernel!r}: not in the catalog of machine {machine_id!r}",
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
            if values == "default":
                values = list(by_name[name].get("sweep") or [])
                if not values:
                    errors.append(
                        field_error(
                            loc,
                            f"parameter {name!r} of kernel {item.kernel!r} has no default sweep "
                            f"on machine {machine_id!r}",
                            "no_default_sweep",
                        )
                    )
                    continue
                if thin_sweeps:
                    values = thin(values)
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
            if len(errors) >= MAX_ERRORS:
                break
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
    if own:
        errors.raise_if_any()
    return out


# The kernels' own default min time (--min-time unset), for estimates.
KERNEL_DEFAULT_MIN_TIME_S = 0.2


def check_budgets(
    expanded: dict[str, list[tuple[str, dict[str, Any]]]],
    repetitions: int,
    min_time_s: float | None,
    settings: Settings,
) -> None:
    """Items per batch and estimated kernel time per run, before anything is stored."""
    total = sum(len(items) for items in expanded.values())
    if total > settings.max_batch_items:
        raise ValidationFailed(
            [
                field_error(
                    ["body", "items"],
                    f"{total} items over all machines, more than CTXBENCH_MAX_BATCH_ITEMS "
                    f"({settings.max_batch_items})",
                    "too_many_items",
                )
            ]
        )
    per_item = repetitions * (min_time_s or KERNEL_DEFAULT_MIN_TIME_S)
    longest = max((len(items) for items in expanded.values()), default=0) * per_item
    if longest > settings.max_run_kernel_s:
        raise ValidationFailed(
            [
                field_error(
                    ["body"],
                    f"a run would measure for about {longest:.0f} s (items x repetitions x min time), "
                    f"more than CTXBENCH_MAX_RUN_KERNEL_S ({settings.max_run_kernel_s:.0f} s)",
                    "run_too_long",
                )
            ]
        )


def _unknown_param(loc: list[str | int], kernel: str, by_name: dict[str, Any]) -> dict[str, Any]:
    known = ", ".join(sorted(by_name)) or "none"
    return field_error(loc, f"unknown parameter for kernel {kernel!r} (known: {known})", "unknown_param")


def expand_all(
    body: RunCreate, machine_ids: list[str], catalogs: dict[str, dict[str, dict[str, Any]]], errors: _Errors
) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """expand() per machine; machines whose catalogs hold the same specs of the body's kernels share one
    expansion (a batch to 100 like machines expands once). Stops at MAX_ERRORS errors."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    done: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    kernels = sorted({item.kernel for item in body.items})
    for mid in machine_ids:
        key = json.dumps([catalogs[mid].get(k) for k in kernels], sort_keys=True, default=str)
        if key in done:
            out[mid] = done[key]
            continue
        before = len(errors)
        out[mid] = expand(body, mid, catalogs[mid], errors)
        if len(errors) == before:
            done[key] = out[mid]
        elif len(errors) >= MAX_ERRORS:
            break
    return out


async def create_runs(
    session: AsyncSession, body: RunCreate, settings: Settings
) -> tuple[str, dict[str, str]]:
    """One run per machine, all in one batch, validated against every catalog first: all or nothing.
    Returns the batch id and machine id -> run id (in the order of the body's machines), stored with
    bulk inserts (one statement per table, not one per row).

    Unknown `machine_id` -> NotFound; unknown or repeated ids in `machine_ids` -> ValidationFailed.
    """
    if body.machine_ids is None:
        assert body.machine_id is not None  # RunCreate allows exactly one of the two
        if await session.get(Machine, body.machine_id) is None:
            raise NotFound(f"machine {body.machine_id!r} not found")
        machine_ids = [body.machine_id]
    else:
        machine_ids = body.machine_ids
        known = set(await session.scalars(select(Machine.id).where(Machine.id.in_(set(machine_ids)))))
        errors: list[dict[str, Any]] = []
        for i, mid in enumerate(machine_ids):
            loc: list[str | int] = ["body", "machine_ids", i]
            if mid not in known:
                errors.append(field_error(loc, f"unknown machine {mid!r}", "unknown_machine"))
            elif mid in machine_ids[:i]:
                errors.append(field_error(loc, f"machine {mid!r} given twice", "duplicate_machine"))
        if errors:
            raise ValidationFailed(errors)
    # Pending hosts wait for an admin's approval; revoked ones never measure again.
    held = (
        await session.execute(
            select(Machine.id, Machine.status).where(
                Machine.id.in_(set(machine_ids)), Machine.status != "active"
            )
        )
    ).all()
    if held:
        raise Conflict(
            "; ".join(f"machine {mid!r} is {st}: it gets no runs" for mid, st in sorted(held))
            + (" until an admin approves it" if any(st == "pending" for _, st in held) else "")
        )

    catalogs = await machine_catalogs(session, machine_ids)
    item_errors = _Errors()
    # Off the event loop: a body within its budgets can still hold ~100k values to check.
    expanded = await asyncio.to_thread(expand_all, body, machine_ids, catalogs, item_errors)
    item_errors.raise_if_any()

    profile = PROFILES[body.profile]
    repetitions = body.repetitions if body.repetitions is not None else profile.repetitions
    min_time_s = body.min_time_s if body.min_time_s is not None else profile.min_time_s
    check_budgets(expanded, repetitions, min_time_s, settings)
    timeout = item_timeout_s(repetitions, min_time_s, settings.item_timeout_s)
    single = body.machine_ids is None
    batch_id = new_id()
    now = utcnow()
    spec = body.model_dump(mode="json", exclude_none=True)
    launches = body.launches if body.launches is not None else profile.launches
    run_ids: dict[str, str] = {}
    run_rows: list[dict[str, Any]] = []
    item_rows: list[dict[str, Any]] = []
    for mid in machine_ids:
        run_id = batch_id if single else new_id()
        run_ids[mid] = run_id
        run_rows.append(
            {
                "id": run_id,
                "machine_id": mid,
                "batch_id": batch_id,
                "status": RunStatus.QUEUED,
                "profile": body.profile,
                "spec": spec,
                "repetitions": repetitions,
                "min_time_s": min_time_s,
                # CV reruns are gone (agents re-measure disturbed launches); a body's values are kept.
                "rerun_cv": body.rerun_cv,
                "max_reruns": body.max_reruns,
                "launches": launches,
                "created_at": now,
                "queued_at": now,
            }
        )
        item_rows += [
            {
                "id": new_id(),
                "run_id": run_id,
                "index": i,
                "kernel_id": k,
                "params": p,
                "state": ItemState.QUEUED,
                "timeout_s": timeout,
                "attempt": 1,
            }
            for i, (k, p) in enumerate(expanded[mid])
        ]
    await session.execute(insert(Run), run_rows)
    await session.execute(insert(RunItem), item_rows)
    await session.commit()
    return batch_id, run_ids


async def runs_out(session: AsyncSession, run_ids: list[str]) -> list[RunOut]:
    """The runs with their items, in the order of run_ids, in two queries (the items as plain rows: a
    batch's 100 x 50 of them as ORM objects cost more than the rest of its POST)."""
    q = select(Run).where(Run.id.in_(run_ids)).execution_options(populate_existing=True)
    by_id = {run.id: run for run in await session.scalars(q)}
    items: dict[str, list[RunItemOut]] = {rid: [] for rid in run_ids}
    rows = select(
        RunItem.run_id,
        RunItem.id,
        RunItem.index,
        RunItem.kernel_id,
        RunItem.params,
        RunItem.state,
        RunItem.error,
        RunItem.result_id,
        RunItem.timeout_s,
        RunItem.attempt,
    ).where(RunItem.run_id.in_(run_ids))
    for it in await session.execute(rows.order_by(RunItem.run_id, RunItem.index)):
        items[it.run_id].append(item_out(it._mapping))  # (a Row's .index is tuple.index)
    return [run_out(by_id[rid], items=items[rid]) for rid in run_ids]


def item_out(it: Any) -> RunItemOut:
    """A run item as the API sends it, from a RunItem or a row's mapping of its columns."""
    return RunItemOut.model_validate(it)


def run_out(
    run: Run,
    light: Progress | None = None,
    kernels: list[str] | None = None,
    items: list[RunItemOut] | None = None,
) -> RunOut:
    """The Run with its items; `light` (with `kernels`): without items, progress counted by SQL;
    `items`: its items already read (run.items is then not touched)."""
    if items is None:
        items = [item_out(it) for it in sorted(run.items, key=lambda it: it.index)] if light is None else []
    return RunOut(
        **dict(RunColumns.model_validate(run)),
        request={k: v for k, v in run.spec.items() if k not in ("machine_id", "machine_ids")},
        items=items,
        progress=light
        or Progress(
            total=len(items),
            done=sum(1 for it in items if it.result_id is not None),
            failed=sum(1 for it in items if it.state == ItemState.FAILED),
            running=sum(1 for it in items if it.state == ItemState.RUNNING),
        ),
        kernels=kernels if kernels is not None else list(dict.fromkeys(it.kernel for it in items)),
    )


class RunPage(NamedTuple):
    runs: list[RunOut]
    next_cursor: str | None  # None: this was the last page


def encode_cursor(run: Run) -> str:
    raw = json.dumps([run.created_at.isoformat(), run.id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created, run_id = json.loads(raw)
        when = datetime.fromisoformat(created)
        if not isinstance(run_id, str) or when.tzinfo is None:
            raise ValueError(cursor)
    except (ValueError, TypeError) as e:
        raise ValidationFailed(
            [field_error(["query", "cursor"], "not a cursor this server gave (X-Next-Cursor)", "bad_cursor")]
        ) from e
    return when, run_id


async def list_runs(
    session: AsyncSession,
    machine_id: str | None,
    limit: int,
    status: RunStatus | None = None,
    batch_id: str | None = None,
    cursor: str | None = None,
    with_items: bool = True,
) -> RunPage:
    """Newest first (created_at, then id), `limit` a page; the cursor of the last run on a full page
    fetches the next. Without items, progress and kernels are counted in SQL (one query for the
    whole page)."""
    q = select(Run).order_by(Run.created_at.desc(), Run.id).limit(limit + 1)
    if with_items:
        q = q.options(selectinload(Run.items))
    if machine_id:
        q = q.where(Run.machine_id == machine_id)
    if batch_id:
        q = q.where(Run.batch_id == batch_id)
    if status:
        q = q.where(Run.status == status.value)
    if cursor:
        when, after = decode_cursor(cursor)
        q = q.where(or_(Run.created_at < when, and_(Run.created_at == when, Run.id > after)))
    runs = list(await session.scalars(q))
    more = len(runs) > limit
    runs = runs[:limit]
    next_cursor = encode_cursor(runs[-1]) if more and runs else None
    if with_items:
        return RunPage([run_out(r) for r in runs], next_cursor)
    progress, kernels = await _summaries(session, [r.id for r in runs])
    return RunPage(
        [
            run_out(
                r, progress.get(r.id, Progress(total=0, done=0, failed=0, running=0)), kernels.get(r.id, [])
            )
            for r in runs
        ],
        next_cursor,
    )


async def _summaries(
    session: AsyncSession, run_ids: list[str]
) -> tuple[dict[str, Progress], dict[str, list[str]]]:
    if not run_ids:
        return {}, {}
    # One pass over the page's items: per run and kernel, its counts and where it first appears.
    q = (
        select(
            RunItem.run_id,
            RunItem.kernel_id,
            func.min(RunItem.index),
            func.count(),
            func.count(RunItem.result_id),
            func.count(case((RunItem.state == ItemState.FAILED, 1))),
            func.count(case((RunItem.state == ItemState.RUNNING, 1))),
        )
        .where(RunItem.run_id.in_(run_ids))
        .group_by(RunItem.run_id, RunItem.kernel_id)
    )
    sums: dict[str, list[int]] = {}
    kernels: dict[str, list[tuple[int, str]]] = {}
    for rid, kernel, at, total, done, failed, running in await session.execute(q):
        acc = sums.setdefault(rid, [0, 0, 0, 0])
        for i, n in enumerate((total, done, failed, running)):
            acc[i] += n
        kernels.setdefault(rid, []).append((at, kernel))
    progress = {rid: Progress(total=t, done=d, failed=f, running=r) for rid, (t, d, f, r) in sums.items()}
    return progress, {rid: [k for _, k in sorted(ks)] for rid, ks in kernels.items()}


async def list_results(session: AsyncSession, run_id: str, history: bool = False) -> list[ResultOut]:
    """Each item's current result when it measured; with history, every result of every attempt."""
    if await session.get(Run, run_id) is None:
        raise NotFound(f"run {run_id!r} not found")
    if history:
        q = (
            select(Result)
            .join(RunItem, RunItem.id == Result.item_id)
            .where(Result.run_id == run_id)
            .order_by(RunItem.index, Result.attempt, Result.created_at)
        )
    else:
        q = (
            select(Result)
            .join(RunItem, RunItem.result_id == Result.id)
            .where(RunItem.run_id == run_id, Result.status == "ok")
            .order_by(RunItem.index)
        )
    return [result_out(r) for r in await session.scalars(q)]


def result_out(r: Result) -> ResultOut:
    return ResultOut.model_validate(r)
