"""Runs: store a validated, expanded POST (runs.expand) as one run per machine; read back with progress."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, NamedTuple, cast

from pydantic import TypeAdapter
from sqlalchemy import Table, and_, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from ctxbench_server.config import Settings
from ctxbench_server.dispatch.repository import StartRow
from ctxbench_server.dispatch.repository import load_run as load_run
from ctxbench_server.errors import Conflict, NotFound, ValidationFailed, field_error
from ctxbench_server.machines.service import catalogs as machine_catalogs
from ctxbench_server.models import ItemState, Machine, MachineStatus, Result, Run, RunItem, RunStatus
from ctxbench_server.models.base import new_id, new_ids, utcnow
from ctxbench_server.runs.expand import Errors, check_budgets, check_sample_time, expand_all, item_timeout_s
from ctxbench_server.runs.progress import count_launches, counted, items_progress, summaries
from ctxbench_server.runs.schemas import (
    PROFILES,
    Progress,
    ResultOut,
    RunColumns,
    RunCreate,
    RunItemOut,
    RunOut,
    RunSpec,
)
from ctxbench_server.sql import bulk, json_once
from ctxbench_server.stats import summary as stats


class Created(NamedTuple):
    batch_id: str
    run_ids: dict[str, str]  # machine id -> run id, in the order of the body's machines
    runs: dict[str, dict[str, Any]]  # run id -> its row as inserted
    items: dict[str, list[dict[str, Any]]]  # run id -> its items' rows as inserted, by index
    spec: dict[str, Any]  # the body as stored in each run's spec


async def target_machines(session: AsyncSession, body: RunCreate) -> list[str]:
    """The body's machines, each known, once, and active. Unknown `machine_id` -> NotFound; unknown or
    repeated ids in `machine_ids` -> ValidationFailed; a pending or revoked machine -> Conflict."""
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
                Machine.id.in_(set(machine_ids)), Machine.status != MachineStatus.ACTIVE
            )
        )
    ).all()
    if held:
        raise Conflict(
            "; ".join(f"machine {mid!r} is {st}: it gets no runs" for mid, st in sorted(held))
            + (" until an admin approves it" if any(st == MachineStatus.PENDING for _, st in held) else "")
        )
    return machine_ids


class Checked(NamedTuple):
    catalogs: dict[str, dict[str, dict[str, Any]]]  # machine id -> kernel id -> spec, as checked
    expanded: dict[str, list[tuple[str, dict[str, Any]]]]  # machine id -> (kernel, params) per item
    repetitions: int
    min_time_s: float | None
    sample_time_s: float


async def check_spec(
    session: AsyncSession, body: RunSpec, machine_ids: list[str], settings: Settings
) -> Checked:
    """The spec against these machines' catalogs and the budgets, expanded; ValidationFailed naming each
    field (`loc` under ["body"]) otherwise. Stores nothing (a schedule checks its spec with it too)."""
    catalogs = await machine_catalogs(session, machine_ids)
    item_errors = Errors()
    # Off the event loop: a body within its budgets can still hold ~100k values to check.
    expanded = await asyncio.to_thread(expand_all, body, machine_ids, catalogs, item_errors)
    item_errors.raise_if_any()

    profile = PROFILES[body.profile]
    repetitions = body.repetitions if body.repetitions is not None else profile.repetitions
    min_time_s = body.min_time_s if body.min_time_s is not None else profile.min_time_s
    sample_time_s = body.sample_time_s if body.sample_time_s is not None else profile.sample_time_s
    check_sample_time(sample_time_s, min_time_s)
    check_budgets(expanded, repetitions, min_time_s, settings)
    return Checked(catalogs, expanded, repetitions, min_time_s, sample_time_s)


async def create_runs(session: AsyncSession, body: RunCreate, settings: Settings) -> Created:
    """One run per machine, all in one batch, validated against every catalog first: all or nothing.
    Stored with bulk inserts (one statement per table, not one per row); the rows are returned so
    that the response need not read them back.
    """
    created = await add_runs(session, body, settings)
    await session.commit()
    return created


async def add_runs(
    session: AsyncSession, body: RunCreate, settings: Settings, *, schedule_id: str | None = None
) -> Created:
    """create_runs in the caller's transaction, not committed: a schedule's firing stores its claim, its
    record and its runs in one (schedules.firing). Everything is validated before the first insert, so a
    ValidationFailed or Conflict leaves the transaction as it was. `schedule_id`: the schedule firing."""
    machine_ids = await target_machines(session, body)
    checked = await check_spec(session, body, machine_ids, settings)
    expanded = checked.expanded
    repetitions, min_time_s, sample_time_s = checked.repetitions, checked.min_time_s, checked.sample_time_s
    profile = PROFILES[body.profile]
    timeout = item_timeout_s(repetitions, min_time_s, settings.item_timeout_s)
    single = body.machine_ids is None
    batch_id = new_id()
    now = utcnow()
    shared = json_once.Shared()  # a value many rows hold is JSON-encoded once
    spec = shared(body.model_dump(mode="json", exclude_none=True))
    launches = body.launches if body.launches is not None else profile.launches
    run_ids: dict[str, str] = {}
    run_rows: list[dict[str, Any]] = []
    items: dict[str, list[dict[str, Any]]] = {}
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
                "sample_time_s": sample_time_s or None,
                # CV reruns are gone (agents re-measure disturbed launches); a body's values are kept.
                "rerun_cv": body.rerun_cv,
                "max_reruns": body.max_reruns,
                "launches": launches,
                "created_at": now,
                "queued_at": now,
                "schedule_id": schedule_id,
            }
        )
        ids = new_ids(len(expanded[mid]))
        items[run_id] = [
            {
                "id": ids[i],
                "run_id": run_id,
                "index": i,
                "kernel_id": k,
                "params": shared(p),
                "state": ItemState.QUEUED,
                "timeout_s": timeout,
                "attempt": 1,
                "error": None,
                "result_id": None,
                "launches_done": 0,
                "launches_wall_s": 0.0,
            }
            for i, (k, p) in enumerate(expanded[mid])
        ]
    # Core inserts of the tables: the ORM's bulk insert spends more on each row's bookkeeping than the
    # insert itself (docs/performance.md, "batch-post")
    await session.execute(insert(cast(Table, Run.__table__)), run_rows)
    await bulk.insert_many(
        session, cast(Table, RunItem.__table__), [row for rows in items.values() for row in rows]
    )
    return Created(batch_id, run_ids, {row["id"]: row for row in run_rows}, items, spec)


def created_out(created: Created, started: Iterable[StartRow], *, with_items: bool = True) -> list[RunOut]:
    """The runs just created, as the POST answers them: their rows as inserted and, for those that
    started, what the start wrote (status, started_at, facts); nothing read back, so the answer is made
    before the started runs' streams build their messages. With `with_items=False` the items are only
    counted (POST /runs?items=false: the light shape of GET /runs?items=false)."""
    request = _request(created.spec)
    now_running = {row.id: row for row in started}
    out = []
    for run_id in created.run_ids.values():
        run = Run(**created.runs[run_id])  # not added to a session: only read here
        if (start := now_running.get(run_id)) is not None:
            run.status, run.started_at, run.facts = RunStatus.RUNNING, start.started_at, start.facts
        items = created.items[run_id]
        if with_items:
            out.append(run_out(run, items=items_out(items), request=request))
        else:
            out.append(run_out(run, *counted(run, items), request=request))
    return out


_ITEMS = TypeAdapter(list[RunItemOut])


def items_out(rows: Sequence[Any]) -> list[RunItemOut]:
    """Many items as the API sends them, from row mappings or dicts, in one validation (pydantic's own
    loop rather than one model_validate each)."""
    return _ITEMS.validate_python(rows)


def item_out(it: Any) -> RunItemOut:
    """A run item as the API sends it, from a RunItem or a row's mapping of its columns."""
    return RunItemOut.model_validate(it)


def run_out(
    run: Run,
    light: Progress | None = None,
    kernels: list[str] | None = None,
    items: list[RunItemOut] | None = None,
    request: dict[str, Any] | None = None,
) -> RunOut:
    """The Run with its items; `light` (with `kernels`): without items, progress counted by SQL;
    `items`: its items already read (run.items is then not touched); `request`: _request(run.spec)
    already made (run.spec is then not touched)."""
    if items is None:
        items = [item_out(it) for it in sorted(run.items, key=lambda it: it.index)] if light is None else []
    count_launches(run, items)
    return RunOut(
        **dict(RunColumns.model_validate(run)),
        request=_request(run.spec) if request is None else request,
        items=items,
        progress=light or items_progress(items),
        kernels=kernels if kernels is not None else list(dict.fromkeys(it.kernel for it in items)),
    )


def _request(spec: dict[str, Any]) -> dict[str, Any]:
    """RunOut.request: the body as posted, its machine ids left out."""
    return {k: v for k, v in spec.items() if k not in ("machine_id", "machine_ids")}


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
    progress, kernels = await summaries(session, runs)
    return RunPage(
        [
            run_out(
                r, progress.get(r.id, Progress(total=0, done=0, failed=0, running=0)), kernels.get(r.id, [])
            )
            for r in runs
        ],
        next_cursor,
    )


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
    rows = list(await session.scalars(q))
    await stats.prefill_cis([r for r in rows if r.status == "ok"])
    return [result_out(r) for r in rows]


def result_out(r: Result, fill_ci: bool = True) -> ResultOut:
    """`fill_ci`: a CI the filler has not written yet is computed now (stats.summary.stored_ci); the
    run's event stream sends it without (null) and sends the result again once it is written."""
    out = ResultOut.model_validate(r)
    if fill_ci and r.status == "ok" and r.ci_method is None:
        low, high, method = stats.stored_ci(
            r.id, r.samples, r.sample_launches, (None, None, None), r.estimator
        )
        out.ci_low, out.ci_high, out.ci_method = low, high, method
    return out
