"""Agents' liveness, kept in memory: online while the stream is open and the agent speaks;
machines.last_seen written in bulk, not per message."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server.db import writing
from ctxbench_server.dispatch.hub import AgentConnection
from ctxbench_server.machines import service as machines

log = logging.getLogger(__name__)

# An agent silent for this many heartbeat intervals is taken for gone: its stream is closed so the
# machine shows offline and its run is re-dispatched when it comes back.
MISSED_HEARTBEATS = 3
# Liveness is kept in memory (the hub: online while the stream is open); machines.last_seen of the
# agents that spoke is written every LAST_SEEN_FLUSH_S, each machine at most every LAST_SEEN_EVERY
# heartbeat intervals (a machines row holds its facts: rewriting 100 of them a second cost an idle
# server 2 % CPU), and always when its stream ends.
# GET /machines does not wait for that write: an online machine's last_seen is its last message
# (conn.last_message, set by `heard`; AgentHub.last_heard).
LAST_SEEN_FLUSH_S = 1.0
LAST_SEEN_EVERY = 6


class Liveness:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], heartbeat_interval_s: float) -> None:
        self.sessionmaker = sessionmaker
        self.heartbeat_interval_s = heartbeat_interval_s
        self._spoke: set[str] = set()  # machines that sent a message since the last flush_last_seen
        self._written: dict[str, float] = {}  # machine -> when flush_last_seen last wrote it (monotonic)

    def heard(self, conn: AgentConnection) -> None:
        """The agent of `conn` sent a message."""
        conn.last_message = time.monotonic()
        self._spoke.add(conn.machine_id)

    async def watch(self, connections: Callable[[], Iterable[AgentConnection]]) -> None:
        """Every heartbeat interval, closes the streams of agents silent for MISSED_HEARTBEATS intervals
        (so one is closed 3 to 4 intervals after it last spoke). One task for all streams: a task per
        stream woke 1000 idle streams' tasks 100 times a second."""
        limit = MISSED_HEARTBEATS * self.heartbeat_interval_s
        while True:
            await asyncio.sleep(self.heartbeat_interval_s)
            now = time.monotonic()
            for conn in list(connections()):
                silent = now - conn.last_message
                if silent > limit and not conn.closed:
                    log.warning("agent %s silent for %.0f s; closing its stream", conn.machine_id, silent)
                    conn.close()

    async def keep_last_seen(self, every_s: float = LAST_SEEN_FLUSH_S) -> None:
        """Writes machines.last_seen of the agents that spoke since the last round, in one statement a
        round (a message no longer costs a write of its own)."""
        while True:
            await asyncio.sleep(every_s)
            try:
                await self.flush_last_seen()
            except Exception:  # the next round tries again
                log.exception("could not record last_seen")

    async def flush_last_seen(self) -> None:
        now = time.monotonic()
        every = LAST_SEEN_EVERY * self.heartbeat_interval_s
        due = {mid for mid in self._spoke if now - self._written.get(mid, -every) >= every}
        self._spoke -= due
        if not due:
            return
        async with writing(self.sessionmaker) as session:
            await machines.touch_many(session, due)
        for mid in due:
            self._written[mid] = now
        for mid in [m for m, t in self._written.items() if now - t > 2 * every]:
            del self._written[mid]  # gone for a while: forgotten
