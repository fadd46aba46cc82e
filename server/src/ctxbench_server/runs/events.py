"""Run progress for browsers: one reader per run, fanned out to every stream of it.

Publishers only say "run X changed" (notify). A run with open streams has one feed: a task that, on
each change, reads the run and its new results once (one database session, however many streams) and
puts what changed into each stream's bounded queue. Changes that come during a read are coalesced into
the next one. A stream joining late gets the feed's current state (the Run, every result so far). A
stream whose browser reads too slowly to keep MAX_QUEUED chunks is dropped (its response ends; the
browser's EventSource reconnects and starts from the current state), so it never holds up the others.

With several server processes (PostgreSQL, cluster.py), `notify` also tells the others (NOTIFY
ctxbench_run, after the change was committed): each re-reads the run once for its own streams.

Budgets: at most max_per_client streams per client (its credential, else its address) and max_total in
all, shared with the push channel (push/budget.py, docs/operations.md "Budgets"); a stream counts until
its response ends.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server.errors import CtxbenchError, NotFound
from ctxbench_server.models import FINISHED_RUN, Result
from ctxbench_server.push.budget import StreamBudget, StreamsFull, TooManyStreams
from ctxbench_server.push.queue import StreamQueue
from ctxbench_server.runs import service

if TYPE_CHECKING:
    from ctxbench_server.cluster import Cluster
    from ctxbench_server.push.changes import Changes
    from ctxbench_server.stored import ResultStored

__all__ = ["RunEvents", "StreamsFull", "Subscriber", "TooManyStreams", "sse"]

log = logging.getLogger(__name__)

KEEPALIVE_S = 15.0  # a comment line this often keeps proxies from closing an idle stream
MAX_QUEUED = 256  # chunks a stream may fall behind before it is dropped
# Result events a feed keeps for streams joining late; past this, a late stream reads them itself (once).
CACHE_BYTES = 8 * 1024 * 1024
DROPPED = ": this stream fell behind and is closed; reconnect for the current state\n\n"


def sse(event: str, data: object) -> str:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


class Subscriber(StreamQueue):
    """One open stream: the state it joined with (`backlog`), then what changed (its queue)."""

    def __init__(self, client: str) -> None:
        super().__init__(client, MAX_QUEUED)
        self.backlog: list[str] = []
        self.live = False  # caught up: the feed puts changes in its queue
        self.ends_after_backlog = False
        self.feed: Feed | None = None
        self.released = False


class Feed:
    """One run's reader and its streams."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.subscribers: set[Subscriber] = set()
        self.changed = asyncio.Event()
        self.ready = asyncio.Event()  # the first read is done (or failed: error)
        self.error: CtxbenchError | None = None
        self.run_chunk = ""
        self.run_text = ""
        self.result_chunks: list[str] = []
        self.cached_bytes = 0
        self.cache_full = False  # result_chunks no longer holds every result sent
        self.seen: set[str] = set()
        self.end_chunk = ""
        self.task: asyncio.Task[None] | None = None

    def catch_up(self, sub: Subscriber) -> set[str] | None:
        """The state so far as the stream's backlog; when the results were too many to keep, the ids
        sent so far (the caller reads those in, before `end`)."""
        sub.backlog = [self.run_chunk, *self.result_chunks]
        if self.end_chunk:
            sub.backlog.append(self.end_chunk)
            sub.ends_after_backlog = True
        sub.live = True
        return set(self.seen) if self.cache_full else None

    def keep(self, chunk: str) -> None:
        if self.cache_full:
            return
        self.cached_bytes += len(chunk)
        if self.cached_bytes > CACHE_BYTES:
            self.cache_full, self.result_chunks = True, []
        else:
            self.result_chunks.append(chunk)


class RunEvents:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession] | None = None,
        max_per_client: int = 200,
        max_total: int = 2000,
        budget: StreamBudget | None = None,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.budget = budget or StreamBudget(max_per_client, max_total)
        self.closed = False
        self._feeds: dict[str, Feed] = {}
        self.open_streams = 0  # run streams (the budget also counts the push channel's)
        self.reads = 0  # database reads of all feeds (tests and the storm figure count them)
        self.cluster: Cluster | None = None  # the other server processes (PostgreSQL only; set by main)
        self.changes: Changes | None = None  # the explorer's push channel (set by main)

    def notify(self, run_id: str) -> None:
        """The run changed (committed): its streams here re-read it, and so do those of the other server
        processes; the push channel tells every browser (here, and through ctxbench_run elsewhere)."""
        self.changed(run_id)
        if self.changes is not None:
            self.changes.run(run_id, tell_cluster=False)
        if self.cluster is not None:
            self.cluster.publish_run(run_id)

    def results_stored(self, stored: Sequence[ResultStored]) -> None:
        """The "result stored" listener (stored.py), after ingest's commit: each run told once."""
        for run_id in dict.fromkeys(r.run_id for r in stored):
            self.notify(run_id)

    def results_updated(self, run_id: str, result_ids: Sequence[str]) -> None:
        """Results of the run changed after they were stored (their CI filled in): its streams here send
        them again (the explorer replaces a result by its id)."""
        feed = self._feeds.get(run_id)
        if feed is not None:
            feed.seen.difference_update(result_ids)
        self.notify(run_id)

    def changed(self, run_id: str) -> None:
        """The run changed: its feed on this process (if any) re-reads it once."""
        feed = self._feeds.get(run_id)
        if feed is not None:
            feed.changed.set()

    def resync(self) -> None:
        """Every feed re-reads (changes told while the cluster connection was down were lost)."""
        for feed in self._feeds.values():
            feed.changed.set()

    async def subscribe(self, run_id: str, client: str) -> Subscriber:
        """A stream of the run for `client`, caught up with its current state. Raises TooManyStreams,
        StreamsFull, or NotFound (unknown run) before anything is sent."""
        if self.closed:
            raise StreamsFull("the server is stopping")
        self.budget.take(client)
        sub = Subscriber(client)
        self.open_streams += 1
        feed = self._feeds.get(run_id)
        if feed is None:
            feed = self._feeds[run_id] = Feed(run_id)
            feed.task = asyncio.create_task(self._follow(feed), name=f"run-events-{run_id}")
        feed.subscribers.add(sub)
        sub.feed = feed
        try:
            await feed.ready.wait()  # the feed's first read, shared by every stream joining meanwhile
            if feed.error is not None:
                raise feed.error
        except BaseException:
            self.release(sub)
            raise
        sent = feed.catch_up(sub)
        if sub.ends_after_backlog:
            feed.subscribers.discard(sub)
        if sent:
            try:
                await self._read_sent(feed.run_id, sent, sub)
            except BaseException:
                self.release(sub)
                raise
        return sub

    async def _read_sent(self, run_id: str, sent: set[str], sub: Subscriber) -> None:
        """A late stream's results when the feed could not keep them: one read of its own, of those
        the feed had sent (later ones reach it through its queue)."""
        assert self.sessionmaker is not None
        self.reads += 1
        async with self.sessionmaker() as session:
            results = [r for r in await service.list_results(session, run_id) if r.id in sent]
        chunks = [sse("result", r.model_dump(mode="json")) for r in results]
        at = 1  # after the Run, before `end`
        sub.backlog[at:at] = chunks

    def release(self, sub: Subscriber) -> None:
        """Gives the stream's budget back (its response ended) and stops a feed nobody follows."""
        if sub.released:
            return
        sub.released = True
        self.budget.give(sub.client)
        self.open_streams -= 1
        feed = sub.feed
        if feed is not None:
            feed.subscribers.discard(sub)
            if not feed.subscribers:
                feed.changed.set()  # the reader sees nobody left and stops

    async def stream(self, sub: Subscriber) -> AsyncIterator[str]:
        """`run` (the Run) at once and whenever it changes, `result` per measured result (those already
        stored first), `end` (the final Run) when it finishes, then the stream ends."""
        try:
            for chunk in sub.backlog:
                yield chunk
            sub.backlog = []
            if sub.ends_after_backlog:
                return
            async for chunk in sub.chunks(KEEPALIVE_S):
                yield chunk
        finally:
            self.release(sub)

    async def _follow(self, feed: Feed) -> None:
        try:
            while feed.subscribers and not self.closed:
                feed.changed.clear()
                try:
                    chunks = await self._read(feed)
                except NotFound as e:
                    feed.error = e
                    return
                except Exception:
                    log.exception("reading run %s for its event streams failed", feed.run_id)
                    for sub in list(feed.subscribers):
                        sub.end()  # they reconnect and get a fresh read
                    feed.error = StreamsFull("the server could not read this run now; retry")
                    return
                self._publish(feed, chunks)
                feed.ready.set()
                if feed.end_chunk:
                    for sub in list(feed.subscribers):
                        if sub.live:
                            sub.end()
                    return
                await feed.changed.wait()
        finally:
            if self._feeds.get(feed.run_id) is feed:
                del self._feeds[feed.run_id]
            feed.ready.set()
            # Streams still waiting for a first read that never came: they end (reconnect).
            if feed.error is None and not feed.end_chunk and not feed.run_chunk:
                feed.error = StreamsFull("the server is stopping")

    async def _read(self, feed: Feed) -> list[str]:
        """One session: the Run, and the results of items that got one since the last read."""
        assert self.sessionmaker is not None
        self.reads += 1
        async with self.sessionmaker() as session:
            run = service.run_out(await service.load_run(session, feed.run_id))
            new = [it.result_id for it in run.items if it.result_id and it.result_id not in feed.seen]
            rows = {}
            if new:
                q = select(Result).where(Result.id.in_(new), Result.status == "ok")
                rows = {r.id: r for r in await session.scalars(q)}
        feed.seen.update(new)
        chunks: list[str] = []
        snapshot = run.model_dump(mode="json")
        text = json.dumps(snapshot, sort_keys=True)
        first = not feed.run_chunk
        if first:  # on connect the Run comes first
            feed.run_chunk, feed.run_text = sse("run", snapshot), text
            chunks.append(feed.run_chunk)
        for rid in new:
            if rid in rows:
                chunk = sse("result", service.result_out(rows[rid], fill_ci=False).model_dump(mode="json"))
                feed.keep(chunk)
                chunks.append(chunk)
        if text != feed.run_text:
            feed.run_chunk, feed.run_text = sse("run", snapshot), text
            chunks.append(feed.run_chunk)
        if run.status in FINISHED_RUN:
            feed.end_chunk = sse("end", snapshot)
            chunks.append(feed.end_chunk)
        return chunks

    def _publish(self, feed: Feed, chunks: list[str]) -> None:
        for sub in list(feed.subscribers):
            if not sub.live:
                continue  # still joining: it catches up with the whole state
            for chunk in chunks:
                if not sub.put(chunk):
                    log.info("run %s: an event stream of %s fell behind; dropped", feed.run_id, sub.client)
                    feed.subscribers.discard(sub)
                    sub.end(DROPPED)
                    break

    def close(self) -> None:
        """Ends every stream (server shutdown)."""
        self.closed = True
        for feed in list(self._feeds.values()):
            for sub in list(feed.subscribers):
                sub.end()
            feed.changed.set()
