"""What agents report back: item progress (advisory) and results (stored once, decide the run)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.kit import stats
from ctxbench_server.kit.params import from_wire, params_key
from ctxbench_server.machines.service import catalog
from ctxbench_server.models import FINISHED_RUN, ItemState, Result, Run, RunItem, RunStatus
from ctxbench_server.models.base import utcnow

log = logging.getLogger(__name__)

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


class Refused(Exception):
    """A report the server will not store (unknown run or item, or another machine's run)."""


@dataclass
class Stored:
    ack: bool
    run_finished: bool = False


def _ts(t: Timestamp, present: bool) -> datetime | None:
    return t.ToDatetime(tzinfo=UTC) if present else None


async def _own_item(session: AsyncSession, machine_id: str, run_id: str, item_id: str) -> tuple[Run, RunItem]:
    run = await session.get(Run, run_id)
    if run is None:
        raise Refused(f"unknown run {run_id!r}")
    if run.machine_id != machine_id:
        raise Refused(f"run {run_id!r} belongs to machine {run.machine_id!r}")
    item = await session.get(RunItem, item_id)
    if item is None or item.run_id != run_id:
        raise Refused(f"unknown item {item_id!r} in run {run_id!r}")
    return run, item


async def record_update(session: AsyncSession, machine_id: str, u: pb.RunUpdate) -> None:
    """RUNNING marks the item (and a queued run) running; the rest is advisory and only logged."""
    if u.state != pb.ITEM_STATE_RUNNING or not u.item_id:
        log.debug("run %s: %s %s", u.run_id, pb.ItemState.Name(u.state), u.message)
        return
    run, item = await _own_item(session, machine_id, u.run_id, u.item_id)
    if run.status in FINISHED_RUN:
        return
    if item.state == ItemState.QUEUED:
        item.state = ItemState.RUNNING
    if run.status == RunStatus.QUEUED:
        run.status = RunStatus.RUNNING
    if run.started_at is None:
        run.started_at = utcnow()
    await session.commit()


async def record_result(session: AsyncSession, machine_id: str, r: pb.ResultReport) -> Stored:
    """Stores a result once (by result_id); a repeat is just acknowledged again. Raises Refused."""
    if not r.result_id or len(r.result_id) > 36:
        raise Refused(f"bad result id {r.result_id!r}")
    if await session.get(Result, r.result_id) is not None:
        return Stored(ack=True)
    run, item = await _own_item(session, machine_id, r.run_id, r.item_id)
    if item.result_id is not None:
        log.warning(
            "item %s already has result %s; dropping second result %s", item.id, item.result_id, r.result_id
        )
        return Stored(ack=True)

    status = RESULT_STATUS.get(r.status, "failed")
    error = r.error or None
    samples = list(r.samples)
    if r.kernel_id and r.kernel_id != item.kernel_id:
        log.warning(
            "result %s names kernel %r but item %s is %r", r.result_id, r.kernel_id, item.id, item.kernel_id
        )
    spec = (await catalog(session, machine_id)).get(item.kernel_id)
    params = from_wire(spec, r.params) if r.params else dict(item.params)
    result = Result(
        id=r.result_id,
        run_id=run.id,
        item_id=item.id,
        machine_id=machine_id,
        kernel_id=item.kernel_id,
        params=params,
        params_key=params_key(spec, params),
        unit=r.unit,
        samples=[],
        iterations=list(r.iterations),
        counters=dict(r.counters),
        harness={"name": r.harness.name, "version": r.harness.version, "min_time_s": r.harness.min_time_s}
        if r.HasField("harness")
        else {},
        exit_code=r.exit_code,
        stderr_tail=r.stderr_tail or None,
        started_at=_ts(r.started_at, r.HasField("started_at")),
        finished_at=_ts(r.finished_at, r.HasField("finished_at")),
    )
    if status == "ok":
        try:
            s = stats.compute(samples)
        except ValueError as e:  # no samples, NaN or inf: not a measurement
            status, error = "failed", f"result has no usable samples: {e}"
            result.samples = [x for x in samples if x == x and abs(x) != float("inf")]
        else:
            result.samples = samples
            for k, v in s.as_dict().items():
                setattr(result, k, v)
    result.status = status
    result.error = error
    session.add(result)

    item.result_id = result.id
    item.state = ITEM_STATE_FOR[status]
    item.error = error
    finished = False
    if run.status not in FINISHED_RUN:
        await session.flush()
        open_items = await session.scalar(
            select(func.count()).where(RunItem.run_id == run.id, RunItem.result_id.is_(None))
        )
        if open_items == 0:
            measured = bool(
                await session.scalar(
                    select(func.count()).where(RunItem.run_id == run.id, RunItem.state == ItemState.SUCCEEDED)
                )
            )
            run.status = RunStatus.SUCCEEDED if measured else RunStatus.FAILED
            run.error = None if measured else "no item produced a measurement"
            run.finished_at = utcnow()
            finished = True
    await session.commit()
    return Stored(ack=True, run_finished=finished)
