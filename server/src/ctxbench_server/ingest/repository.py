"""One ingest transaction's worth of streams' messages: what is looked up for all of them at once
(open_batches: one Batch per stream, their lookups shared), the rows they add, and the work left for its
end (close_batches: one INSERT, one UPDATE of their items, the "result stored" listeners, whether the
runs touched are finished), whether the transaction holds one stream's batch or several (group commit)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import BindParameter, Table, bindparam, case, select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.contract.params import from_wire, params_key
from ctxbench_server.ingest.messages import ID_LENGTH, Message, Refused, Report
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
from ctxbench_server.sql import bulk
from ctxbench_server.stored import ResultStored, StoredEvents

# Core, not the ORM's unit of work: a batch's runs and items are read as plain rows, its results go in
# with one executemany of plain rows, and what changed of its items and runs with one executemany each
# (sql/bulk.py: the rows as tuples, without SQLAlchemy's per-row parameter work).
RESULTS = cast(Table, Result.__table__)
_RUNS = cast(Table, Run.__table__)
_ITEMS = cast(Table, RunItem.__table__)
# A batch's items that got a result, by id.
_SET_ITEM_RESULT = (
    _ITEMS.update()
    .where(_ITEMS.c.id == bindparam("b_id"))
    .values(
        result_id=bindparam("b_result_id"),
        state=bindparam("b_state"),
        error=bindparam("b_error"),
        # the launches it ran, when more than its updates counted (an agent sends no progress after
        # the last launch's start: its report says the rest); SET reads the row as it was
        launches_done=case(
            (_ITEMS.c.launches_done < bindparam("b_launches"), bindparam("b_launches")),
            else_=_ITEMS.c.launches_done,
        ),
        launches_wall_s=case(
            (_ITEMS.c.launches_done < bindparam("b_launches"), bindparam("b_wall_s")),
            else_=_ITEMS.c.launches_wall_s,
        ),
        launches_planned=case(
            (_ITEMS.c.launches_planned < bindparam("b_launches"), bindparam("b_launches")),
            else_=_ITEMS.c.launches_planned,
        ),
    )
)
# Items' launch progress (a RunUpdate RUNNING that counts launches).
_SET_ITEM_LAUNCHES = (
    _ITEMS.update()
    .where(_ITEMS.c.id == bindparam("b_id"))
    .values(
        launches_done=bindparam("b_done"),
        launches_planned=bindparam("b_planned"),
        launches_wall_s=bindparam("b_wall_s"),
        launch_at=bindparam("b_at"),
    )
)
# Items marked running (a RunUpdate RUNNING), runs started by one, runs ended.
_SET_ITEM_STATE = _ITEMS.update().where(_ITEMS.c.id == bindparam("b_id")).values(state=bindparam("b_state"))
_SET_RUN_STARTED = (
    _RUNS.update().where(_RUNS.c.id == bindparam("b_id")).values(started_at=bindparam("b_started_at"))
)
_END_RUN = (
    _RUNS.update()
    .where(_RUNS.c.id == bindparam("b_id"))
    .values(status=bindparam("b_status"), error=bindparam("b_error"), finished_at=bindparam("b_finished_at"))
)


def _ids(name: str = "ids") -> BindParameter[Any]:
    return bindparam(name, expanding=True)


# The reads, built once (a statement built for each transaction cost more than running it, at the low
# rates where a batch holds a message or two): each takes its ids as a list, `ids`.
_MACHINES = cast(Table, Machine.__table__)
_KERNELS = cast(Table, MachineKernel.__table__)
_RUNS_OF = select(_RUNS.c.id, _RUNS.c.machine_id, _RUNS.c.status, _RUNS.c.started_at).where(
    _RUNS.c.id.in_(_ids())
)
_ITEMS_OF = select(
    _ITEMS.c.id, _ITEMS.c.run_id, _ITEMS.c.kernel_id, _ITEMS.c.state, _ITEMS.c.result_id, _ITEMS.c.attempt
).where(_ITEMS.c.id.in_(_ids()))
_PARAMS_OF = select(_ITEMS.c.id, _ITEMS.c.params).where(_ITEMS.c.id.in_(_ids()))
_STORED_OF = select(RESULTS.c.id, RESULTS.c.machine_id).where(RESULTS.c.id.in_(_ids()))
_VERSIONS_OF = select(_MACHINES.c.id, _MACHINES.c.agent_version).where(_MACHINES.c.id.in_(_ids()))
# specs of kernels (`kernels`) on machines (`ids`)
_SPECS_OF = select(_KERNELS.c.machine_id, _KERNELS.c.kernel_id, _KERNELS.c.spec).where(
    _KERNELS.c.machine_id.in_(_ids()), _KERNELS.c.kernel_id.in_(_ids("kernels"))
)
# per run of `ids`: one of its items without a result, NULL when it has none. Items run in order, so
# the last one is open until the run's end: read from the last by the (run_id, index) index, the answer
# is usually its first row (counting a run's items would read them all in every transaction).
_OPEN_ITEM = (
    select(_ITEMS.c.id)
    .where(_ITEMS.c.run_id == _RUNS.c.id, _ITEMS.c.result_id.is_(None))
    .order_by(_ITEMS.c.index.desc())
    .limit(1)
    .correlate(_RUNS)
    .scalar_subquery()
)
_OPEN_OF = select(_RUNS.c.id, _OPEN_ITEM).where(_RUNS.c.id.in_(_ids()))
# per run of `ids` (runs with no open item left): whether an item succeeded
_MEASURED_OF = (
    select(_ITEMS.c.run_id)
    .where(_ITEMS.c.run_id.in_(_ids()), _ITEMS.c.state == ItemState.SUCCEEDED)
    .group_by(_ITEMS.c.run_id)
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
        "figure": None,
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
        "estimator": None,
        "agent_version": None,
        "exit_code": 0,
        "error": None,
        "stderr_tail": None,
        "started_at": None,
        "finished_at": None,
        "created_at": utcnow(),
        **values,
    }


@dataclass(slots=True)
class RunRow:
    """What ingest reads and changes of a run (plain columns, not an ORM instance)."""

    id: str
    machine_id: str
    status: str
    started_at: datetime | None


@dataclass(slots=True)
class ItemRow:
    """What ingest reads and changes of a run item."""

    id: str
    run_id: str
    kernel_id: str
    state: str
    result_id: str | None
    attempt: int
    # its typed params, read only for a report that names none (an agent's report names them)
    params: dict[str, Any] | None = None


@dataclass
class Lookups:
    """What open_batches read for all the batches of one transaction, and what their updates changed
    (written by close_batches)."""

    runs: dict[str, RunRow]
    items: dict[str, ItemRow]
    # result id -> machine id, of the result ids already stored (and those stored by these batches)
    stored: dict[str, str]
    machines: set[str]
    specs: dict[tuple[str, str], dict[str, Any] | None] | None = None
    # items marked running, runs started (by id): their UPDATEs at close
    running: dict[str, None] = dataclasses.field(default_factory=dict)
    started: dict[str, RunRow] = dataclasses.field(default_factory=dict)
    # item id -> its launch progress as last told (the _SET_ITEM_LAUNCHES row), written at close
    launches: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    # (machine id, kernel id, its wire params...) -> typed params and params_key (typed())
    points: dict[tuple[str, str, tuple[tuple[str, str], ...]], tuple[dict[str, Any], str]] = (
        dataclasses.field(default_factory=dict)
    )

    def typed(
        self, machine_id: str, kernel_id: str, spec: dict[str, Any] | None, wire: dict[str, str]
    ) -> tuple[dict[str, Any], str]:
        """A report's params as typed values, and their params_key; parsed once a transaction for each
        point (the streams of a fleet running one sweep report the same points). The dict is shared by
        the rows that take it: nothing changes it."""
        point = (machine_id, kernel_id, tuple(sorted(wire.items())))
        got = self.points.get(point)
        if got is None:
            params = from_wire(spec, wire)
            got = self.points[point] = (params, params_key(spec, params))
        return got

    async def item_params(self, session: AsyncSession, item: ItemRow) -> dict[str, Any]:
        """The item's typed params (read now if open_batches did not)."""
        if item.params is None:
            got = await session.execute(_PARAMS_OF, {"ids": [item.id]})
            item.params = got.one()[1]
        return item.params

    async def spec(self, session: AsyncSession, machine_id: str, kernel_id: str) -> dict[str, Any] | None:
        """A machine's spec of a kernel; read once a transaction, for the kernels of the items loaded
        on the batches' machines (plain columns: not the whole catalogs as ORM objects)."""
        if self.specs is None:
            wanted = {x.kernel_id for x in self.items.values()} | {kernel_id}
            wanted_on = {"ids": list(self.machines | {machine_id}), "kernels": list(wanted)}
            self.specs = {(mid, kid): spec for mid, kid, spec in await session.execute(_SPECS_OF, wanted_on)}
        if (machine_id, kernel_id) not in self.specs:  # not loaded by open_batches (none today): ask
            one = {"ids": [machine_id], "kernels": [kernel_id]}
            got = (await session.execute(_SPECS_OF, one)).first()
            self.specs[machine_id, kernel_id] = got[2] if got is not None else None
        return self.specs[machine_id, kernel_id]


@dataclass
class Batch:
    """One stream's messages in a transaction."""

    machine_id: str
    agent_version: str | None
    lookups: Lookups
    # what close_batches writes: the results (rows of one INSERT), their items' new state (one UPDATE
    # by id), and the runs whose items got a current result; what it tells: the results stored
    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    items: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    runs: dict[str, RunRow] = dataclasses.field(default_factory=dict)
    results: list[ResultStored] = dataclasses.field(default_factory=list)

    @property
    def stored(self) -> dict[str, str]:
        return self.lookups.stored

    def current_result(self, item: ItemRow) -> str | None:
        """The item's current result id, this batch's included."""
        done = self.items.get(item.id)
        return done["b_result_id"] if done is not None else item.result_id

    async def spec(self, session: AsyncSession, kernel_id: str) -> dict[str, Any] | None:
        return await self.lookups.spec(session, self.machine_id, kernel_id)

    def own_run(self, run_id: str) -> RunRow:
        """The run, if it is this agent's. Raises Refused."""
        run = self.lookups.runs.get(run_id)
        if run is None:
            raise Refused(f"unknown run {run_id!r}", run_id=run_id)
        if run.machine_id != self.machine_id:
            raise Refused(f"run {run_id!r} is not this agent's", "not_yours", run_id=run_id)
        return run

    def own_item(self, run_id: str, item_id: str) -> tuple[RunRow, ItemRow]:
        """The run and its item, if they are this agent's. Raises Refused."""
        run = self.own_run(run_id)
        item = self.lookups.items.get(item_id)
        if item is None or item.run_id != run_id:
            raise Refused(f"unknown item {item_id!r} in run {run_id!r}", run_id=run_id)
        return run, item


async def open_batches(
    session: AsyncSession, batches: Sequence[tuple[str, Sequence[Message]]]
) -> list[Batch]:
    """One Batch per (machine id, its messages), read in at most four queries for all of them, as plain
    rows of the columns ingest needs (no ORM instances: building them was most of a batch's cost)."""
    msgs = [m for _, ms in batches for m in ms]
    run_ids = {m.run_id for m in msgs if 0 < len(m.run_id) <= ID_LENGTH}
    item_ids = {m.item_id for m in msgs if 0 < len(m.item_id) <= ID_LENGTH}
    result_ids = {m.result_id for m in msgs if isinstance(m, Report) and len(m.result_id) == ID_LENGTH}
    runs: dict[str, RunRow] = {}
    if run_ids:
        runs = {row[0]: RunRow(*row) for row in await session.execute(_RUNS_OF, {"ids": list(run_ids)})}
    items: dict[str, ItemRow] = {}
    if item_ids:
        items = {row[0]: ItemRow(*row) for row in await session.execute(_ITEMS_OF, {"ids": list(item_ids)})}
        # the items' params (a JSON column to decode) only where a report names none, or fails its item
        bare = {m.item_id for m in msgs if isinstance(m, Report) and (m.malformed or not m.params)}
        if bare & items.keys():
            for item_id, params in await session.execute(_PARAMS_OF, {"ids": list(bare & items.keys())}):
                items[item_id].params = params
    stored: dict[str, str] = {}
    if result_ids:
        stored = {rid: mid for rid, mid in await session.execute(_STORED_OF, {"ids": list(result_ids)})}
    # one column, not the machines with their facts: what the batches' results record of their agent
    reporting = {mid for mid, ms in batches if any(isinstance(m, Report) for m in ms)}
    versions: dict[str, str | None] = {}
    if reporting:
        got = await session.execute(_VERSIONS_OF, {"ids": list(reporting)})
        versions = {mid: version for mid, version in got}
    lookups = Lookups(runs, items, stored, {mid for mid, _ in batches})
    return [Batch(mid, versions.get(mid) or None, lookups) for mid, _ in batches]


async def close_batches(
    session: AsyncSession, batches: Sequence[Batch], events: StoredEvents
) -> list[list[str]]:
    """The batches' derived work, once for all: their rows, their items, the "result stored" listeners
    inside the transaction, then each run they touched that has no open item left ends. Returns the
    runs that ended, per batch (not committed)."""
    lookups = batches[0].lookups if batches else None
    items = [item for b in batches for item in b.items.values()]
    if lookups is not None:
        # an item that got its result here too takes that result's state (the UPDATE below) instead
        done = {item["b_id"] for item in items}
        running = [{"b_id": i, "b_state": ItemState.RUNNING} for i in lookups.running if i not in done]
        if running:
            await bulk.execute_many(session, _SET_ITEM_STATE, running)
        if lookups.launches:
            await bulk.execute_many(session, _SET_ITEM_LAUNCHES, list(lookups.launches.values()))
        started = [{"b_id": r.id, "b_started_at": r.started_at} for r in lookups.started.values()]
        if started:
            await bulk.execute_many(session, _SET_RUN_STARTED, started)
    rows = [row for b in batches for row in b.rows]
    if rows:
        await bulk.insert_many(session, RESULTS, rows)
    if items:
        await bulk.execute_many(session, _SET_ITEM_RESULT, items)
    await events.stored(session, [r for b in batches for r in b.results])
    runs = {rid: run for b in batches for rid, run in b.runs.items() if run.status not in FINISHED_RUN}
    if not runs:
        return [[] for _ in batches]
    done_runs = [
        rid for rid, open_item in await session.execute(_OPEN_OF, {"ids": list(runs)}) if open_item is None
    ]
    measured = set()
    if done_runs:
        measured = {rid for (rid,) in await session.execute(_MEASURED_OF, {"ids": done_runs})}
    ended = []
    for run_id in done_runs:
        run = runs[run_id]
        run.status = RunStatus.SUCCEEDED if run_id in measured else RunStatus.FAILED
        error = None if run_id in measured else "no item produced a measurement"
        ended.append({"b_id": run_id, "b_status": run.status, "b_error": error, "b_finished_at": utcnow()})
    if ended:
        await bulk.execute_many(session, _END_RUN, ended)
    finished = {e["b_id"] for e in ended}
    return [[rid for rid in b.runs if rid in finished] for b in batches]
