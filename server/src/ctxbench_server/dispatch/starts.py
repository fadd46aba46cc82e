"""Starting runs on agents: the StartRun messages of a run (in parts when it does not fit one gRPC
message), and the next run of many machines started in one transaction (a batch POST)."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.cluster import lock_machines, locked_machine
from ctxbench_server.contract.aliases import as_listed
from ctxbench_server.contract.params import to_wire
from ctxbench_server.dispatch.commands import StartItem, StartRun, params_size_bound, wire_size_bound
from ctxbench_server.dispatch.hub import AgentConnection
from ctxbench_server.machines.service import catalogs
from ctxbench_server.models import Machine, Run, RunItem, RunStatus
from ctxbench_server.models.base import utcnow

if TYPE_CHECKING:
    from ctxbench_server.dispatch.dispatcher import Dispatcher

log = logging.getLogger(__name__)
T = TypeVar("T")

# What one StartRun may take on the wire: agents receive at most 4 MiB per gRPC message (grpc's default).
# A run's items past this go in further parts (StartRun.more / continued) to agents that take parts.
MAX_START_RUN_BYTES = 3 * 1024 * 1024


class WireCache:
    """Params put in wire form, shared by a batch's machines: by the machine's spec of the kernel (as
    JSON) and the typed params, by identity (a batch's like machines share one expansion, so one dict
    per point) else by value (items read back from the database)."""

    def __init__(self) -> None:
        # id(params) -> (params, its wire form): the dict is kept so that its id is not reused
        self.by_id: dict[tuple[str, int], tuple[Mapping[str, Any], dict[str, str]]] = {}
        self.by_value: dict[tuple[str, str], dict[str, str]] = {}
        self.spec_keys: dict[int, tuple[Mapping[str, Any] | None, str]] = {}  # the same, for specs

    def spec_key(self, spec: Mapping[str, Any] | None) -> str:
        got = self.spec_keys.get(id(spec))
        if got is None:
            got = self.spec_keys[id(spec)] = (spec, json.dumps(spec, sort_keys=True))
        return got[1]

    def params(self, spec: Mapping[str, Any] | None, typed: Mapping[str, Any]) -> dict[str, str]:
        skey = self.spec_key(spec)
        hit = self.by_id.get((skey, id(typed)))
        if hit is not None:
            return hit[1]
        vkey = (skey, json.dumps(typed, sort_keys=True))
        wire = self.by_value.get(vkey)
        if wire is None:
            wire = self.by_value[vkey] = to_wire(spec or {}, typed)
        self.by_id[(skey, id(typed))] = (typed, wire)
        return wire


class RunRow(Protocol):
    """What StartRun carries of a run (a Run, or a row of these columns)."""

    id: str
    repetitions: int | None
    min_time_s: float | None
    sample_time_s: float | None
    launches: int | None


def run_items(
    run: RunRow, items: Iterable[Any], specs: Mapping[str, dict[str, Any]], wire: WireCache | None = None
) -> list[StartItem]:
    """The run's items still without a result, as the agent gets them. `items`: in their order (by
    index), RunItems or rows with their id, kernel_id, params, timeout_s and result_id. `wire`: params
    already put in wire form (a batch's machines share most of them)."""
    wire = WireCache() if wire is None else wire
    repetitions, min_time_s = run.repetitions or 0, run.min_time_s or 0.0
    launches = run.launches or 1  # runs stored before launches: one process, as then
    return [
        StartItem(
            item_id=it.id,
            kernel_id=as_listed(it.kernel_id, specs.get(it.kernel_id)),  # an old agent: its old id
            params=wire.params(specs.get(it.kernel_id), it.params),
            repetitions=repetitions,
            min_time_s=min_time_s,
            sample_time_s=run.sample_time_s or 0.0,
            timeout_s=it.timeout_s,
            launches=launches,
        )
        for it in items
        if it.result_id is None
    ]


def start_messages(
    run_id: str, items: Sequence[StartItem], by_params: dict[int, int] | None = None
) -> list[StartRun]:
    """One StartRun when the items fit in MAX_START_RUN_BYTES (what every agent understands); else parts
    of at most that each: the first with `more`, the next ones `continued`, the last without `more`.
    Sized by wire_size_bound (never less than protobuf's bytes); `by_params`: id of a params dict -> its
    params_size_bound, for dicts that outlive it (WireCache's, shared by a batch's machines)."""
    max_bytes = MAX_START_RUN_BYTES
    by_params = {} if by_params is None else by_params  # items share their params dicts (WireCache)
    sizes = []
    for item in items:
        n = by_params.get(id(item.params))
        if n is None:
            n = by_params[id(item.params)] = params_size_bound(item.params)
        sizes.append(wire_size_bound(item, n))
    if sum(sizes) <= max_bytes:  # the usual case
        return [StartRun(run_id, list(items))]
    parts: list[list[StartItem]] = [[]]
    size = 0
    for item, n in zip(items, sizes, strict=True):
        if parts[-1] and size + n > max_bytes:
            parts.append([])
            size = 0
        parts[-1].append(item)
        size += n
    last = len(parts) - 1
    return [StartRun(run_id, part, more=i < last, continued=i > 0) for i, part in enumerate(parts)]


def send_start(
    conn: AgentConnection, run: RunRow, items: list[StartItem], by_params: dict[int, int] | None = None
) -> int:
    """Pushes the run's StartRun, in parts in a row when it needs several (nothing goes between them).
    An agent that takes no parts (older than them) gets the first part as a plain StartRun: it runs
    those items, and as it goes idle with items of the run still open, Dispatcher.on_heartbeat sends the
    open ones again (the next part). Returns the items sent."""
    msgs = start_messages(run.id, items, by_params)
    conn.current_run_id = run.id  # what a cancel on another server process stops (Dispatcher.reconcile)
    if len(msgs) > 1 and not conn.start_run_parts:
        first = msgs[0].items
        log.warning(
            "run %s: %d items take more than one message and agent %s takes no parts (an older agent): "
            "sent the first %d; the rest follow as it goes idle",
            run.id,
            len(items),
            conn.machine_id,
            len(first),
        )
        conn.send(StartRun(run.id, first))
        return len(first)
    for msg in msgs:
        conn.send(msg)
    return len(items)


class ItemRow(NamedTuple):
    """What StartRun carries of an item (run_items' duck type), from a row or from the POST's insert."""

    id: str
    kernel_id: str
    params: dict[str, Any]
    timeout_s: float
    result_id: str | None = None


async def start_many(
    dispatcher: Dispatcher[Any],
    machine_ids: Iterable[str],
    known: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    known_specs: Mapping[str, dict[str, dict[str, Any]]] | None = None,
    between: Callable[[], Awaitable[T]] | None = None,
) -> T | None:
    """Dispatcher.kick for many machines at once (a batch POST): every connected machine without a
    running run starts its oldest queued run, all in one transaction, with five statements in all rather
    than five per machine. `known`: items just inserted, by run id (the POST's own, in index order), and
    `known_specs` the machines' catalogs just read (by machine id): not read again. Takes the machines'
    locks (in order: never a deadlock). `between`: awaited once the runs are stored as running and
    before their StartRuns are queued, the locks still held; its answer is returned. The POST reads its
    answer there: the streams then build their messages (~30 ms for 100 x 50) after it, not during it."""
    hub = dispatcher.hub
    ids = sorted(set(machine_ids))
    conns = {mid: conn for mid in ids if (conn := hub.get(mid)) is not None}
    for mid in ids:
        if mid not in conns:  # its stream is on another server process (or none yet): that one starts it
            dispatcher.tell_holder(mid)
    if not conns:
        return await between() if between is not None else None
    async with contextlib.AsyncExitStack() as locked:
        for mid in conns:
            await locked.enter_async_context(hub.locks[mid])
        # No machine's advisory lock from `locked_machine` (the last lock entered): the transaction that
        # starts the runs takes every machine's itself, in order; `between` is a read and takes none (it
        # would hold one until its session closed, and a report of a run just started would wait).
        unlocked = locked_machine.set(None)
        started = None
        try:
            started = await _mark_started(dispatcher, list(conns), known, known_specs)
            answer = await between() if between is not None else None
        finally:  # stored as running: they go out whatever became of the answer
            locked_machine.reset(unlocked)
            if started is not None:
                _send(dispatcher, conns, *started)
    return answer


async def _mark_started(
    dispatcher: Dispatcher[Any],
    machine_ids: list[str],
    known: Mapping[str, Sequence[Mapping[str, Any]]] | None,
    known_specs: Mapping[str, dict[str, dict[str, Any]]] | None,
) -> tuple[Sequence[Any], dict[str, list[ItemRow]], dict[str, dict[str, dict[str, Any]]]] | None:
    """Each idle machine's oldest queued run stored as running, in one transaction (the machines'
    locks held by the caller; on PostgreSQL the transaction takes their advisory locks): those runs,
    their items and the machines' catalogs; None: none started."""
    async with dispatcher.rest_sessionmaker() as session:
        await lock_machines(session, machine_ids)
        first = await _next_runs(session, machine_ids)
        if not first:
            return None
        runs = (
            await session.execute(
                select(
                    Run.id, Run.machine_id, Run.repetitions, Run.min_time_s, Run.sample_time_s, Run.launches
                ).where(Run.id.in_(first.values()))
            )
        ).all()
        items = await _items(session, [run.id for run in runs], known or {})
        specs = dict(known_specs or {})
        if any(mid not in specs for mid in first):
            specs.update(await catalogs(session, [mid for mid in first if mid not in specs]))
        # The facts snapshot is copied in SQL (no machine's facts read and written back here).
        facts = select(Machine.facts).where(Machine.id == Run.machine_id).scalar_subquery()
        await session.execute(
            update(Run)
            .where(Run.id.in_(first.values()))
            .values(status=RunStatus.RUNNING, started_at=utcnow(), facts=facts)
            .execution_options(synchronize_session=False)
        )
        await session.commit()
    return runs, items, specs


def _send(
    dispatcher: Dispatcher[Any],
    conns: Mapping[str, AgentConnection],
    runs: Sequence[Any],
    items: Mapping[str, list[ItemRow]],
    specs: Mapping[str, dict[str, dict[str, Any]]],
) -> None:
    """Queues the started runs' StartRuns (their params in wire form once for all machines)."""
    wire = WireCache()
    sizes: dict[int, int] = {}  # of wire's params dicts (alive as long as it is)
    total = 0
    for run in runs:
        dispatcher.events.notify(run.id)
        start = run_items(run, items[run.id], specs[run.machine_id], wire)
        sent = send_start(conns[run.machine_id], run, start, sizes)
        total += sent
        log.debug("dispatched run %s to %s: %d items", run.id, run.machine_id, sent)
    # one line for the batch (a line a run was 3 % of a 100-machine POST)
    log.info("dispatched %d runs, %d items: %s", len(runs), total, ", ".join(sorted(r.id for r in runs)))


async def _next_runs(session: AsyncSession, machine_ids: list[str]) -> dict[str, str]:
    """machine id -> its oldest queued run, for those of the machines with no running run."""
    busy = set(
        await session.scalars(
            select(Run.machine_id).where(Run.machine_id.in_(machine_ids), Run.status == RunStatus.RUNNING)
        )
    )
    idle = [mid for mid in machine_ids if mid not in busy]
    if not idle:
        return {}
    queued = await session.execute(
        select(Run.machine_id, Run.id)
        .where(Run.machine_id.in_(idle), Run.status == RunStatus.QUEUED)
        .order_by(Run.machine_id, Run.queued_at, Run.created_at, Run.id)
    )
    first: dict[str, str] = {}
    for mid, rid in queued:
        first.setdefault(mid, rid)
    return first


async def _items(
    session: AsyncSession, run_ids: list[str], known: Mapping[str, Sequence[Mapping[str, Any]]]
) -> dict[str, list[ItemRow]]:
    """The runs' items by run id, in index order: those in `known` as they are, the rest read (as plain
    rows, not 100 x 50 ORM objects: only what StartRun carries)."""
    out: dict[str, list[ItemRow]] = {}
    for rid in run_ids:
        if rid in known:
            out[rid] = [
                ItemRow(it["id"], it["kernel_id"], it["params"], it["timeout_s"]) for it in known[rid]
            ]
    unknown = [rid for rid in run_ids if rid not in out]
    if unknown:
        q = select(
            RunItem.run_id,
            RunItem.id,
            RunItem.kernel_id,
            RunItem.params,
            RunItem.timeout_s,
            RunItem.result_id,
        ).where(RunItem.run_id.in_(unknown))
        for rid in unknown:
            out[rid] = []
        for row in await session.execute(q.order_by(RunItem.run_id, RunItem.index)):
            out[row.run_id].append(ItemRow(row.id, row.kernel_id, row.params, row.timeout_s, row.result_id))
    return out
