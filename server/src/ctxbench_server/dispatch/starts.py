"""Starting runs on agents, the one way: `RunStarter.start` claims each free machine's next queued run
(dispatch/repository.py), builds its StartRun (in parts when it does not fit one gRPC message) and hands
it to the machine's stream. A single POST, a batch POST, a schedule firing, a Hello, a finished run
freeing its machine, a cancel, a retry and another server process's news all start runs through it;
`resend` sends a running run's open items again (a reconnect, an agent idle with items open)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server.contract.aliases import as_listed
from ctxbench_server.contract.params import to_wire
from ctxbench_server.db import writing
from ctxbench_server.dispatch import repository
from ctxbench_server.dispatch.commands import StartItem, StartRun, params_size_bound, wire_size_bound
from ctxbench_server.dispatch.hub import AgentConnection, AgentHub
from ctxbench_server.dispatch.repository import ItemRow, StartRow

log = logging.getLogger(__name__)

# What one StartRun may take on the wire: agents receive at most 4 MiB per gRPC message (grpc's default).
# A run's items past this go in further parts (StartRun.more / continued) to agents that take parts.
MAX_START_RUN_BYTES = 3 * 1024 * 1024


class RunNotifier(Protocol):
    """Who tells browsers a run changed (runs.events.RunEvents)."""

    def notify(self, run_id: str) -> None: ...


class StartBuilder:
    """Builds StartRuns from stored rows. A batch's machines share their catalogs' specs and their
    expansion's params as the same JSON texts: each distinct spec is decoded once, each distinct
    (spec, params) pair put in wire form once, and each wire dict sized once, for all the runs one
    builder builds."""

    def __init__(self) -> None:
        self._specs: dict[str, dict[str, Any]] = {}  # a spec's JSON text -> the spec
        self._wire: dict[tuple[int, str], dict[str, str]] = {}  # (id of a spec in _specs, params) -> wire
        # id of a params dict -> its size bound: the builder's own dicts (alive as long as it is), or
        # those of the items one `messages` call is given (alive during the call)
        self._sizes: dict[int, int] = {}

    def build(
        self, runs: Iterable[StartRow], items: Iterable[ItemRow], specs: Mapping[str, Mapping[str, str]]
    ) -> dict[str, list[StartItem]]:
        """Each run's items as its agent gets them, by run id. `items`: the runs' open items in index
        order; `specs`: machine id -> kernel id -> the machine's spec as JSON text."""
        out: dict[str, list[StartItem]] = {}
        # each machine's specs found once, not once an item (a spec's text can be long)
        by_run = {}
        for run in runs:
            out[run.id] = []
            by_run[run.id] = (run, {k: self._spec(text) for k, text in specs[run.machine_id].items()})
        for it in items:
            run, by_kernel = by_run[it.run_id]
            spec = by_kernel.get(it.kernel_id)
            out[it.run_id].append(
                StartItem(
                    item_id=it.id,
                    kernel_id=as_listed(it.kernel_id, spec),  # an old agent: its old id
                    params=self._params(spec, it.params),
                    repetitions=run.repetitions or 0,
                    min_time_s=run.min_time_s or 0.0,
                    sample_time_s=run.sample_time_s or 0.0,
                    timeout_s=it.timeout_s,
                    launches=run.launches or 1,  # runs stored before launches: one process, as then
                )
            )
        return out

    def messages(self, run_id: str, items: Sequence[StartItem]) -> list[StartRun]:
        """One StartRun when the items fit in MAX_START_RUN_BYTES (what every agent understands); else
        parts of at most that each: the first with `more`, the next ones `continued`, the last without
        `more`. Sized by wire_size_bound (never less than protobuf's bytes)."""
        sizes = [wire_size_bound(item, self._size(item.params)) for item in items]
        if sum(sizes) <= MAX_START_RUN_BYTES:  # the usual case
            return [StartRun(run_id, list(items))]
        parts: list[list[StartItem]] = [[]]
        size = 0
        for item, n in zip(items, sizes, strict=True):
            if parts[-1] and size + n > MAX_START_RUN_BYTES:
                parts.append([])
                size = 0
            parts[-1].append(item)
            size += n
        last = len(parts) - 1
        return [StartRun(run_id, part, more=i < last, continued=i > 0) for i, part in enumerate(parts)]

    def _spec(self, text: str) -> dict[str, Any]:
        spec = self._specs.get(text)
        if spec is None:
            spec = self._specs[text] = json.loads(text)
        return spec

    def _params(self, spec: dict[str, Any] | None, params: str) -> dict[str, str]:
        key = (0 if spec is None else id(spec), params)
        wire = self._wire.get(key)
        if wire is None:
            wire = self._wire[key] = to_wire(spec or {}, json.loads(params))
        return wire

    def _size(self, params: dict[str, str]) -> int:
        n = self._sizes.get(id(params))
        if n is None:
            n = self._sizes[id(params)] = params_size_bound(params)
        return n


def start_messages(run_id: str, items: Sequence[StartItem]) -> list[StartRun]:
    """The StartRun(s) of these items (StartBuilder.messages)."""
    return StartBuilder().messages(run_id, items)


class RunStarter:
    """The one way runs start: `start` for machines that may be free, `resend` for a running run."""

    def __init__(
        self,
        hub: AgentHub,
        sessionmaker: async_sessionmaker[AsyncSession],
        rest_sessionmaker: async_sessionmaker[AsyncSession],
        events: RunNotifier,
    ) -> None:
        """`sessionmaker`: the agents' pool (starts an agent's message sets off); `rest_sessionmaker`:
        the REST requests' pool (starts a person sets off: a POST, a cancel, a retry, a schedule)."""
        self.hub = hub
        self.sessionmaker = sessionmaker
        self.rest_sessionmaker = rest_sessionmaker
        self.events = events

    async def start(self, machine_ids: Iterable[str], *, from_rest: bool = False) -> list[StartRow]:
        """Each machine whose agent is connected to this process and runs nothing starts its oldest
        queued run: claimed in one transaction for all of them, then its StartRun queued on its stream,
        the machines' locks held throughout (a cancel or a finished run waits for them; the caller holds
        none). A machine whose stream is elsewhere (another server process, or none yet) is left to
        its holder. Returns the runs started."""
        ids = set(machine_ids)
        for mid in ids:
            if self.hub.get(mid) is None:
                self.hub.tell_holder(mid)
        here = [mid for mid in ids if self.hub.get(mid) is not None]
        if not here:
            return []
        sessionmaker = self.rest_sessionmaker if from_rest else self.sessionmaker
        async with self.hub.locks.holding(here):
            conns = {mid: conn for mid in here if (conn := self.hub.get(mid)) is not None}
            for mid in set(here) - conns.keys():  # its stream ended while this waited for the locks
                self.hub.tell_holder(mid)
            builder = StartBuilder()
            async with writing(sessionmaker) as session:
                runs = await repository.claim_next(session, list(conns))
                if not runs:
                    return []
                starts = await _build(session, builder, runs)
                await session.commit()
            total = 0
            for run in runs:
                self.events.notify(run.id)
                total += send_start(conns[run.machine_id], run.id, builder.messages(run.id, starts[run.id]))
        if len(runs) == 1:
            log.info("dispatched run %s to %s: %d items", runs[0].id, runs[0].machine_id, total)
        else:  # one line for a batch
            started = ", ".join(sorted(r.id for r in runs))
            log.info("dispatched %d runs, %d items: %s", len(runs), total, started)
        return runs

    async def resend(self, session: AsyncSession, conn: AgentConnection, run_id: str) -> int:
        """A running run's items without a result, sent again to its machine's stream (the caller holds
        the machine's lock). Returns the items sent."""
        run = await repository.start_row(session, run_id)
        builder = StartBuilder()
        starts = await _build(session, builder, [run])
        return send_start(conn, run.id, builder.messages(run.id, starts[run.id]))


async def _build(
    session: AsyncSession, builder: StartBuilder, runs: Sequence[StartRow]
) -> dict[str, list[StartItem]]:
    """The runs' open items as their agents get them, read and built in one pass."""
    specs = await repository.spec_texts(session, runs)
    return builder.build(runs, await repository.open_items(session, [run.id for run in runs]), specs)


def send_start(conn: AgentConnection, run_id: str, msgs: list[StartRun]) -> int:
    """Pushes the run's StartRun, in parts in a row when it needs several (nothing goes between them).
    An agent that takes no parts (older than them) gets the first part as a plain StartRun: it runs
    those items, and as it goes idle with items of the run still open, Dispatcher.on_heartbeat sends the
    open ones again (the next part). Returns the items sent."""
    conn.current_run_id = run_id  # what a cancel on another server process stops (Dispatcher.reconcile)
    if len(msgs) > 1 and not conn.start_run_parts:
        first = msgs[0].items
        log.warning(
            "run %s: %d items take more than one message and agent %s takes no parts (an older agent): "
            "sent the first %d; the rest follow as it goes idle",
            run_id,
            sum(len(m.items) for m in msgs),
            conn.machine_id,
            len(first),
        )
        conn.send(StartRun(run_id, first))
        return len(first)
    for msg in msgs:
        conn.send(msg)
    return sum(len(m.items) for m in msgs)
