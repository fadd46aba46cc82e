"""What agents report back: item progress (advisory) and results (stored once, decide the run)."""

from __future__ import annotations

import logging
import math
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy import func, select
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.compare import latest
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
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


@dataclass
class Stored:
    ack: bool
    run_finished: bool = False


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


async def record_update(session: AsyncSession, machine_id: str, u: pb.RunUpdate) -> None:
    """RUNNING marks the item (and a queued run) running; the rest is advisory and only logged.
    Raises Refused for a run (or item) that is unknown or not this agent's."""
    if u.state != pb.ITEM_STATE_RUNNING or not u.item_id:
        await _own_run(session, machine_id, u.run_id)
        log.debug("run %s: %s %s", u.run_id, pb.ItemState.Name(u.state), u.message)
        return
    run, item = await _own_item(session, machine_id, u.run_id, u.item_id)
    if run.status in FINISHED_RUN or run.status == RunStatus.QUEUED:
        return  # a late update of a finished (or finished and retried) run
    if item.state == ItemState.QUEUED:
        item.state = ItemState.RUNNING
    if run.started_at is None:
        run.started_at = utcnow()
    await session.commit()


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


async def _already_stored(session: AsyncSession, machine_id: str, r: pb.ResultReport) -> bool:
    """True when this result is stored already (a repeat is acknowledged again); Refused when the id is
    another machine's."""
    existing = await session.get(Result, r.result_id)
    if existing is None:
        return False
    if existing.machine_id != machine_id:
        raise Refused(f"result {r.result_id!r} is not this agent's", PERMISSION_DENIED, r.run_id, r.result_id)
    return True


async def record_result(session: AsyncSession, machine_id: str, r: pb.ResultReport) -> Stored:
    """Stores a result once (by result_id); a repeat is just acknowledged again. Raises Refused.

    The result becomes its item's current result unless the item already has one, or it is a stale
    report of an earlier attempt (the run was retried: it is queued, or a CANCELLED report arrives for
    a run nobody cancelled); those are stored as history only.
    """
    try:
        check_report(r)
    except Refused as bad:
        bad.run_finished = await _fail_refused_item(session, machine_id, r, bad.message)
        raise
    if await _already_stored(session, machine_id, r):
        return Stored(ack=True)
    try:
        run, item = await _own_item(session, machine_id, r.run_id, r.item_id)
    except Refused as e:
        e.result_id = r.result_id
        raise
    status = RESULT_STATUS.get(r.status, "failed")
    current = item.result_id is None
    attempt = item.attempt
    if current and (
        run.status == RunStatus.QUEUED or (status == "cancelled" and run.status == RunStatus.RUNNING)
    ):
        current, attempt = False, max(1, item.attempt - 1)
        log.info("result %s of item %s is from an earlier attempt; kept as history", r.result_id, item.id)
    elif not current:
        log.warning(
            "item %s already has result %s; second result %s kept as history only",
            item.id,
            item.result_id,
            r.result_id,
        )

    error = storable(r.error) or None
    samples = list(r.samples)
    if r.kernel_id and r.kernel_id != item.kernel_id:
        log.warning(
            "result %s names kernel %r but item %s is %r", r.result_id, r.kernel_id, item.id, item.kernel_id
        )
    spec = (await catalog(session, machine_id)).get(item.kernel_id)
    params = from_wire(spec, r.params) if r.params else dict(item.params)
    machine = await session.get(Machine, machine_id)
    result = Result(
        id=r.result_id,
        run_id=run.id,
        item_id=item.id,
        machine_id=machine_id,
        kernel_id=item.kernel_id,
        params=params,
        params_key=params_key(spec, params),
        unit=storable(r.unit, column_length(Result.unit)),
        samples=[],
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
        sample_launches=list(r.sample_launches) if r.sample_launches and status == "ok" else None,
        launches=[_launch(lr) for lr in r.launches] if r.launches else None,
        disturbance=_finite(r.disturbance) if r.launches else None,
        agent_version=(machine.agent_version or None) if machine else None,
        exit_code=r.exit_code,
        stderr_tail=storable(r.stderr_tail) or None,
        started_at=_ts(r.started_at, r.HasField("started_at")),
        finished_at=_ts(r.finished_at, r.HasField("finished_at")),
    )
    if status == "ok":
        try:
            s = stats.compute(samples, result.sample_launches, r.result_id)
        except ValueError as e:  # no samples: not a measurement
            status, error = "failed", f"result has no usable samples: {e}"
            result.sample_launches = None
        else:
            result.samples = samples
            for k, v in s.as_dict().items():
                setattr(result, k, v)
    result.status = status
    result.error = error
    session.add(result)
    if status == "ok":
        await latest.record(session, result)
    if not current:
        await session.commit()
        return Stored(ack=True)

    finished = await _make_current(session, run, item, result)
    await session.commit()
    return Stored(ack=True, run_finished=finished)


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
    """Storing r raised e and the session was rolled back: acknowledge it if the same result landed
    meanwhile through another stream, else raise Refused. A result the database refuses for good is
    refused as malformed (the agent sets it aside) and fails its item, like any malformed report; any
    other failure is UNAVAILABLE (the agent keeps it and sends it again). Never the database's words."""
    if await _already_stored(session, machine_id, r):
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
        bad.run_finished = await _fail_refused_item(session, machine_id, r, bad.message)
    except SQLAlchemyError:
        await session.rollback()
        log.exception("could not fail item %s of run %s after its result was refused", r.item_id, r.run_id)
    raise bad


async def _make_current(session: AsyncSession, run: Run, item: RunItem, result: Result) -> bool:
    """The result becomes the item's; when no item is left open the run ends. True if it ended."""
    item.result_id = result.id
    item.state = ITEM_STATE_FOR[result.status]
    item.error = result.error
    if run.status in FINISHED_RUN:
        return False
    await session.flush()
    open_items = await session.scalar(
        select(func.count()).where(RunItem.run_id == run.id, RunItem.result_id.is_(None))
    )
    if open_items:
        return False
    measured = bool(
        await session.scalar(
            select(func.count()).where(RunItem.run_id == run.id, RunItem.state == ItemState.SUCCEEDED)
        )
    )
    run.status = RunStatus.SUCCEEDED if measured else RunStatus.FAILED
    run.error = None if measured else "no item produced a measurement"
    run.finished_at = utcnow()
    return True


async def _fail_refused_item(session: AsyncSession, machine_id: str, r: pb.ResultReport, why: str) -> bool:
    """A malformed report of this agent's running item fails that item (the agent drops the report,
    so it would otherwise stay open for ever): a failed result under a new id says why. True if that
    finished the run."""
    try:
        run, item = await _own_item(session, machine_id, r.run_id, r.item_id)
    except Refused:
        return False
    if item.result_id is not None or run.status != RunStatus.RUNNING:
        return False
    spec = (await catalog(session, machine_id)).get(item.kernel_id)
    result = Result(
        id=new_id(),
        run_id=run.id,
        item_id=item.id,
        machine_id=machine_id,
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
    session.add(result)
    finished = await _make_current(session, run, item, result)
    await session.commit()
    return finished
