"""One ingest transaction's worth of a stream's messages: what is looked up for all of them at once
(open_batch), the rows they add, and the work left for its end (close_batch: one INSERT, one UPDATE of
their items, the "result stored" listeners, whether the runs touched are finished)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, bindparam, case, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import defer

from ctxbench_server.kit import stats
from ctxbench_server.kit.stored import ResultStored, StoredEvents
from ctxbench_server.models import (
    FINISHED_RUN,
    ItemState,
    Machine,
    MachineKernel,
    Result,
    Run,
    RunItem,
    RunStatus,
)
from ctxbench_server.models.base import utcnow
from ctxbench_server.runs.reported import ID_LENGTH, Message, Refused, Report

# Core, not the ORM's unit of work: a batch's results go in with one executemany of plain rows.
RESULTS = cast(Table, Result.__table__)
_ITEMS = cast(Table, RunItem.__table__)
# A batch's items that got a result, by id, in one executemany.
_SET_ITEM_RESULT = (
    _ITEMS.update()
    .where(_ITEMS.c.id == bindparam("b_id"))
    .values(result_id=bindparam("b_result_id"), state=bindparam("b_state"), error=bindparam("b_error"))
)


def result_row(**values: Any) -> dict[str, Any]:
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
class Batch:
    machine_id: str
    # result id -> machine id, of the batch's result ids already stored (and those stored by the batch)
    stored: dict[str, str]
    agent_version: str | None
    loaded: list[Run | RunItem]
    specs: dict[str, dict[str, Any] | None] | None = None
    # result id -> its statistics (or why there are none), computed beforehand by compute_stats
    precomputed: dict[str, stats.Stats | ValueError] = dataclasses.field(default_factory=dict)
    # what close_batch writes: the results (rows of one INSERT), their items' new state (one UPDATE by
    # id), and the runs whose items got a current result; what it tells: the results stored
    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    items: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    runs: dict[str, Run] = dataclasses.field(default_factory=dict)
    results: list[ResultStored] = dataclasses.field(default_factory=list)

    def current_result(self, item: RunItem) -> str | None:
        """The item's current result id, this batch's included."""
        done = self.items.get(item.id)
        return done["b_result_id"] if done is not None else item.result_id

    async def spec(self, session: AsyncSession, kernel_id: str) -> dict[str, Any] | None:
        """The machine's spec of a kernel; read once a batch, for the kernels of the items it loaded
        (plain columns: not the whole catalog as ORM objects)."""
        if self.specs is None:
            wanted = {x.kernel_id for x in self.loaded if isinstance(x, RunItem)} | {kernel_id}
            q = select(MachineKernel.kernel_id, MachineKernel.spec).where(
                MachineKernel.machine_id == self.machine_id, MachineKernel.kernel_id.in_(wanted)
            )
            self.specs = {kid: spec for kid, spec in await session.execute(q)}
        if kernel_id not in self.specs:  # an item not loaded by open_batch (none today): ask for it
            q = select(MachineKernel.spec).where(
                MachineKernel.machine_id == self.machine_id, MachineKernel.kernel_id == kernel_id
            )
            self.specs[kernel_id] = (await session.execute(q)).scalar_one_or_none()
        return self.specs[kernel_id]


async def own_run(session: AsyncSession, machine_id: str, run_id: str) -> Run:
    run = await session.get(Run, run_id) if run_id else None
    if run is None:
        raise Refused(f"unknown run {run_id!r}", run_id=run_id)
    if run.machine_id != machine_id:
        raise Refused(f"run {run_id!r} is not this agent's", "not_yours", run_id=run_id)
    return run


async def own_item(session: AsyncSession, machine_id: str, run_id: str, item_id: str) -> tuple[Run, RunItem]:
    run = await own_run(session, machine_id, run_id)
    item = await session.get(RunItem, item_id) if item_id else None
    if item is None or item.run_id != run_id:
        raise Refused(f"unknown item {item_id!r} in run {run_id!r}", run_id=run_id)
    return run, item


async def open_batch(session: AsyncSession, machine_id: str, msgs: Sequence[Message]) -> Batch:
    """Reads what the messages name in three queries (their runs and items land in the session's
    identity map, so each message's own lookups cost nothing), not three per message."""
    run_ids = {m.run_id for m in msgs if 0 < len(m.run_id) <= ID_LENGTH}
    item_ids = {m.item_id for m in msgs if 0 < len(m.item_id) <= ID_LENGTH}
    result_ids = {m.result_id for m in msgs if isinstance(m, Report) and len(m.result_id) == ID_LENGTH}
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
    # one column, not the machine with its facts: what the batch's results record of the agent
    version = (
        (
            await session.execute(select(Machine.agent_version).where(Machine.id == machine_id))
        ).scalar_one_or_none()
        if result_ids
        else None
    )
    return Batch(machine_id, stored, version or None, loaded)


async def close_batch(session: AsyncSession, b: Batch, events: StoredEvents) -> list[str]:
    """The batch's derived work, once: its rows, its items, the "result stored" listeners inside the
    transaction, then each run it touched that has no open item left ends. Returns the runs that ended
    (not committed)."""
    await session.flush()  # what went through the ORM: items marked running, runs started
    if b.rows:
        await session.execute(RESULTS.insert(), b.rows)
    if b.items:
        await session.execute(_SET_ITEM_RESULT, list(b.items.values()))
    await events.stored(session, b.results)
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
