"""A reconnect storm with real processes (issue 25): N real agents (build/bin/ctxbench-agent) start at
once against one real server, then the server restarts under them on the same ports and database. Used
by the storm test (`make test-storm`, 200 agents, SQLite and PostgreSQL) and by `make bench` (section
`storm`, 1000 agents).

Each agent has its own state dir and enrolls with the server's shared agent token over TLS, with a small
catalog (one kernel executable): the agents share this host's CPUs, and 200 agents listing all 41
kernels at start measure this host's process starts rather than the server. A restart costs the server
what a fleet's restart costs it; the first start adds the enrollments.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.stack import KERNELS_DIR, Agent, Server

# What a server must never log while a fleet connects: a traceback, a pool or write-gate timeout, a
# Hello it failed to record. A deferred Hello (admission's turn) is normal and counted apart.
BAD = ("Traceback", "QueuePool limit", "write gate", "could not record", "failed serving")
DEFERRED = "deferred"
CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
_CONNECTED = re.compile(r"agent (\S+) \(.*\) connected from ")
_GONE = re.compile(r"agent (\S+) disconnected")


def small_catalog(root: Path, exe: str = "ctxbench-kernels-cpp") -> Path:
    d = root / "kernels"
    d.mkdir(exist_ok=True)
    if not (d / exe).exists():
        (d / exe).symlink_to(KERNELS_DIR / exe)
    return d


class CpuQuota:
    """A cgroup v1 CPU quota (root): the processes put in it get `share` of one CPU at most. The storm
    gives it to the server, so that its Hellos take as long to record as on a busy host."""

    def __init__(self, name: str, share: float) -> None:
        self.dir = CGROUP_CPU / name
        self.dir.mkdir(exist_ok=True)
        (self.dir / "cpu.cfs_period_us").write_text("100000")
        (self.dir / "cpu.cfs_quota_us").write_text(str(int(100000 * share)))

    def add(self, pid: int) -> None:
        (self.dir / "cgroup.procs").write_text(str(pid))

    def release(self, pid: int) -> None:
        """Back to the root group: the whole host again."""
        (CGROUP_CPU / "cgroup.procs").write_text(str(pid))

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            self.dir.rmdir()


class Storm:
    def __init__(
        self, root: Path, agents: int, kernels: Path | None = None, server_cpu: float = 0, **settings: str
    ) -> None:
        self.root = root
        self.n = agents
        self.kernels = kernels or small_catalog(root)
        self.settings = settings
        self.agents: list[Agent] = []
        self.quota = CpuQuota(f"ctxbench-storm-{os.getpid()}", server_cpu) if server_cpu else None
        (root / "server").mkdir(parents=True, exist_ok=True)
        self.server = self._server()

    def _server(self, **ports: int) -> Server:
        # A restart's start-up shares this host's CPUs with every agent reconnecting (1000 agents: load
        # 70-190 on 2 CPUs, and HTTP up after more than a minute): the clock of the step runs from the
        # restart anyway, so the start gets what the step's limit allows.
        server = Server(self.root / "server", start_s=600.0, **ports, **self.settings)
        if self.quota is not None:
            self.quota.add(server.proc.pid)
        return server

    def start_agents(self) -> None:
        for i in range(self.n):
            spool = self.root / "agents" / f"{i:04d}" / "state"
            spool.mkdir(parents=True)
            self.agents.append(Agent(self.server, spool, name=f"storm-{i:04d}", kernels=self.kernels))

    def restart_server(self) -> None:
        http_port, grpc_port = self.server.http_port, self.server.grpc_port
        self.server.stop(30)
        self.server = self._server(http_port=http_port, grpc_port=grpc_port)

    def online(self) -> tuple[int, float]:
        """Machines the server says are online, and how long GET /machines took to say it."""
        t0 = time.perf_counter()
        r = self.server.http.get("/machines", timeout=60)
        took = time.perf_counter() - t0
        r.raise_for_status()
        return sum(1 for m in r.json() if m["online"]), took

    def connected(self) -> int:
        """Agents the server's log says are connected now (free to ask: GET /machines of 1000 machines
        is 4 MB and seconds of the server's CPU, so polling it would be the load being measured)."""
        state: dict[str, bool] = {}
        for line in list(self.server.lines):
            if m := _CONNECTED.search(line):
                state[m.group(1)] = True
            elif m := _GONE.search(line):
                state[m.group(1)] = False
        return sum(state.values())

    def until_online(self, since: float, limit_s: float) -> dict[str, Any]:
        """Waits until the server's log has every agent connected and GET /machines agrees, or limit_s
        passed since `since`."""
        seen, slowest = 0, 0.0
        while time.perf_counter() - since < limit_s:
            if self.connected() >= self.n:
                try:
                    seen, took = self.online()
                    slowest = max(slowest, took)
                except httpx.HTTPError:
                    slowest = max(slowest, 60.0)
                if seen >= self.n:
                    break
            time.sleep(0.5)
        else:
            seen = self.connected()
        done = seen >= self.n
        return {
            "online": seen,
            "all_online_s": round(time.perf_counter() - since, 1) if done else None,
            "machines_list_s": round(slowest, 2),
        }

    def logged(self) -> dict[str, int]:
        text = "\n".join(self.server.lines)
        return {"bad": sum(text.count(k) for k in BAD), DEFERRED: text.count(DEFERRED)}

    def batch(self, machines: int) -> dict[str, Any]:
        """One POST /runs to `machines` online machines (their answer light: items=false)."""
        listed = self.server.http.get("/machines", timeout=60).json()
        ids = [m["id"] for m in listed if m["online"]][:machines]
        body = {"machine_ids": ids, "items": [{"kernel": "syscall.getppid"}], "profile": "quick"}
        t0 = time.perf_counter()
        r = self.server.http.post("/runs", params={"items": "false"}, json=body, timeout=120)
        return {"machines": len(ids), "status": r.status_code, "post_s": round(time.perf_counter() - t0, 2)}

    def stop(self) -> None:
        for a in self.agents:
            a.signal(15)
        for a in self.agents:
            a.stop(10)
        self.server.stop(30)
        if self.quota is not None:
            self.quota.remove()


def run(
    root: Path,
    agents: int,
    limit_s: float = 60.0,
    batch: int = 100,
    server_cpu: float = 0,
    kernels: Path | None = None,
    measure: Callable[[int], dict[str, Any]] | None = None,
    **settings: str,
) -> dict[str, Any]:
    """Start, all online, restart, all online, one batch: the figures of each step, plus what `measure`
    returns, called with the server's pid while the fleet is still connected. `server_cpu` > 0: the
    server runs under a CPU quota of that share of one CPU during the storms."""
    storm = Storm(root, agents, kernels=kernels, server_cpu=server_cpu, **settings)
    out: dict[str, Any] = {"agents": agents, "server_cpu": server_cpu or None}
    try:
        t0 = time.perf_counter()
        storm.start_agents()
        out["first_start"] = storm.until_online(t0, limit_s) | storm.logged()
        t0 = time.perf_counter()
        storm.restart_server()
        out["restart"] = storm.until_online(t0, limit_s) | storm.logged()
        if storm.quota is not None:
            # The quota made the storm; the batch is timed on the server as deployed, the fleet settled.
            storm.quota.release(storm.server.proc.pid)
        out["restart"]["batch"] = storm.batch(batch)
        if measure is not None:
            out |= measure(storm.server.proc.pid)
    finally:
        storm.stop()
    out["load_average"] = [round(x, 1) for x in os.getloadavg()]
    return out
