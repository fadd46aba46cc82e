"""Dispatch: push StartRun to a connected, idle agent the moment there is work; cancel, retry, and fail
runs whose agent stays away. Nothing polls the agents; one timer task looks for lost ones. Every start
goes through one path, RunStarter.start (dispatch/starts.py).

With several server processes (PostgreSQL, cluster.py) only the process holding a machine's stream talks
to its agent: another one that queues, cancels or retries a run of it commits, then tells the machine's
news (NOTIFY ctxbench_machine) and the holder reconciles: stops a cancelled run, starts the next one."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Container, Iterable
from datetime import timedelta
from typing import Generic, TypeVar

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server.dispatch.commands import CancelRun
from ctxbench_server.dispatch.hub import AgentConnection, AgentHub
from ctxbench_server.dispatch.repository import StartRow, load_run, running_run
from ctxbench_server.dispatch.starts import RunNotifier, RunStarter
from ctxbench_server.errors import Conflict
from ctxbench_server.models import FINISHED_RUN, ItemState, Machine, Run, RunStatus
from ctxbench_server.models.base import utcnow

log = logging.getLogger(__name__)

AGENT_LOST = "agent lost"

N = TypeVar("N", bound=RunNotifier)


class Dispatcher(Generic[N]):
    def __init__(
        self,
        hub: AgentHub,
        sessionmaker: async_sessionmaker[AsyncSession],
        events: N,
        rest_sessionmaker: async_sessionmaker[AsyncSession] | None = None,
    ) -> None:
        """`sessionmaker`: the agents' pool (what agents' messages set off); `rest_sessionmaker`: the
        pool of REST requests (what people set off: a new run, cancel, retry)."""
        self.hub = hub
        self.sessionmaker = sessionmaker
        self.rest_sessionmaker = rest_sessionmaker or sessionmaker
        self.events: N = events
        self.starter = RunStarter(hub, sessionmaker, self.rest_sessionmaker, events)
        self._reconciling: set[asyncio.Task[None]] = set()

    async def start(self, machine_ids: Iterable[str], *, from_rest: bool = False) -> list[StartRow]:
        """Starts the next queued run of each of the machines that is free (RunStarter.start)."""
        return await self.starter.start(machine_ids, from_rest=from_rest)

    async def kick(self, machine_id: str) -> None:
        """A run of the machine finished: its next queued run starts."""
        await self.starter.start([machine_id])

    async def on_hello(self, conn: AgentConnection, current_run_id: str) -> None:
        """After Welcome: resume a run the agent lost (restart), else start the next queued one. With
        several server processes, this one first becomes the machine's only one (AgentHub.claim)."""
        async with self.hub.locks[conn.machine_id]:
            if not await self.hub.claim(conn):
                return
            sent_here = conn.current_run_id  # a StartRun already sent on this stream (a start just before)
            conn.current_run_id = current_run_id or sent_here
            async with self.sessionmaker() as session:
                running = await running_run(session, conn.machine_id)
                if current_run_id and (running is None or running.id != current_run_id):
                    lost = await session.get(Run, current_run_id)
                    if lost is None or lost.machine_id != conn.machine_id or lost.status in FINISHED_RUN:
                        # cancelled (or forgotten) while the agent was away: tell it to stop
                        conn.send(CancelRun(current_run_id))
                if running is not None and running.id not in (current_run_id, sent_here):
                    sent = await self.starter.resend(session, conn, running.id)
                    log.info(
                        "re-dispatched run %s to %s: %d unfinished items", running.id, conn.machine_id, sent
                    )
        if running is None:
            await self.starter.start([conn.machine_id])

    async def on_heartbeat(self, conn: AgentConnection, current_run_id: str, interval_s: float) -> None:
        """Two heartbeats in a row say the agent runs nothing, yet the machine has had a run `running`
        since well before: the StartRun was lost or ignored (e.g. a retry sent while the agent still
        wound that run down), so its unfinished items go out again. One such heartbeat is not enough:
        it may overtake the run's last result on the agent's side."""
        if current_run_id:
            conn.current_run_id = current_run_id  # an idle one keeps the last: reconcile checks it
            conn.idle_during = None
            return
        async with self.hub.locks[conn.machine_id]:
            async with self.sessionmaker() as session:
                running = await running_run(session, conn.machine_id)
                if (
                    running is None
                    or running.started_at is None
                    or utcnow() - running.started_at < timedelta(seconds=2 * interval_s)
                ):
                    conn.idle_during = None  # idle for good reason, or the StartRun may be on its way
                    return
                if conn.idle_during != running.id:
                    conn.idle_during = running.id
                    return
                conn.idle_during = None
                sent = await self.starter.resend(session, conn, running.id)
                log.warning(
                    "agent %s idle while run %s is running: re-sent %d unfinished items",
                    conn.machine_id,
                    running.id,
                    sent,
                )

    async def cancel(self, run_id: str) -> Run:
        """Cancels a queued or running run (its agent told to stop it); the machine's next run starts."""
        async with self.rest_sessionmaker() as session:
            machine_id = (await load_run(session, run_id)).machine_id
        async with self.hub.locks[machine_id]:
            async with self.rest_sessionmaker() as session:
                run = await load_run(session, run_id)
                if run.status in FINISHED_RUN:
                    raise Conflict(f"run {run_id!r} already {run.status}")
                was_running = run.status == RunStatus.RUNNING
                now = utcnow()
                run.status = RunStatus.CANCELLED
                run.finished_at = now
                for it in run.items:
                    if it.result_id is None:
                        it.state = ItemState.CANCELLED
                await session.commit()
                self.events.notify(run_id)
                conn = self.hub.get(machine_id)
                if conn is not None and was_running:
                    conn.send(CancelRun(run_id))
        # the next run; where the stream is on another process, that one stops this run and starts it
        await self.starter.start([machine_id], from_rest=True)
        return run

    async def retry(self, run_id: str) -> Run:
        """Queues a finished run's unfinished items again (attempt + 1) and the run at the queue's back."""
        async with self.rest_sessionmaker() as session:
            machine_id = (await load_run(session, run_id)).machine_id
        async with self.hub.locks[machine_id]:
            async with self.rest_sessionmaker() as session:
                run = await load_run(session, run_id)
                if run.status not in FINISHED_RUN:
                    raise Conflict(f"run {run_id!r} is {run.status}: only a finished run can be retried")
                unfinished = [it for it in run.items if it.state != ItemState.SUCCEEDED]
                if not unfinished:
                    raise Conflict(f"run {run_id!r} has no unfinished items to retry")
                for it in unfinished:
                    # the earlier result (failed or cancelled) stays in `results` as history
                    it.state = ItemState.QUEUED
                    it.attempt += 1
                    it.result_id = None
                    it.error = None
                    it.launches_done, it.launches_planned, it.launches_wall_s, it.launch_at = (
                        0,
                        None,
                        0.0,
                        None,
                    )
                run.status = RunStatus.QUEUED
                run.queued_at = utcnow()
                run.started_at = None
                run.finished_at = None
                run.error = None
                await session.commit()
                log.info("run %s retried: %d items queued again", run_id, len(unfinished))
                self.events.notify(run_id)
        await self.starter.start([machine_id], from_rest=True)
        return run

    def reconcile_soon(self, machine_id: str) -> None:
        """Another process told this machine's news (cluster): reconcile it here if its stream is here."""
        if self.hub.get(machine_id) is None:
            return
        task = asyncio.create_task(self.reconcile(machine_id), name=f"reconcile-{machine_id}")
        self._reconciling.add(task)
        task.add_done_callback(self._reconciling.discard)

    def resync(self) -> None:
        """Reconciles every machine whose stream is here (news told while the cluster connection was
        down were lost)."""
        for machine_id in self.hub.online_ids():
            self.reconcile_soon(machine_id)

    async def reconcile(self, machine_id: str) -> None:
        """Brings the agent in line with the database: a run it runs that was cancelled meanwhile is
        stopped, and the next queued run starts when none is running."""
        try:
            async with self.hub.locks[machine_id]:
                conn = self.hub.get(machine_id)
                if conn is None:
                    return
                if conn.current_run_id:
                    async with self.sessionmaker() as session:
                        current = await session.get(Run, conn.current_run_id)
                    if current is None or current.status == RunStatus.CANCELLED:
                        run_id, conn.current_run_id = conn.current_run_id, ""
                        conn.send(CancelRun(run_id))
            await self.starter.start([machine_id])
        except Exception:  # the next news, the agent's next heartbeat or a reconnect tries again
            log.exception("reconciling machine %s failed", machine_id)

    async def watch_lost(self, grace_s: float) -> None:
        """The one timer: fails `running` runs whose machine has been offline for longer than grace_s."""
        every = min(5.0, max(0.1, grace_s / 4))
        while True:
            await asyncio.sleep(every)
            try:
                await self.fail_lost(grace_s)
            except Exception:  # keep watching; the next round tries again
                log.exception("looking for lost agents failed")

    async def fail_lost(self, grace_s: float) -> None:
        cutoff = utcnow() - timedelta(seconds=grace_s)
        async with self.sessionmaker() as session:
            q = (
                select(Run.id, Run.machine_id)
                .join(Machine, Machine.id == Run.machine_id)
                .where(Run.status == RunStatus.RUNNING, Machine.last_seen < cutoff)
            )
            rows = list(await session.execute(q))
            online: Container[str] = await self.hub.online() if rows else set()
            candidates = [(rid, mid) for rid, mid in rows if mid not in online]
        for run_id, machine_id in candidates:
            async with self.hub.locks[machine_id]:
                async with self.sessionmaker() as session:
                    if machine_id in await self.hub.online():
                        continue  # it came back meanwhile (to any server process): it resumed the run
                    run = await load_run(session, run_id)
                    if run.status != RunStatus.RUNNING:
                        continue
                    run.status = RunStatus.FAILED
                    run.error = AGENT_LOST
                    run.finished_at = utcnow()
                    for it in run.items:
                        if it.result_id is None:
                            it.state = ItemState.FAILED
                            it.error = AGENT_LOST
                    await session.commit()
            log.warning("run %s failed: agent %s offline for over %.0f s", run_id, machine_id, grace_s)
            self.events.notify(run_id)
