"""Results and item progress into the database: a stream's messages (already translated from protobuf by
agents/reports_wire.py) stored in batches, each report getting its own outcome. A result is stored with
its samples and their summary (stats.summary.describe); its CI of the median follows after the ack
(ingest/ci.py).

A batch (whatever the agent had sent when its last batch was done), or the batches of several streams
ready at once (record_group: ingest/writer.py's group commit), is looked up with a few queries for
all of its messages, stored with one INSERT of plain rows and one UPDATE of their items, the derived
work (whether a run is finished) done once, one commit. A refused message is refused alone. What
was stored is told through stored.py ("result stored"): compare's latest_results pointers follow it
inside the transaction, SSE after the commit."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.contract.aliases import canonical
from ctxbench_server.contract.params import params_key
from ctxbench_server.ingest.messages import Message, Refused, Report, Update
from ctxbench_server.ingest.repository import (
    Batch,
    ItemRow,
    RunRow,
    close_batches,
    open_batches,
    result_row,
)
from ctxbench_server.models import FINISHED_RUN, ItemState, RunStatus
from ctxbench_server.models.base import new_id, utcnow
from ctxbench_server.stats import figure
from ctxbench_server.stats import summary as stats
from ctxbench_server.stored import ResultStored, StoredEvents

log = logging.getLogger(__name__)

ITEM_STATE_FOR = {
    "ok": ItemState.SUCCEEDED,
    "failed": ItemState.FAILED,
    "unsupported": ItemState.FAILED,
    "cancelled": ItemState.CANCELLED,
}


@dataclass
class Stored:
    ack: bool


@dataclass
class Pending:
    """A stream's messages waiting for their transaction."""

    machine_id: str
    msgs: Sequence[Message]


@dataclass
class Recorded:
    """Per message of a batch: Stored (a report to acknowledge), Refused (to reject), None (an update
    acted on); and the runs the batch finished."""

    outcomes: list[Stored | Refused | None]
    finished: list[str]


async def record_group(
    session: AsyncSession, batches: Sequence[Pending], events: StoredEvents
) -> list[Recorded]:
    """Stores the ready reports and updates of one stream or several (each batch in its order) in one
    transaction and commits it, then tells `events` what it stored; a Recorded per batch. A report or
    update that is refused is refused alone: the others are stored. Raises SQLAlchemyError when the
    database fails the transaction (nothing is stored then)."""
    opened = await open_batches(session, [(p.machine_id, p.msgs) for p in batches])
    outcomes: list[list[Stored | Refused | None]] = []
    for b, p in zip(opened, batches, strict=True):
        outcomes.append([])
        for m in p.msgs:
            try:
                if isinstance(m, Report):
                    outcomes[-1].append(await _record_result(session, b, m))
                else:
                    _record_update(b, m)
                    outcomes[-1].append(None)
            except Refused as e:
                outcomes[-1].append(e)
    finished = await close_batches(session, opened, events)
    await session.commit()
    events.committed([r for b in opened for r in b.results])
    return [Recorded(o, f) for o, f in zip(outcomes, finished, strict=True)]


async def record_batch(
    session: AsyncSession, machine_id: str, msgs: Sequence[Message], events: StoredEvents
) -> Recorded:
    """record_group of one stream's messages."""
    return (await record_group(session, [Pending(machine_id, msgs)], events))[0]


def _record_update(b: Batch, u: Update) -> None:
    """RUNNING marks the item running (and stamps the run's start if it has none) and records where it
    stands in its launches (a run's progress is counted in launches: they interleave round-robin, so
    every item finishes in the last round); the rest is advisory and only logged. The changes are written
    by close_batches. Raises Refused for a run (or item) that is unknown or not this agent's."""
    if not u.running or not u.item_id:
        b.own_run(u.run_id)
        log.debug("run %s: %s %s", u.run_id, u.state, u.message)
        return
    run, item = b.own_item(u.run_id, u.item_id)
    if run.status in FINISHED_RUN or run.status == RunStatus.QUEUED:
        return  # a late update of a finished (or finished and retried) run
    now = utcnow()
    if run.started_at is None:
        run.started_at = now
        b.lookups.started[run.id] = run
    if b.current_result(item) is not None:
        return  # its result is in: that counts its launches
    if item.state == ItemState.QUEUED:
        item.state = ItemState.RUNNING
        b.lookups.running[item.id] = None
    if u.launches is not None:
        # cumulative figures: the latest says it all (an agent that restarted counts from 0 again)
        b.lookups.launches[item.id] = {
            "b_id": item.id,
            "b_done": u.launches.done,
            "b_planned": u.launches.planned,
            "b_wall_s": u.launches.wall_s,
            "b_at": now,
        }


def _already_stored(b: Batch, r: Report) -> bool:
    """True when this result is stored already (a repeat is acknowledged again); Refused when the id is
    another machine's."""
    owner = b.stored.get(r.result_id)
    if owner is None:
        return False
    if owner != b.machine_id:
        raise Refused(f"result {r.result_id!r} is not this agent's", "not_yours", r.run_id, r.result_id)
    return True


def _attempt(run: RunRow, item: ItemRow, r: Report, had: str | None) -> tuple[bool, int]:
    """Whether the result becomes its item's current one, and its attempt. Not when the item already has
    one, or it is a stale report of an earlier attempt (the run was retried: it is queued, or a CANCELLED
    report arrives for a run nobody cancelled); those are stored as history only."""
    if had is not None:
        log.warning(
            "item %s already has result %s; second result %s kept as history only", item.id, had, r.result_id
        )
        return False, item.attempt
    if run.status == RunStatus.QUEUED or (r.status == "cancelled" and run.status == RunStatus.RUNNING):
        log.info("result %s of item %s is from an earlier attempt; kept as history", r.result_id, item.id)
        return False, max(1, item.attempt - 1)
    return True, item.attempt


async def _record_result(session: AsyncSession, b: Batch, r: Report) -> Stored:
    """Stores a result once (by result_id); a repeat is just acknowledged again. Raises Refused."""
    if r.malformed is not None:
        await _fail_refused_item(session, b, r, r.malformed)
        raise Refused(r.malformed, run_id=r.run_id, result_id=r.result_id)
    if _already_stored(b, r):
        return Stored(ack=True)
    try:
        run, item = b.own_item(r.run_id, r.item_id)
    except Refused as e:
        e.result_id = r.result_id
        raise
    current, attempt = _attempt(run, item, r, b.current_result(item))
    if r.kernel_id and canonical(r.kernel_id) != item.kernel_id:  # an old agent names the old id
        log.warning(
            "result %s names kernel %r but item %s is %r", r.result_id, r.kernel_id, item.id, item.kernel_id
        )
    spec = await b.spec(session, item.kernel_id)
    if r.params:
        params, key = b.lookups.typed(b.machine_id, item.kernel_id, spec, r.params)
    else:
        params = dict(await b.lookups.item_params(session, item))
        key = params_key(spec, params)
    row = result_row(
        id=r.result_id,
        run_id=run.id,
        item_id=item.id,
        machine_id=b.machine_id,
        kernel_id=item.kernel_id,
        status=r.status,
        params=params,
        params_key=key,
        unit=r.unit,
        iterations=r.iterations,
        counters=r.counters,
        harness=r.harness,
        estimator=r.harness.get("estimator") or None,
        attempt=attempt,
        reruns=r.reruns,
        noisy=r.noisy,
        attempt_cvs=r.attempt_cvs,
        launches=r.launches,
        disturbance=r.disturbance,
        agent_version=b.agent_version,
        exit_code=r.exit_code,
        error=r.error or None,
        stderr_tail=r.stderr_tail or None,
        started_at=r.started_at,
        finished_at=r.finished_at,
    )
    if r.status == "ok":
        try:
            s = stats.describe(r.samples, figure.quantile_for(row["estimator"]))
        except ValueError as e:  # no samples: not a measurement
            row["status"], row["error"] = "failed", f"result has no usable samples: {e}"
        else:
            row.update(s.as_dict(), samples=r.samples, sample_launches=r.sample_launches)
    _add(b, run, item, row, current)
    return Stored(ack=True)


def _add(b: Batch, run: RunRow, item: ItemRow, row: dict[str, Any], current: bool) -> None:
    """The row joins the batch's INSERT; as its item's current result, the item's UPDATE too (close_batches
    then ends the run if no item is left open)."""
    b.rows.append(row)
    b.stored[row["id"]] = b.machine_id
    b.results.append(
        ResultStored(
            row["id"],
            b.machine_id,
            run.id,
            item.id,
            row["kernel_id"],
            row["params_key"],
            row["status"],
            row["created_at"],
        )
    )
    if current:
        launches = row["launches"] or []
        b.items[item.id] = {
            "b_id": item.id,
            "b_result_id": row["id"],
            "b_state": ITEM_STATE_FOR[row["status"]],
            "b_error": row["error"],
            # the launches it ran (one process before launches) and their wall time
            "b_launches": len(launches) or (1 if row["status"] == "ok" else 0),
            "b_wall_s": sum(w for lr in launches if (w := lr["wall_s"]) is not None),
        }
        b.runs[run.id] = run


def refused_by_database(e: SQLAlchemyError) -> bool:
    """The database refuses these values for good (a constraint, a value too long for its column), as
    opposed to failing to store anything just now: SQLSTATE classes 22 (data) and 23 (integrity)."""
    if isinstance(e, DataError | IntegrityError):
        return True
    sqlstate = getattr(e.orig, "sqlstate", None) if isinstance(e, DBAPIError) else None
    return isinstance(sqlstate, str) and sqlstate[:2] in ("22", "23")


async def storage_failed(
    session: AsyncSession, machine_id: str, r: Report, e: SQLAlchemyError, events: StoredEvents
) -> Stored:
    """Storing r alone raised e (its session is gone; this is a new one): acknowledge it if the same
    result landed meanwhile through another stream, else raise Refused. A result the database refuses
    for good is refused as malformed (the agent sets it aside) and fails its item, like any malformed
    report; any other failure is unavailable (the agent keeps it and sends it again). Never the
    database's words."""
    (b,) = await open_batches(session, [(machine_id, [r])])
    if _already_stored(b, r):
        return Stored(ack=True)
    if not refused_by_database(e):
        raise Refused(
            "the server could not store this result now; send it again later",
            "unavailable",
            run_id=r.run_id,
            result_id=r.result_id,
        )
    bad = Refused("the database refused this result", run_id=r.run_id, result_id=r.result_id)
    try:
        await _fail_refused_item(session, b, r, bad.message)
        bad.run_finished = bool((await close_batches(session, [b], events))[0])
        await session.commit()
        events.committed(b.results)
    except SQLAlchemyError:
        await session.rollback()
        log.exception("could not fail item %s of run %s after its result was refused", r.item_id, r.run_id)
    raise bad


async def _fail_refused_item(session: AsyncSession, b: Batch, r: Report, why: str) -> None:
    """A malformed report of this agent's running item fails that item (the agent drops the report,
    so it would otherwise stay open for ever): a failed result under a new id says why."""
    try:
        run, item = b.own_item(r.run_id, r.item_id)
    except Refused:
        return
    if b.current_result(item) is not None or run.status != RunStatus.RUNNING:
        return
    spec = await b.spec(session, item.kernel_id)
    params = await b.lookups.item_params(session, item)
    row = result_row(
        id=new_id(),
        run_id=run.id,
        item_id=item.id,
        machine_id=b.machine_id,
        kernel_id=item.kernel_id,
        status="failed",
        params=dict(params),
        params_key=params_key(spec, params),
        attempt=item.attempt,
        exit_code=r.exit_code,
        error=f"report rejected: {why}",
        started_at=r.started_at,
        finished_at=r.finished_at,
    )
    _add(b, run, item, row, current=True)
