"""Starting runs on agents: the StartRun messages of a run (in parts when it does not fit one gRPC
message), and the next run of many machines started in one transaction (a batch POST)."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ctxbench_server.dispatch.commands import StartItem, StartRun, wire_size_bound
from ctxbench_server.dispatch.hub import AgentConnection
from ctxbench_server.kit.params import to_wire
from ctxbench_server.machines.service import catalogs
from ctxbench_server.models import Machine, Run, RunItem, RunStatus
from ctxbench_server.models.base import utcnow

if TYPE_CHECKING:
    from ctxbench_server.dispatch.dispatcher import Dispatcher

log = logging.getLogger(__name__)

# What one StartRun may take on the wire: agents receive at most 4 MiB per gRPC message (grpc's default).
# A run's items past this go in further parts (StartRun.more / continued) to agents that take parts.
MAX_START_RUN_BYTES = 3 * 1024 * 1024


# (the machine's spec of the kernel, the typed params), both as JSON -> the params in wire form
WireCache = dict[tuple[str, str], dict[str, str]]


def run_items(
    run: Run, items: Iterable[Any], specs: Mapping[str, dict[str, Any]], wire: WireCache | None = None
) -> list[StartItem]:
    """The run's items still without a result, as the agent gets them. `items`: in their order (by
    index), RunItems or rows with their id, kernel_id, params, timeout_s and result_id. `wire`: params already
    put in wire form, by kernel and params (a batch's machines share most of them)."""
    wire = {} if wire is None else wire
    spec_keys: dict[str, str] = {}  # the wire form depends on the machine's spec of the kernel too
    out = []
    for it in items:
        if it.result_id is not None:
            continue
        spec_key = spec_keys.get(it.kernel_id)
        if spec_key is None:
            spec_key = spec_keys[it.kernel_id] = json.dumps(specs.get(it.kernel_id), sort_keys=True)
        key = (spec_key, json.dumps(it.params, sort_keys=True))
        params = wire.get(key)
        if params is None:
            params = wire[key] = to_wire(specs.get(it.kernel_id, {}), it.params)
        out.append(
            StartItem(
                item_id=it.id,
                kernel_id=it.kernel_id,
                params=params,
                repetitions=run.repetitions or 0,
                min_time_s=run.min_time_s or 0.0,
                timeout_s=it.timeout_s,
                launches=run.launches or 1,  # runs stored before launches: one process, as then
            )
        )
    return out


def start_messages(run_id: str, items: Sequence[StartItem]) -> list[StartRun]:
    """One StartRun when the items fit in MAX_START_RUN_BYTES (what every agent understands); else parts
    of at most that each: the first with `more`, the next ones `continued`, the last without `more`.
    Sized by wire_size_bound (never less than protobuf's bytes)."""
    max_bytes = MAX_START_RUN_BYTES
    sizes = [wire_size_bound(item) for item in items]
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


def send_start(conn: AgentConnection, run: Run, items: list[StartItem]) -> int:
    """Pushes the run's StartRun, in parts in a row when it needs several (nothing goes between them).
    An agent that takes no parts (older than them) gets the first part as a plain StartRun: it runs
    those items, and as it goes idle with items of the run still open, Dispatcher.on_heartbeat sends the
    open ones again (the next part). Returns the items sent."""
    msgs = start_messages(run.id, items)
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


async def start_many(dispatcher: Dispatcher[Any], machine_ids: Iterable[str]) -> None:
    """Dispatcher.kick for many machines at once (a batch POST): every connected machine without a
    running run starts its oldest queued run, all in one transaction, read with five queries in all
    rather than five per machine. Takes the machines' locks (in order: never a deadlock)."""
    hub = dispatcher.hub
    ids = sorted(set(machine_ids))
    conns = {mid: conn for mid in ids if (conn := hub.get(mid)) is not None}
    for mid in ids:
        if mid not in conns:  # its stream is on another server process (or none yet): that one starts it
            dispatcher.tell_holder(mid)
    if not conns:
        return
    async with contextlib.AsyncExitStack() as locked:
        for mid in conns:
            await locked.enter_async_context(hub.locks[mid])
        async with dispatcher.rest_sessionmaker() as session:
            busy = set(
                await session.scalars(
                    select(Run.machine_id).where(Run.machine_id.in_(conns), Run.status == RunStatus.RUNNING)
                )
            )
            idle = [mid for mid in conns if mid not in busy]
            if not idle:
                return
            queued = await session.execute(
                select(Run.machine_id, Run.id)
                .where(Run.machine_id.in_(idle), Run.status == RunStatus.QUEUED)
                .order_by(Run.machine_id, Run.queued_at, Run.created_at, Run.id)
            )
            first: dict[str, str] = {}
            for mid, rid in queued:
                first.setdefault(mid, rid)
            if not first:
                return
            runs = (
                await session.scalars(
                    select(Run).where(Run.id.in_(first.values())).execution_options(populate_existing=True)
                )
            ).all()
            # plain rows, not 100 x 50 ORM objects: only what StartRun carries
            items: dict[str, list[Any]] = {run.id: [] for run in runs}
            q = select(
                RunItem.run_id,
                RunItem.id,
                RunItem.kernel_id,
                RunItem.params,
                RunItem.timeout_s,
                RunItem.result_id,
            ).where(RunItem.run_id.in_(items))
            for row in await session.execute(q.order_by(RunItem.run_id, RunItem.index)):
                items[row.run_id].append(row)
            facts: dict[str, Any] = dict(
                (await session.execute(select(Machine.id, Machine.facts).where(Machine.id.in_(first)))).all()
            )
            specs = await catalogs(session, first)
            now = utcnow()
            for run in runs:
                run.status = RunStatus.RUNNING
                run.started_at = now
                run.facts = facts.get(run.machine_id)
            await session.commit()
        wire: WireCache = {}
        for run in runs:
            dispatcher.events.notify(run.id)
            sent = send_start(
                conns[run.machine_id], run, run_items(run, items[run.id], specs[run.machine_id], wire)
            )
            log.info("dispatched run %s to %s: %d items", run.id, run.machine_id, sent)
