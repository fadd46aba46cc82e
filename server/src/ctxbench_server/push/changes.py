"""The explorer's push channel: small change events about machines, runs and batches, for every browser.

Modules say what changed (`machine(id, what)`, `run(id)`, `runs(ids, "created")`, `batch(id, what)`);
changes are coalesced per (kind, id) and sent at most every FLUSH_S. Run events carry the run's status,
machine and batch, read once per flush for all streams (one query, only while a stream is open); a run
no longer stored goes out as `deleted`. Each event has an id `<process>.<seq>`: a browser reconnecting
with `Last-Event-ID` gets what it missed from the last REPLAY events, else `event: resync` (refetch all).

With several server processes (PostgreSQL, cluster.py): run changes already travel on `ctxbench_run`
(RunEvents.notify); everything else goes out on `ctxbench_change` as `<kind>:<what>:<id>` tokens, and
each process sends them to its own streams. A lost listener connection means lost NOTIFYs: `resync`.

Streams share the run streams' budget (push/budget.py); a stream that falls MAX_QUEUED events behind is
closed (EventSource reconnects, with Last-Event-ID).
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections import deque
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server.models import Run
from ctxbench_server.push.budget import StreamBudget, StreamsFull
from ctxbench_server.push.queue import StreamQueue

if TYPE_CHECKING:
    from ctxbench_server.cluster import Cluster

log = logging.getLogger(__name__)

KINDS = ("machine", "run", "batch", "alert")
FLUSH_S = 0.25  # changes within this are coalesced into one event per (kind, id)
KEEPALIVE_S = 15.0
RETRY_MS = 3000  # EventSource waits this long before reconnecting
MAX_QUEUED = 512  # events a stream may fall behind before it is closed
REPLAY = 2048  # events kept for reconnecting browsers (Last-Event-ID)
READ_CHUNK = 500  # run ids per status read
OPENING = f"retry: {RETRY_MS}\n: ctxbench push channel\n\n"
RESYNC = "event: resync\ndata: {}\n\n"
DROPPED = ": this stream fell behind and is closed; reconnect\n\n"


class PushStream(StreamQueue):
    """One browser's stream: what it missed (`backlog`), then new events (its queue)."""

    def __init__(self, client: str, backlog: list[str]) -> None:
        super().__init__(client, MAX_QUEUED)
        self.backlog = backlog
        self.released = False


class Changes:
    """The one publisher of change events (see the module's doc) and its streams."""

    def __init__(
        self, budget: StreamBudget, sessionmaker: async_sessionmaker[AsyncSession] | None = None
    ) -> None:
        self.budget = budget
        self.sessionmaker = sessionmaker
        self.cluster: Cluster | None = None  # set by main (PostgreSQL only)
        self.instance = uuid.uuid4().hex[:12]
        self.streams: set[PushStream] = set()
        self.sent = 0  # events sent (tests)
        self.reads = 0  # status reads (tests)
        self.closed = False
        self._pending: dict[tuple[str, str], str] = {}
        self._wake = asyncio.Event()
        self._seq = 0
        self._log: deque[tuple[int, str]] = deque(maxlen=REPLAY)
        self._task: asyncio.Task[None] | None = None

    # -- publishing (any module; committed changes only)

    def machine(self, machine_id: str, what: str) -> None:
        """`online`, `offline`, `renamed`, `changed` (facts, approval, revocation) or `deleted`."""
        self._publish("machine", what, machine_id)

    def run(self, run_id: str, what: str = "changed", *, tell_cluster: bool = True) -> None:
        """`created`, `changed` (status, progress, results, title) or `deleted`."""
        self._publish("run", what, run_id, tell_cluster=tell_cluster)

    def runs(self, run_ids: Iterable[str], what: str) -> None:
        for run_id in run_ids:
            self.run(run_id, what)

    def batch(self, batch_id: str, what: str = "changed") -> None:
        """`changed` (title, note) or `deleted`."""
        self._publish("batch", what, batch_id)

    def alert(self, alert_id: str, what: str) -> None:
        """`opened`, or `changed` (acknowledged, resolved, its note): the header's count and the alerts
        page follow."""
        self._publish("alert", what, alert_id)

    def _publish(self, kind: str, what: str, id_: str, *, tell_cluster: bool = True) -> None:
        self._queue(kind, what, id_)
        if tell_cluster and self.cluster is not None:
            self.cluster.publish_change(f"{kind}:{what}:{id_}")

    # -- receiving from the other server processes (cluster.py)

    def received(self, token: str) -> None:
        """A `<kind>:<what>:<id>` token from ctxbench_change."""
        kind, _, rest = token.partition(":")
        what, _, id_ = rest.partition(":")
        if kind in KINDS and what and id_:
            self._queue(kind, what, id_)

    def received_run(self, run_id: str) -> None:
        """A run id from ctxbench_run (another process's RunEvents.notify)."""
        self._queue("run", "changed", run_id)

    def resync(self) -> None:
        """Changes may have been lost (the cluster connection was down): every browser refetches."""
        self._send([RESYNC])

    def _queue(self, kind: str, what: str, id_: str) -> None:
        if not self.streams:
            return  # nobody listens here; a browser connecting later reads the current state anyway
        key = (kind, id_)
        if self._pending.get(key) in ("created", "opened", "deleted") and what == "changed":
            what = self._pending[key]  # a later "changed" does not hide why the row appeared or went
        self._pending[key] = what
        self._wake.set()

    # -- streams

    def start(self) -> None:
        self._task = asyncio.create_task(self._flush_loop(), name="push-changes")

    def subscribe(self, client: str, last_event_id: str | None) -> PushStream:
        """A stream for `client`; raises TooManyStreams or StreamsFull before anything is sent."""
        if self.closed:
            raise StreamsFull("the server is stopping")
        self.budget.take(client)
        stream = PushStream(client, [OPENING, *self._missed(last_event_id)])
        self.streams.add(stream)
        return stream

    def _missed(self, last_event_id: str | None) -> list[str]:
        """The events after `last_event_id`, or [resync] when they are no longer (or never were) here."""
        if not last_event_id:
            return []
        instance, _, seq_text = last_event_id.partition(".")
        try:
            seq = int(seq_text)
        except ValueError:
            return [RESYNC]
        if instance != self.instance or seq > self._seq:
            return [RESYNC]  # another process's id (behind a load balancer), or this one restarted
        if seq == self._seq:
            return []
        if not self._log or self._log[0][0] > seq + 1:
            return [RESYNC]
        return [chunk for n, chunk in self._log if n > seq]

    def release(self, stream: PushStream) -> None:
        if stream.released:
            return
        stream.released = True
        self.streams.discard(stream)
        self.budget.give(stream.client)

    async def stream(self, stream: PushStream) -> AsyncIterator[str]:
        try:
            for chunk in stream.backlog:
                yield chunk
            stream.backlog = []
            async for chunk in stream.chunks(KEEPALIVE_S):
                yield chunk
        finally:
            self.release(stream)

    # -- sending

    async def _flush_loop(self) -> None:
        while not self.closed:
            await self._wake.wait()
            self._wake.clear()
            pending, self._pending = self._pending, {}
            if pending and self.streams:
                try:
                    self._send(await self._events(pending))
                except Exception:  # never let one bad flush end the channel: browsers resync
                    log.exception("push: could not send %d changes", len(pending))
                    self._send([RESYNC])
            await asyncio.sleep(FLUSH_S)

    async def _events(self, pending: dict[tuple[str, str], str]) -> list[str]:
        runs = await self._read_runs([id_ for kind, id_ in pending if kind == "run"])
        chunks = []
        for (kind, id_), what in pending.items():
            data: dict[str, Any] = {"id": id_, "what": what}
            if kind == "run":
                row = runs.get(id_)
                if row is None:
                    data["what"] = "deleted"
                data["status"], data["machine_id"], data["batch_id"] = row or (None, None, None)
            self._seq += 1
            chunk = f"id: {self.instance}.{self._seq}\nevent: {kind}\ndata: {json.dumps(data)}\n\n"
            self._log.append((self._seq, chunk))
            chunks.append(chunk)
        return chunks

    async def _read_runs(self, ids: list[str]) -> dict[str, tuple[str, str, str]]:
        """status, machine_id, batch_id of each run still stored: one query (per READ_CHUNK ids)."""
        if not ids or self.sessionmaker is None:
            return {}
        self.reads += 1
        found: dict[str, tuple[str, str, str]] = {}
        async with self.sessionmaker() as session:
            for at in range(0, len(ids), READ_CHUNK):
                q = select(Run.id, Run.status, Run.machine_id, Run.batch_id).where(
                    Run.id.in_(ids[at : at + READ_CHUNK])
                )
                for rid, status, machine_id, batch_id in await session.execute(q):
                    found[rid] = (str(status), machine_id, batch_id)
        return found

    def _send(self, chunks: list[str]) -> None:
        self.sent += len(chunks)
        for stream in list(self.streams):
            for chunk in chunks:
                if not stream.put(chunk):
                    log.info("push: an event stream of %s fell behind; closed", stream.client)
                    self.streams.discard(stream)
                    stream.end(DROPPED)
                    break

    async def close(self) -> None:
        """Ends every stream (server shutdown)."""
        self.closed = True
        for stream in list(self.streams):
            stream.end()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
