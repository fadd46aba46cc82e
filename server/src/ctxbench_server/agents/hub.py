"""The hub: which agents have an open Connect stream, and a way to push messages down each one."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict

import grpc

from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb

log = logging.getLogger(__name__)


class AgentConnection:
    """One open Connect stream. Messages put here are written to the agent in order."""

    def __init__(self, machine_id: str, peer: str = "") -> None:
        self.machine_id = machine_id
        self.peer = peer
        self.outbox: asyncio.Queue[pb.ConnectResponse | None] = asyncio.Queue()
        self.closed = False
        self.last_message = time.monotonic()
        # The running run an idle heartbeat of this agent last contradicted (see Dispatcher.on_heartbeat).
        self.idle_during: str | None = None
        # Why the server ended the stream, when it was not the agent going away: (status, message).
        self.abort_with: tuple[grpc.StatusCode, str] | None = None
        # Its Hello said it assembles a StartRun sent in parts (runs/starts.py).
        self.start_run_parts = False

    def send(self, msg: pb.ConnectResponse) -> None:
        if not self.closed:
            self.outbox.put_nowait(msg)

    def close(self) -> None:
        """Ends the stream from the server side (the writer stops at this sentinel)."""
        if not self.closed:
            self.closed = True
            self.outbox.put_nowait(None)


class AgentHub:
    def __init__(self) -> None:
        self._conns: dict[str, AgentConnection] = {}
        # Serialises dispatch decisions per machine (a POST and a finishing run must not both start one).
        self.locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        # Machines revoked while this process runs (the database says so for the earlier ones).
        self._revoked: set[str] = set()

    def is_revoked(self, machine_id: str) -> bool:
        return machine_id in self._revoked

    def revoke(self, machine_id: str) -> None:
        """Refuses the machine from now on and ends its open stream with PERMISSION_DENIED at once."""
        self._revoked.add(machine_id)
        conn = self._conns.pop(machine_id, None)
        if conn is not None:
            log.warning("machine %s revoked; closing its stream from %s", machine_id, conn.peer)
            conn.abort_with = (grpc.StatusCode.PERMISSION_DENIED, f"machine {machine_id} has been revoked")
            conn.close()

    def register(self, conn: AgentConnection) -> None:
        if conn.machine_id in self._revoked:  # revoked while this stream was being set up
            conn.abort_with = (
                grpc.StatusCode.PERMISSION_DENIED,
                f"machine {conn.machine_id} has been revoked",
            )
            conn.close()
            return
        old = self._conns.get(conn.machine_id)
        if old is not None and old is not conn:
            log.warning(
                "agent %s connected again from %s; closing its older stream", conn.machine_id, conn.peer
            )
            old.close()
        self._conns[conn.machine_id] = conn

    def unregister(self, conn: AgentConnection) -> None:
        if self._conns.get(conn.machine_id) is conn:
            del self._conns[conn.machine_id]
        conn.close()

    def get(self, machine_id: str) -> AgentConnection | None:
        return self._conns.get(machine_id)

    def is_online(self, machine_id: str) -> bool:
        return machine_id in self._conns

    def online_ids(self) -> set[str]:
        return set(self._conns)

    def close_all(self) -> None:
        for conn in list(self._conns.values()):
            conn.close()
        self._conns.clear()
