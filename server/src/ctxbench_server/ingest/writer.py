"""Group commit: one task stores the batches that every stream has ready in one transaction.

A batch of one stream at a modest rate holds one or two messages, and its transaction's fixed cost (a
session, its lookups, the INSERT and UPDATE, the listeners, the commit, each statement a hand-off to the
database driver) was most of what a result cost the server. The writer takes every batch queued while
its last transaction ran (up to MAX_GROUP messages) and stores them together (ingest.record_group), so
that cost is shared by all streams ready at once; one batch alone waits for nothing (there is no timer).

When the shared transaction fails, each batch is stored alone, and a batch that fails alone each of its
messages alone (as a stream did before): one report the database refuses is rejected for itself only,
the other streams' batches are stored. One writer is also one ingest connection at a time, whatever
the number of streams (20 streams each holding one emptied the agents' pool before).

The caller (agents/servicer.py) holds its machine's lock while its batch waits and is stored, as it did
around its own transaction: no change of a run is lost to a cancel or a dispatch in between. On
PostgreSQL that lock is cluster-wide through each transaction's `pg_advisory_xact_lock` of the machine
(cluster.py), which a session takes for the machine the task holds: the writer's task holds none (its
own context), and each of its transactions takes the locks of all the machines it stores, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server.cluster import lock_machines
from ctxbench_server.db import writing
from ctxbench_server.ingest import service as ingest
from ctxbench_server.ingest.messages import Message, Refused, Report
from ctxbench_server.stored import StoredEvents

log = logging.getLogger(__name__)

# Messages stored in one transaction at most (a stream's batch holds up to 256).
MAX_GROUP = 1024


@dataclass
class _Job:
    pending: ingest.Pending
    future: asyncio.Future[ingest.Recorded]
    taken: bool = field(default=False)


class IngestWriter:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], events: StoredEvents) -> None:
        self.sessionmaker = sessionmaker
        self.events = events
        self._jobs: deque[_Job] = deque()
        self._task: asyncio.Task[None] | None = None
        self.groups = 0  # transactions begun (tests and the load benchmark read it)

    async def store(self, machine_id: str, msgs: Sequence[Message]) -> ingest.Recorded:
        """Stores one stream's messages with whatever else is ready; their outcomes. Raises what storing
        them alone raised (an update the database failed: the stream ends, the agent reconnects)."""
        job = _Job(ingest.Pending(machine_id, msgs), asyncio.get_running_loop().create_future())
        self._jobs.append(job)
        if self._task is None or self._task.done():
            # a context of its own: not the machine lock of the stream that happened to start it
            self._task = asyncio.create_task(self._drain(), context=contextvars.Context())
        try:
            return await asyncio.shield(job.future)
        except asyncio.CancelledError:
            if job.taken and not job.future.done():
                # its transaction is under way: the caller keeps its machine's lock until it ends
                await asyncio.wait([job.future])
            if job.future.done() and not job.future.cancelled():
                job.future.exception()  # retrieved: nobody waits for it any more
            job.future.cancel()  # not taken yet: the writer skips it
            raise

    def waiting(self) -> set[str]:
        """The machines with a batch queued for the next transaction (tests wait on it, not on time)."""
        return {j.pending.machine_id for j in self._jobs if not j.future.done()}

    @contextlib.asynccontextmanager
    async def _session(self, machines: Sequence[str]) -> AsyncIterator[AsyncSession]:
        """A session whose transaction on PostgreSQL first takes the machines' advisory locks (sorted:
        two writers of a cluster never wait for each other in a circle), as each stream's did."""
        async with writing(self.sessionmaker) as session:
            await lock_machines(session, machines)
            yield session

    async def _drain(self) -> None:
        group: list[_Job] = []
        try:
            while self._jobs:
                group, size = [], 0
                while self._jobs and (not group or size + len(self._jobs[0].pending.msgs) <= MAX_GROUP):
                    job = self._jobs.popleft()
                    if job.future.done():  # its stream went away before its turn
                        continue
                    job.taken = True
                    group.append(job)
                    size += len(job.pending.msgs)
                if group:
                    await self._store_group(group)
        finally:  # cancelled (the server stops): nobody is left waiting
            for job in [*group, *self._jobs]:
                job.future.cancel()

    async def _store_group(self, group: list[_Job]) -> None:
        self.groups += 1
        try:
            async with self._session([j.pending.machine_id for j in group]) as session:
                if len(group) == 1:
                    p = group[0].pending
                    done = [await ingest.record_batch(session, p.machine_id, p.msgs, self.events)]
                else:
                    done = await ingest.record_group(session, [j.pending for j in group], self.events)
        except Exception as e:
            if len(group) == 1:
                await self._alone(group[0], e)
                return
            log.info(
                "%d streams' batches not stored together (%s); storing each alone",
                len(group),
                type(e).__name__,
            )
            for job in group:
                await self._store_one(job)
            return
        for job, recorded in zip(group, done, strict=True):
            _resolve(job, recorded)

    async def _store_one(self, job: _Job) -> None:
        p = job.pending
        self.groups += 1
        try:
            async with self._session([p.machine_id]) as session:
                recorded = await ingest.record_batch(session, p.machine_id, p.msgs, self.events)
        except Exception as e:
            await self._alone(job, e)
        else:
            _resolve(job, recorded)

    async def _alone(self, job: _Job, e: Exception) -> None:
        """The job's batch failed in a transaction of its own with e: each message alone, then."""
        p = job.pending
        try:
            if not isinstance(e, SQLAlchemyError):
                raise e
            if len(p.msgs) == 1:
                _resolve(job, await self._failed(p.machine_id, p.msgs[0], e))
                return
            log.info(
                "agent %s: %d messages not stored together (%s); storing them one by one",
                p.machine_id,
                len(p.msgs),
                type(e).__name__,
            )
            done = ingest.Recorded([], [])
            for m in p.msgs:
                try:
                    async with self._session([p.machine_id]) as session:
                        one = await ingest.record_batch(session, p.machine_id, [m], self.events)
                except SQLAlchemyError as e1:
                    one = await self._failed(p.machine_id, m, e1)
                done.outcomes += one.outcomes
                done.finished += one.finished
            _resolve(job, done)
        except Exception as failed:  # the stream's own failure: it ends, the others go on
            if not job.future.done():
                job.future.set_exception(failed)

    async def _failed(self, machine_id: str, r: Message, e: SQLAlchemyError) -> ingest.Recorded:
        """One message the database failed to store: a report is acknowledged (it landed meanwhile) or
        refused (ingest.storage_failed); an update's failure is raised (the stream ends)."""
        if not isinstance(r, Report):
            raise e
        log.warning(
            "agent %s: could not store result %s of run %s: %s",
            machine_id,
            r.result_id,
            r.run_id,
            e,
            exc_info=not ingest.refused_by_database(e),
        )
        try:
            async with self._session([machine_id]) as session:
                stored = await ingest.storage_failed(session, machine_id, r, e, self.events)
        except Refused as bad:
            return ingest.Recorded([bad], [r.run_id] if bad.run_finished else [])
        return ingest.Recorded([stored], [])


def _resolve(job: _Job, recorded: ingest.Recorded) -> None:
    if not job.future.done():
        job.future.set_result(recorded)
