"""The SQL of dispatch: a machine's running run, the claim that starts a machine's next queued run, and
what a StartRun carries of a run, read as plain rows (a batch's 100 x 50 items as ORM objects would cost
more than the rest of its start). JSON is read as its stored text: the builder (dispatch/starts.py)
decodes each distinct text once."""

from __future__ import annotations

import typing
from collections.abc import Collection, Iterable
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from sqlalchemy import Text, cast, exists, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased, selectinload

from ctxbench_server.cluster import lock_machines
from ctxbench_server.errors import NotFound
from ctxbench_server.models import Machine, MachineKernel, Run, RunItem, RunStatus
from ctxbench_server.models.base import utcnow


class StartRow(NamedTuple):
    """A run as its start reads it: what its StartRun carries, and when and on which facts it started."""

    id: str
    machine_id: str
    repetitions: int | None
    min_time_s: float | None
    sample_time_s: float | None
    launches: int | None
    started_at: datetime | None
    facts: dict[str, Any] | None


class ItemRow(Protocol):
    """What a StartRun carries of an item (a row of these columns); `params`: the typed params' JSON text
    as stored."""

    @property
    def run_id(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def kernel_id(self) -> str: ...
    @property
    def params(self) -> str: ...
    @property
    def timeout_s(self) -> float: ...


_START_COLUMNS = (
    Run.id,
    Run.machine_id,
    Run.repetitions,
    Run.min_time_s,
    Run.sample_time_s,
    Run.launches,
    Run.started_at,
    Run.facts,
)


async def load_run(session: AsyncSession, run_id: str) -> Run:
    run = await session.get(Run, run_id, options=[selectinload(Run.items)], populate_existing=True)
    if run is None:
        raise NotFound(f"run {run_id!r} not found")
    return run


async def running_run(session: AsyncSession, machine_id: str) -> Run | None:
    q = (
        select(Run)
        .where(Run.machine_id == machine_id, Run.status == RunStatus.RUNNING)
        .order_by(Run.started_at)
        .limit(1)
    )
    return (await session.scalars(q)).first()


async def claim_next(session: AsyncSession, machine_ids: Collection[str]) -> list[StartRow]:
    """Each of the machines that runs nothing: its oldest queued run marked running, started now, with
    the machine's facts copied in SQL; in the session's transaction, for the caller to commit. The
    UPDATE is conditional (still queued, its machine still running nothing), and on PostgreSQL the
    transaction first takes every machine's advisory lock: two server processes never start one run
    twice, nor two runs on one machine."""
    await lock_machines(session, machine_ids)
    next_ids = await _next_queued(session, machine_ids)
    if not next_ids:
        return []
    other = aliased(Run)
    busy = exists().where(other.machine_id == Run.machine_id, other.status == RunStatus.RUNNING)
    facts = select(Machine.facts).where(Machine.id == Run.machine_id).scalar_subquery()
    claim = (
        update(Run)
        .where(Run.id.in_(next_ids), Run.status == RunStatus.QUEUED, ~busy)
        .values(status=RunStatus.RUNNING, started_at=utcnow(), facts=facts)
        .returning(*_START_COLUMNS)
        .execution_options(synchronize_session=False)
    )
    return [StartRow(*row) for row in await session.execute(claim)]


async def start_row(session: AsyncSession, run_id: str) -> StartRow:
    row = (await session.execute(select(*_START_COLUMNS).where(Run.id == run_id))).one()
    return StartRow(*row)


async def open_items(session: AsyncSession, run_ids: Collection[str]) -> Iterable[ItemRow]:
    """The runs' items without a result, by run and in index order, each row made as it is iterated
    (for the caller to turn into what it needs and let go: a batch's 5000 rows kept at once would be a
    fair share of its allocations, and of its garbage collections)."""
    q = (
        select(
            RunItem.run_id,
            RunItem.id,
            RunItem.kernel_id,
            cast(RunItem.params, Text).label("params"),
            RunItem.timeout_s,
        )
        .where(RunItem.run_id.in_(list(run_ids)), RunItem.result_id.is_(None))
        .order_by(RunItem.run_id, RunItem.index)
    )
    return typing.cast(Iterable[ItemRow], await session.execute(q))


async def spec_texts(session: AsyncSession, runs: Collection[StartRow]) -> dict[str, dict[str, str]]:
    """machine id -> kernel id -> the machine's spec of it as stored JSON text, for the kernels of these
    runs' items only (a kernel no longer in a machine's catalog is missing)."""
    out: dict[str, dict[str, str]] = {run.machine_id: {} for run in runs}
    kernels = select(RunItem.kernel_id).where(RunItem.run_id.in_([run.id for run in runs])).distinct()
    q = select(MachineKernel.machine_id, MachineKernel.kernel_id, cast(MachineKernel.spec, Text)).where(
        MachineKernel.machine_id.in_(list(out)), MachineKernel.kernel_id.in_(kernels)
    )
    for mid, kid, spec in await session.execute(q):
        out[mid][kid] = spec
    return out


async def _next_queued(session: AsyncSession, machine_ids: Collection[str]) -> list[str]:
    """The oldest queued run of each of the machines that runs nothing."""
    busy = set(
        await session.scalars(
            select(Run.machine_id).where(Run.machine_id.in_(machine_ids), Run.status == RunStatus.RUNNING)
        )
    )
    idle = [mid for mid in machine_ids if mid not in busy]
    if not idle:
        return []
    queued = await session.execute(
        select(Run.machine_id, Run.id)
        .where(Run.machine_id.in_(idle), Run.status == RunStatus.QUEUED)
        .order_by(Run.machine_id, Run.queued_at, Run.created_at, Run.id)
    )
    first: dict[str, str] = {}
    for mid, rid in queued:
        first.setdefault(mid, rid)
    return list(first.values())
