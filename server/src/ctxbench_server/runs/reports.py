"""What agents report back: item progress (advisory) and results (stored once, decide the run).

A stream's messages come in batches (record_batch: whatever the agent had sent when the last batch was
done): looked up with a few queries for all of them, stored with one INSERT of plain rows and one UPDATE
of their items, the derived work (latest_results pointers, whether a run is finished) done once, one
commit. Each message still gets its own outcome: a refused one is refused alone."""

from __future__ import annotations

import dataclasses
import logging
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy import Table, bindparam, case, func, select
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import defer

from ctxbench_server.compare import latest
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.kernels.aliases import canonical
from ctxbench_server.kit import stats
from ctxbench_server.kit.params import MAX_STRING, from_wire, params_key
from ctxbench_server.kit.text import column_length, storable
from ctxbench_server.machines.service import catalog
from ctxbench_server.models import FINISHED_RUN, ItemState, Machine, Result, Run, RunItem, RunStatus
from ctxbench_server.models.base import new_id, utcnow

log = logging.getLogger(__name__)


def _column_len(column: Any) -> int:
    length = column.property.columns[0].type.length
    assert isinstance(length, int)
    return length


RESULT_STATUS = {
    pb.RESULT_STATUS_OK: "ok",
    pb.RESULT_STATUS_FAILED: "failed",
    pb.RESULT_STATUS_UNSUPPORTED: "unsupported",
    pb.RESULT_STATUS_CANCELLED: "cancelled",
}
ITEM_STATE_FOR = {
    "ok": ItemState.SUCCEEDED,
    "failed": ItemState.FAILED,
    "unsupported": ItemState.FAILED,
    "cancelled": ItemState.CANCELLED,
}


MAX_SAMPLES = 100_000
MAX_ATTEMPT_CVS = 1000
MAX_LAUNCHES = 1000
# Strings of a report that reach a column are bounded by its size (PostgreSQL refuses longer ones);
# the rest by what a kernel or the agent can sensibly send (the agent keeps 4 KiB of stderr).
MAX_ID = 36  # run_id, item_id: the server's UUIDs
MAX_KERNEL_ID = _column_len(Result.kernel_id)
MAX_UNIT = _column_len(Result.unit)
MAX_PARAM_VALUE = MAX_STRING  # what kit.params accepts for one string value; the stored key is bounded by
# kit.params.params_key (a long one keeps its start plus a SHA-256 of the whole)
MAX_PARAM_COUNT = 64
MAX_COUNTERS = 256
MAX_NAME = 200  # a counter's name, the harness name and version
MAX_ERROR = 4096
MAX_STDERR_TAIL = 16384
INVALID_ARGUMENT = 3  # google.rpc.Code: malformed; the agent drops it from its spool
PERMISSION_DENIED = 7  # google.rpc.Code: a run or result that is not this agent's
UNAVAILABLE = 14  # google.rpc.Code: not stored now; the agent keeps it and sends it again


class Refused(Exception):
    """A message the server will not act on; answered with Reject on the same stream, which stays open."""

    def __init__(
        self, message: str, code: int = INVALID_ARGUMENT, run_id: str = "", result_id: str = ""
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.run_id = run_id
        self.result_id = result_id
        # Set when refusing the report failed its item and that finished the run.
        self.run_finished = False


# Core, not the ORM's unit of work: a batch's results go in with one executemany of plain rows.
RESULTS = cast(Table, Result.__table__)
_ITEMS = cast(Table, RunItem.__table__)
# A batch's items that got a result, by id, in one executemany.
_SET_ITEM_RESULT = (
    _ITEMS.update()
    .where(_ITEMS.c.id == bindparam("b_id"))
    .values(result_id=bindparam("b_result_id"), state=bindparam("b_state"), error=bindparam("b_error"))
)


def _result_row(**values: Any) -> dict[str, Any]:
    """A results row with every column (one INSERT takes the batch's rows only if they have the same keys)."""
    return {
        "unit": "",
        "samples": [],
        "iterations": [],
        "counters": {},
        "harness": {},
        "n": 0,
        "median": None,
        "mean": None,
        "stddev": None,
        "cv": None,
        "min": None,
        "max": None,
        "ci_low": None,
        "ci_high": None,
        "ci_method": None,
        "attempt": 1,
        "reruns": 0,
        "noisy": False,
        "attempt_cvs": [],
        "sample_launches": None,
        "launches": None,
        "disturbance": None,
        "agent_version": None,
        "exit_code": 0,
        "error": None,
        "stderr_tail": None,
        "started_at": None,
        "finished_at": None,
        "created_at": utcnow(),
        **values,
    }


@dataclass
class Stored:
    ack: bool


@dataclass
class Batch:
    """One transaction's worth of a stream's messages: what was looked up for all of them at once, and
    the work left for its end (the latest_results pointers, whether the runs touched are finished)."""

    machine_id: str
    # result id -> machine id, of the batch's result ids already stored (and those stored by the batch)
    stored: dict[str, str]
    agent_version: str | None
    loaded: list[Run | RunItem]
    specs: dict[str, dict[str, Any]] | None = None
    # result id -> its statistics (or why there are none), computed beforehand by compute_stats
    precomputed: dict[str, stats.Stats | ValueError] = dataclasses.field(default_factory=dict)
    # what close_batch writes: the results (rows of one INSERT), their items' new state (one UPDATE by
    # id), the latest_results pointers (one upsert), and the runs whose items got a current result
    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    items: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    latest: dict[tuple[str, str], dict[str, Any]] = dataclasses.field(default_factory=dict)
    runs: dict[str, Run] = dataclasses.field(default_factory=dict)

    def current_result(self, item: RunItem) -> str | None:
        """The item's current result id, this batch's included."""
        done = self.items.get(item.id)
        return done["b_result_id"] if done is not None else item.result_id

    async def spec(self, session: AsyncSession, kernel_id: str) -> dict[str, Any] | None:
        if self.specs is None:
            self.specs = await catalog(session, self.machine_id)
        return self.specs.get(kernel_id)


@dataclass
class Recorded:
    """Per message of a batch: Stored (a report to acknowledge), Refused (to reject), None (an update
    acted on); and the runs the batch finished."""

    outcomes: list[Stored | Refused | None]
    finished: list[str]


def _ts(t: Timestamp, present: bool) -> datetime | None:
    """None when absent, or at or before 1970 (Go's zero time.Time arrives as year 1: never set)."""
    return t.ToDatetime(tzinfo=UTC) if present and t.seconds > 0 else None


async def _own_run(session: AsyncSession, machine_id: str, run_id: str) -> Run:
    run = await session.get(Run, run_id) if run_id else None
    if run is None:
        raise Refused(f"unknown run {run_id!r}", run_id=run_id)
    if run.machine_id != machine_id:
        raise Refused(f"run {run_id!r} is not this agent's", PERMISSION_DENIED, run_id=run_id)
    return run


async def _own_item(session: AsyncSession, machine_id: str, run_id: str, item_id: str) -> tuple[Run, RunItem]:
    run = await _own_run(session, machine_id, run_id)
    item = await session.get(RunItem, item_id) if item_id else None
    if item is None or item.run_id != run_id:
        raise Refused(f"unknown item {item_id!r} in run {run_id!r}", run_id=run_id)
    return run, item


async def open_batch(session: AsyncSession, machine_id: str, msgs: Sequence[pb.ConnectRequest]) -> Batch:
    """Reads what the messages name in three queries (their runs and items land in the session's
    identity map, so each message's own lookups cost nothing), not three per message."""
    run_ids: set[str] = set()
    item_ids: set[str] = set()
    result_ids: set[str] = set()
    for m in msgs:
        body = m.result_report if m.WhichOneof("msg") == "result_report" else m.run_update
        if 0 < len(body.run_id) <= MAX_ID:
            run_ids.add(body.run_id)
        if 0 < len(body.item_id) <= MAX_ID:
            item_ids.add(body.item_id)
        if m.WhichOneof("msg") == "result_report" and len(m.result_report.result_id) == 36:
            result_ids.add(m.result_report.result_id)
    # Held by the Batch: the identity map keeps only objects something refers to.
    loaded: list[Run | RunItem] = []
    if run_ids:
        # without the two big JSON columns (the request and the facts snapshot): no report needs them
        lean = (defer(Run.spec, raiseload=True), defer(Run.facts, raiseload=True))
        loaded += (await session.scalars(select(Run).where(Run.id.in_(run_ids)).options(*lean))).all()
    if item_ids:
        loaded += (await session.scalars(select(RunItem).where(RunItem.id.in_(item_ids)))).all()
    stored: dict[str, str] = {}
    if result_ids:
        known = select(Result.id, Result.machine_id).where(Result.id.in_(result_ids))
        stored = {rid: mid for rid, mid in await session.execute(known)}
    machine = await session.get(Machine, machine_id) if result_ids else None
    return Batch(machine_id, stored, (machine.agent_version or None) if machine else None, loaded)


async def close_batch(session: AsyncSession, b: Batch) -> list[str]:
    """The batch's derived work, once: its results' latest_results pointers in one statement, then
    each run it touched that has no open item left ends. Returns the runs that ended (not committed)."""
    await session.flush()  # what went through the ORM: items marked running, runs started
    if b.rows:
        await session.execute(RESULTS.insert(), b.rows)
    if b.items:
        await session.execute(_SET_ITEM_RESULT, list(b.items.values()))
    if b.latest:
        await session.execute(latest.upsert(session.get_bind().dialect.name, list(b.latest.values())))
    runs = {rid: run for rid, run in b.runs.items() if run.status not in FINISHED_RUN}
    if not runs:
        return []
    open_items = func.sum(case((RunItem.result_id.is_(None), 1), else_=0))
    succeeded = func.sum(case((RunItem.state == ItemState.SUCCEEDED, 1), else_=0))
    q = select(RunItem.run_id, open_items, succeeded).where(RunItem.run_id.in_(runs)).group_by(RunItem.run_id)
    finished = []
    for run_id, left, measured in await session.execute(q):
        if left:
            continue
        run = runs[run_id]
        run.status = RunStatus.SUCCEEDED if measured else RunStatus.FAILED
        run.error = None if measured else "no item produced a measurement"
        run.finished_at = utcnow()
        finished.append(run_id)
    return finished


def compute_stats(msgs: Sequence[pb.ConnectRequest]) -> dict[str, stats.Stats | ValueError]:
    """The statistics of each measured report (the bootstrap is most of what a report costs the server),
    for record_batch. Pure: meant for a worker thread beside the event loop (numpy leaves the GIL for
    most of it), before the machine's lock and a database connection are taken."""
    out: dict[str, stats.Stats | ValueError] = {}
    for m in msgs:
        if m.WhichOneof("msg") != "result_report":
            continue
        r = m.result_report
        if r.status != pb.RESULT_STATUS_OK or r.result_id in out or len(r.samples) > MAX_SAMPLES:
            continue
        try:
            out[r.result_id] = stats.compute(list(r.samples), list(r.sample_launches) or None, r.result_id)
        except ValueError as e:
            out[r.result_id] = e
    return out


async def record_batch(
    session: AsyncSession,
    machine_id: str,
    msgs: Sequence[pb.ConnectRequest],
    precomputed: dict[str, stats.Stats | ValueError] | None = None,
) -> Recorded:
    """Stores a stream's ready reports and updates (in their order) in one transaction and commits it.
    A report or update that is refused is refused alone: the others are stored. Raises SQLAlchemyError
    when the database fails the transaction (nothing is stored then). `precomputed`: compute_stats(msgs)
    (else each report's statistics are computed here)."""
    b = await open_batch(session, machine_id, msgs)
    b.precomputed = precomputed or {}
    outcomes: list[Stored | Refused | None] = []
    for m in msgs:
        try:
            if m.WhichOneof("msg") == "result_report":
                outcomes.append(await _record_result(session, b, m.result_report))
            else:
                await _record_update(session, b, m.run_update)
                outcomes.append(None)
        except Refused as e:
            outcomes.append(e)
    finished = await close_batch(session, b)
    await session.commit()
    return Recorded(outcomes, finished)


async def _record_update(session: AsyncSession, b: Batch, u: pb.RunUpdate) -> None:
    """RUNNING marks the item (and a queued run) running; the rest is advisory and only logged.
    Raises Refused for a run (or item) that is unknown or not this agent's."""
    if u.state != pb.ITEM_STATE_RUNNING or not u.item_id:
        await _own_run(session, b.machine_id, u.run_id)
        log.debug("run %s: %s %s", u.run_id, pb.ItemState.Name(u.state), u.message)
        return
    run, item = await _own_item(session, b.machine_id, u.run_id, u.item_id)
    if run.status in FINISHED_RUN or run.status == RunStatus.QUEUED:
        return  # a late update of a finished (or finished and retried) run
    if item.state == ItemState.QUEUED and b.current_result(item) is None:
        item.state = ItemState.RUNNING
    if run.started_at is None:
        run.started_at = utcnow()


def check_report(r: pb.ResultReport) -> None:
    """Rules a report must meet before anything is looked up. Raises Refused (INVALID_ARGUMENT)."""

    def refuse(why: str) -> Refused:
        return Refused(why, run_id=r.run_id, result_id=r.result_id)

    try:
        if len(r.result_id) != 36:
            raise ValueError
        uuid.UUID(r.result_id)
    except ValueError:
        raise refuse(f"result_id {r.result_id[:64]!r} is not a UUID") from None
    if len(r.samples) > MAX_SAMPLES:
        raise refuse(f"{len(r.samples)} samples, more than {MAX_SAMPLES}")
    if r.iterations and len(r.iterations) != len(r.samples):  # none at all: the kernel did not say
        raise refuse(f"{len(r.samples)} samples but {len(r.iterations)} iteration counts")
    if not all(math.isfinite(x) for x in r.samples):
        raise refuse("samples are not all finite numbers")
    if len(r.attempt_cvs) > MAX_ATTEMPT_CVS:
        raise refuse(f"{len(r.attempt_cvs)} attempt_cvs, more than {MAX_ATTEMPT_CVS}")
    if r.sample_launches and len(r.sample_launches) != len(r.samples):  # none: one launch
        raise refuse(f"{len(r.samples)} samples but {len(r.sample_launches)} sample_launches")
    if len(r.launches) > MAX_LAUNCHES:
        raise refuse(f"{len(r.launches)} launches, more than {MAX_LAUNCHES}")
    for field, value, most in (
        ("run_id", r.run_id, MAX_ID),
        ("item_id", r.item_id, MAX_ID),
        ("kernel_id", r.kernel_id, MAX_KERNEL_ID),
        ("unit", r.unit, MAX_UNIT),
        ("error", r.error, MAX_ERROR),
        ("stderr_tail", r.stderr_tail, MAX_STDERR_TAIL),
        ("harness.name", r.harness.name, MAX_NAME),
        ("harness.version", r.harness.version, MAX_NAME),
    ):
        if len(value) > most:
            raise refuse(f"{field}: {len(value)} characters, more than {most}")
    if len(r.params) > MAX_PARAM_COUNT:
        raise refuse(f"params: {len(r.params)} parameters, more than {MAX_PARAM_COUNT}")
    if any(len(v) > MAX_PARAM_VALUE for v in r.params.values()):
        raise refuse(f"params: a value over {MAX_PARAM_VALUE} characters")
    if len(r.counters) > MAX_COUNTERS:
        raise refuse(f"counters: {len(r.counters)} counters, more than {MAX_COUNTERS}")
    if any(len(k) > MAX_NAME for k in r.counters):
        raise refuse(f"counters: a name over {MAX_NAME} characters")


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _launch(lr: pb.Launch) -> dict[str, Any]:
    return {
        "index": lr.index,
        "wall_s": _finite(lr.wall_s),
        "cpu_s": _finite(lr.cpu_s),
        "other_busy_frac": _finite(lr.other_busy_frac),
        "steal_frac": _finite(lr.steal_frac),
        "throttled_s": _finite(lr.throttled_s),
        "disturbed": lr.disturbed,
        "remeasured": lr.remeasured,
        "kept": lr.kept,
        "samples": lr.samples,
    }


def _already_stored(b: Batch, r: pb.ResultReport) -> bool:
    """True when this result is stored already (a repeat is acknowledged again); Refused when the id is
    another machine's."""
    owner = b.stored.get(r.result_id)
    if owner is None:
        return False
    if owner != b.machine_id:
        raise Refused(f"result {r.result_id!r} is not this agent's", PERMISSION_DENIED, r.run_id, r.result_id)
    return True


async def _record_result(session: AsyncSession, b: Batch, r: pb.ResultReport) -> Stored:
    """Stores a result once (by result_id); a repeat is just acknowledged again. Raises Refused.

    The result becomes its item's current result unless the item already has one, or it is a stale
    report of an earlier attempt (the run was retried: it is queued, or a CANCELLED report arrives for
    a run nobody cancelled); those are stored as history only.
    """
    try:
        check_report(r)
    except Refused as bad:
        await _fail_refused_item(session, b, r, bad.message)
        raise
    if _already_stored(b, r):
        return Stored(ack=True)
    try:
        run, item = await _own_item(session, b.machine_id, r.run_id, r.item_id)
    except Refused as e:
        e.result_id = r.result_id
        raise
    status = RESULT_STATUS.get(r.status, "failed")
    had = b.current_result(item)
    current = had is None
    attempt = item.attempt
    if current and (
        run.status == RunStatus.QUEUED or (status == "cancelled" and run.status == RunStatus.RUNNING)
    ):
        current, attempt = False, max(1, item.attempt - 1)
        log.info("result %s of item %s is from an earlier attempt; kept as history", r.result_id, item.id)
    elif not current:
        log.warning(
            "item %s already has result %s; second result %s kept as history only", item.id, had, r.result_id
        )

    if r.kernel_id and canonical(r.kernel_id) != item.kernel_id:  # an old agent names the old id
        log.warning(
            "result %s names kernel %r but item %s is %r", r.result_id, r.kernel_id, item.id, item.kernel_id
        )
    spec = await b.spec(session, item.kernel_id)
    params = from_wire(spec, r.params) if r.params else dict(item.params)
    row = _result_row(
        id=r.result_id,
        run_id=run.id,
        item_id=item.id,
        machine_id=b.machine_id,
        kernel_id=item.kernel_id,
        status=status,
        params=params,
        params_key=params_key(spec, params),
        unit=storable(r.unit, column_length(Result.unit)),
        iterations=list(r.iterations),
        # JSON has no NaN or infinity: such counters are dropped, not the measurement
        counters={k: v for k, v in r.counters.items() if math.isfinite(v)},
        harness={
            "name": r.harness.name,
            "version": r.harness.version,
            "min_time_s": _finite(r.harness.min_time_s),
        }
        if r.HasField("harness")
        else {},
        attempt=attempt,
        reruns=max(0, r.reruns),
        noisy=r.noisy,
        attempt_cvs=[_finite(x) for x in r.attempt_cvs],
        launches=[_launch(lr) for lr in r.launches] if r.launches else None,
        disturbance=_finite(r.disturbance) if r.launches else None,
        agent_version=b.agent_version,
        exit_code=r.exit_code,
        error=storable(r.error) or None,
        stderr_tail=storable(r.stderr_tail) or None,
        started_at=_ts(r.started_at, r.HasField("started_at")),
        finished_at=_ts(r.finished_at, r.HasField("finished_at")),
    )
    if status == "ok":
        samples = list(r.samples)
        launches = list(r.sample_launches) or None
        try:
            s = b.precomputed.get(r.result_id) or stats.compute(samples, launches, r.result_id)
            if isinstance(s, ValueError):
                raise s
        except ValueError as e:  # no samples: not a measurement
            row["status"], row["error"] = "failed", f"result has no usable samples: {e}"
        else:
            row.update(s.as_dict(), samples=samples, sample_launches=launches)
    b.rows.append(row)
    b.stored[row["id"]] = b.machine_id
    if row["status"] == "ok":
        key = (row["kernel_id"], row["params_key"])
        kept = b.latest.get(key)
        # one row per pointer in the batch's upsert (PostgreSQL refuses to update a row twice in one)
        if kept is None or kept["created_at"] <= row["created_at"]:
            b.latest[key] = {
                "machine_id": row["machine_id"],
                "kernel_id": row["kernel_id"],
                "params_key": row["params_key"],
                "result_id": row["id"],
                "created_at": row["created_at"],
            }
    if current:
        _make_current(b, run, item, row)
    return Stored(ack=True)


def refused_by_database(e: SQLAlchemyError) -> bool:
    """The database refuses these values for good (a constraint, a value too long for its column), as
    opposed to failing to store anything just now: SQLSTATE classes 22 (data) and 23 (integrity)."""
    if isinstance(e, DataError | IntegrityError):
        return True
    sqlstate = getattr(e.orig, "sqlstate", None) if isinstance(e, DBAPIError) else None
    return isinstance(sqlstate, str) and sqlstate[:2] in ("22", "23")


async def storage_failed(
    session: AsyncSession, machine_id: str, r: pb.ResultReport, e: SQLAlchemyError
) -> Stored:
    """Storing r alone raised e (its session is gone; this is a new one): acknowledge it if the same
    result landed meanwhile through another stream, else raise Refused. A result the database refuses
    for good is refused as malformed (the agent sets it aside) and fails its item, like any malformed
    report; any other failure is UNAVAILABLE (the agent keeps it and sends it again). Never the
    database's words."""
    b = await open_batch(session, machine_id, [pb.ConnectRequest(result_report=r)])
    if _already_stored(b, r):
        return Stored(ack=True)
    if not refused_by_database(e):
        raise Refused(
            "the server could not store this result now; send it again later",
            UNAVAILABLE,
            run_id=r.run_id,
            result_id=r.result_id,
        )
    bad = Refused("the database refused this result", run_id=r.run_id, result_id=r.result_id)
    try:
        await _fail_refused_item(session, b, r, bad.message)
        bad.run_finished = bool(await close_batch(session, b))
        await session.commit()
    except SQLAlchemyError:
        await session.rollback()
        log.exception("could not fail item %s of run %s after its result was refused", r.item_id, r.run_id)
    raise bad


def _make_current(b: Batch, run: Run, item: RunItem, row: dict[str, Any]) -> None:
    """The result becomes the item's; close_batch ends the run if no item is left open."""
    b.items[item.id] = {
        "b_id": item.id,
        "b_result_id": row["id"],
        "b_state": ITEM_STATE_FOR[row["status"]],
        "b_error": row["error"],
    }
    b.runs[run.id] = run


async def _fail_refused_item(session: AsyncSession, b: Batch, r: pb.ResultReport, why: str) -> None:
    """A malformed report of this agent's running item fails that item (the agent drops the report,
    so it would otherwise stay open for ever): a failed result under a new id says why."""
    try:
        run, item = await _own_item(session, b.machine_id, r.run_id, r.item_id)
    except Refused:
        return
    if b.current_result(item) is not None or run.status != RunStatus.RUNNING:
        return
    spec = await b.spec(session, item.kernel_id)
    row = _result_row(
        id=new_id(),
        run_id=run.id,
        item_id=item.id,
        machine_id=b.machine_id,
        kernel_id=item.kernel_id,
        status="failed",
        params=dict(item.params),
        params_key=params_key(spec, item.params),
        attempt=item.attempt,
        exit_code=r.exit_code,
        error=f"report rejected: {why}",
        started_at=_ts(r.started_at, r.HasField("started_at")),
        finished_at=_ts(r.finished_at, r.HasField("finished_at")),
    )
    b.rows.append(row)
    _make_current(b, run, item, row)
