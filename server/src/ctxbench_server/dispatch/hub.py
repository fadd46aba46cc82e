"""The hub: which agents have an open Connect stream, and a way to push messages down each one.

With several server processes (PostgreSQL, cluster.py) each has its own hub; a machine's stream is held by
one of them at a time (its presence lock), and its lock serialises that machine's transactions across
all of them too."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import AsyncIterator, Callable, Container, Iterable
from datetime import datetime, timedelta
from types import TracebackType
from typing import TYPE_CHECKING

from ctxbench_server.cluster import locked_machine
from ctxbench_server.errors import CtxbenchError, PermissionDenied, Unavailable
from ctxbench_server.models.base import utcnow

if TYPE_CHECKING:
    from ctxbench_server.cluster import Cluster

log = logging.getLogger(__name__)


class AgentConnection:
    """One open Connect stream. Messages put here are written to the agent in order: dispatch's
    commands (dispatch.commands) and the stream's own answers, which agents/ writes as protobuf."""

    def __init__(self, machine_id: str, peer: str = "") -> None:
        self.machine_id = machine_id
        self.peer = peer
        self.outbox: asyncio.Queue[object | None] = asyncio.Queue()
        self.closed = False
        self.last_message = time.monotonic()
        # The running run an idle heartbeat of this agent last contradicted (see Dispatcher.on_heartbeat).
        self.idle_during: str | None = None
        # Why the server ended the stream, when it was not the agent going away (its gRPC status).
        self.abort_with: CtxbenchError | None = None
        # The run the agent was last sent or last said it runs ("" when none): what a cancel made on
        # another server process stops (Dispatcher.reconcile).
        self.current_run_id = ""
        self.claimed = False  # holds the machine's presence in the cluster (AgentHub.claim)
        # Its Hello said it assembles a StartRun sent in parts (dispatch/starts.py).
        self.start_run_parts = False
        # Its Hello said it reads ResultAck.more_result_ids: one Ack for the results stored together.
        self.batched_acks = False

    def send(self, msg: object) -> None:
        if not self.closed:
            self.outbox.put_nowait(msg)

    def close(self) -> None:
        """Ends the stream from the server side (the writer stops at this sentinel)."""
        if not self.closed:
            self.closed = True
            self.outbox.put_nowait(None)


class MachineLock:
    """One machine's lock in this process; on PostgreSQL every transaction begun while holding it also
    takes the machine's advisory lock (cluster.py), so other server processes wait their turn too."""

    def __init__(self, machine_id: str) -> None:
        self.machine_id = machine_id
        self._lock = asyncio.Lock()
        self._token: contextvars.Token[str | None] | None = None

    def locked(self) -> bool:
        return self._lock.locked()

    async def __aenter__(self) -> None:
        await self._lock.acquire()
        self._token = locked_machine.set(self.machine_id)

    async def __aexit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        token, self._token = self._token, None
        if token is not None:
            try:
                locked_machine.reset(token)
            except ValueError:  # set in another context (an asyncio task copies it): just clear ours
                locked_machine.set(None)
        self._lock.release()


class MachineLocks(dict[str, MachineLock]):
    def __missing__(self, machine_id: str) -> MachineLock:
        lock = self[machine_id] = MachineLock(machine_id)
        return lock

    @contextlib.asynccontextmanager
    async def holding(self, machine_ids: Iterable[str]) -> AsyncIterator[list[str]]:
        """Several machines' locks at once, taken in sorted order (two holders never wait for each other
        in a circle); yields the machine ids in that order. Inside, a transaction takes no machine's
        advisory lock by itself: one that changes these machines takes them all (cluster.lock_machines)."""
        ids = sorted(set(machine_ids))
        async with contextlib.AsyncExitStack() as stack:
            for machine_id in ids:
                await stack.enter_async_context(self[machine_id]._lock)
            token = locked_machine.set(None)
            try:
                yield ids
            finally:
                locked_machine.reset(token)


class AgentHub:
    def __init__(self) -> None:
        self._conns: dict[str, AgentConnection] = {}
        # Serialises dispatch decisions per machine (a POST and a finishing run must not both start one).
        self.locks = MachineLocks()
        # Machines revoked while this process runs (the database says so for the earlier ones).
        self._revoked: set[str] = set()
        # The other server processes (PostgreSQL only; set by main).
        self.cluster: Cluster | None = None
        # Tells the explorer's push channel (set by main): a machine's stream began (True) or ended.
        self.on_presence: Callable[[str, bool], None] = lambda _machine_id, _online: None

    def is_revoked(self, machine_id: str) -> bool:
        return machine_id in self._revoked

    def revoke(self, machine_id: str) -> None:
        """Refuses the machine from now on and ends its open stream with PERMISSION_DENIED at once."""
        self._revoked.add(machine_id)
        conn = self._conns.pop(machine_id, None)
        if conn is not None:
            log.warning("machine %s revoked; closing its stream from %s", machine_id, conn.peer)
            conn.abort_with = PermissionDenied(f"machine {machine_id} has been revoked")
            conn.close()
        if self.cluster is not None:
            self.cluster.publish_release(machine_id)  # its stream on another server process ends too

    def register(self, conn: AgentConnection) -> None:
        if conn.machine_id in self._revoked:  # revoked while this stream was being set up
            conn.abort_with = PermissionDenied(f"machine {conn.machine_id} has been revoked")
            conn.close()
            return
        old = self._conns.get(conn.machine_id)
        if old is not None and old is not conn:
            log.warning(
                "agent %s connected again from %s; closing its older stream", conn.machine_id, conn.peer
            )
            old.close()
        self._conns[conn.machine_id] = conn
        self.on_presence(conn.machine_id, True)

    def unregister(self, conn: AgentConnection) -> None:
        if self._conns.get(conn.machine_id) is conn:
            del self._conns[conn.machine_id]
            self.on_presence(conn.machine_id, False)
        conn.close()
        if conn.claimed and self.cluster is not None:
            conn.claimed = False
            self.cluster.release(conn.machine_id)

    async def claim(self, conn: AgentConnection) -> bool:
        """Makes this process the machine's only server (other processes close their streams of it).
        False, with the stream closed UNAVAILABLE, when another process would not let go in time."""
        if self.cluster is None or conn.claimed:
            return True
        if not await self.cluster.claim(conn.machine_id):
            log.warning("agent %s: another server process still holds its stream; refused", conn.machine_id)
            conn.abort_with = Unavailable(
                f"machine {conn.machine_id} is still connected to another server; retry"
            )
            conn.close()
            return False
        conn.claimed = True
        if conn.closed:  # it ended while waiting: unregister ran before the claim
            self.unregister(conn)
            return False
        return True

    def release_here(self, machine_id: str) -> None:
        """Another server process has this machine's newer stream: the one here ends (the agent is gone
        from it, or reconnects)."""
        conn = self._conns.get(machine_id)
        if conn is not None:
            log.info("agent %s connected to another server process; closing its stream here", machine_id)
            conn.close()

    def get(self, machine_id: str) -> AgentConnection | None:
        return self._conns.get(machine_id)

    def tell_holder(self, machine_id: str) -> None:
        """The machine's stream is not on this process: the process holding it (if any) reconciles
        (Dispatcher.reconcile: stops a cancelled run, starts the next)."""
        if self.cluster is not None:
            self.cluster.publish_machine(machine_id)

    def connections(self) -> Iterable[AgentConnection]:
        """The open streams of this process."""
        return self._conns.values()

    def is_online(self, machine_id: str) -> bool:
        return machine_id in self._conns

    def online_ids(self) -> set[str]:
        """Machines with a stream on this process."""
        return set(self._conns)

    def last_heard(self) -> dict[str, datetime]:
        """When each agent with a stream on this process last spoke (agents/liveness.py keeps it in
        memory; machines.last_seen is written at most every few heartbeats), by machine id."""
        wall, now = utcnow(), time.monotonic()
        return {c.machine_id: wall - timedelta(seconds=now - c.last_message) for c in self._conns.values()}

    async def online(self) -> Container[str]:
        """Machines with a stream on this process or, with several server processes, on any of them."""
        if self.cluster is None:
            return self.online_ids()
        return await self.cluster.online(self._conns)

    def close_all(self) -> list[str]:
        """Ends every stream (server shutdown); the machines they served, which the caller announces
        offline once their presence has ended (main's stop)."""
        gone = list(self._conns)
        for conn in list(self._conns.values()):
            conn.close()
        self._conns.clear()
        return gone
