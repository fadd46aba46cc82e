"""Load on the real server from simulated agents that speak the real protocol (no kernels run).

Issue "The server holds", benchmarks. Scenarios, each on a fresh server process (tests/e2e/stack.py) with
its SQLite database (or PostgreSQL with CTXBENCH_TEST_DATABASE_URL, as the tests do):

connect   N agents enroll and connect at once: errors, time until all are welcomed.
idle      N agents stay connected and heartbeat: the server's RSS and CPU over a window, and that CPU
          per heartbeat of the agents that connected.
ingest    A agents each get one run of M items and answer them (RUNNING, then the result, as an agent
          does) at R results/s over all agents (0: all at once): results acknowledged per second,
          report -> ack latency p50/p99.
batch     one POST /runs to B machines x M items: the POST's latency and the server's CPU for it, then
          until every agent has its StartRun; then the same on a fresh server with POST /runs?items=false
          (the answer's runs without their items).

Run: .venv/bin/python server/benchmarks/load.py [connect] [idle] [ingest] [batch] [--json FILE]
Figures depend on the host (2 CPUs here) and on what else runs: say so beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from google.protobuf.timestamp_pb2 import Timestamp

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "server" / "tests"))  # fake_agent.py (server/tests is another "tests")

from fake_agent import FakeAgent  # noqa: E402
from pacing import TICK_S, send_paced  # noqa: E402
from procstat import main_thread_cpu, proc_stats, threads_cpu  # noqa: E402
from tests.e2e.stack import Server  # noqa: E402

from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb  # noqa: E402


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


class Fleet:
    """Simulated agents of one server, each with a heartbeat task once connected."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.token = server.token_file.read_text().strip()
        self.ca = server.ca_file.read_bytes() if server.ca_file else None
        self.credentials: dict[str, str] = {}
        self.agents: list[FakeAgent] = []
        self.beats: list[asyncio.Task[None]] = []
        self.intervals: list[float] = []  # each connected agent's heartbeat interval (s)

    def new(self, i: int) -> FakeAgent:
        a = FakeAgent(
            self.server.grpc_target,
            self.token,
            name=f"load-{i}",
            root_ca=self.ca,
            credentials=self.credentials,
        )
        self.agents.append(a)
        return a

    async def heartbeat(self, a: FakeAgent, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            ts = Timestamp()
            ts.GetCurrentTime()
            await a.send(pb.ConnectRequest(heartbeat=pb.Heartbeat(sent_at=ts)))

    async def connect_all(self, n: int, wave: int = 0) -> tuple[float, int]:
        """Connects n new agents at once (`wave`: so many at a time); (seconds until all answered, errors)."""
        start = time.perf_counter()
        agents = [self.new(i) for i in range(len(self.agents), len(self.agents) + n)]
        got: list[Any] = []
        step = wave or n
        for i in range(0, n, step):
            got += await asyncio.gather(
                *(a.connect(wait_s=120) for a in agents[i : i + step]), return_exceptions=True
            )
        took = time.perf_counter() - start
        errors = 0
        for a, w in zip(agents, got, strict=True):
            if isinstance(w, BaseException):
                if not errors:
                    print(f"first connect error: {w!r}"[:2000], file=sys.stderr, flush=True)
                errors += 1
            else:
                self.intervals.append(max(1.0, w.heartbeat_interval_s))
                self.beats.append(asyncio.create_task(self.heartbeat(a, self.intervals[-1])))
        return took, errors

    async def close(self) -> None:
        for t in self.beats:
            t.cancel()
        await asyncio.gather(*(a.close() for a in self.agents), return_exceptions=True)


async def on_server(body: Callable[[Server, Fleet], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        server = await asyncio.to_thread(Server, data)  # (it may create a PostgreSQL database: asyncio.run)
        fleet = Fleet(server)
        try:
            return await body(server, fleet)
        finally:
            await fleet.close()
            server.stop()


async def connect(n: int) -> dict[str, Any]:
    async def body(server: Server, fleet: Fleet) -> dict[str, Any]:
        took, errors = await fleet.connect_all(n)
        return {"agents": n, "errors": errors, "all_welcomed_s": round(took, 2)}

    return await on_server(body)


async def idle(n: int, window_s: float, settle_s: float = 15.0) -> dict[str, Any]:
    async def body(server: Server, fleet: Fleet) -> dict[str, Any]:
        pid = server.proc.pid
        _, base_rss = proc_stats(pid)
        # in waves of 200 (the connect scenario's size): this measures the streams held, not a storm
        took, errors = await fleet.connect_all(n, wave=200)
        await asyncio.sleep(settle_s)  # the connects' own work and the first heartbeats settle
        # (for a profiler: py-spy record -p <pid> over the window)
        print(f"idle window of {window_s:.0f} s begins: server pid {pid}", file=sys.stderr, flush=True)
        cpu0, _ = proc_stats(pid)
        t0 = time.perf_counter()
        await asyncio.sleep(window_s)
        cpu1, rss = proc_stats(pid)
        wall = time.perf_counter() - t0
        beats = sum(wall / every for every in fleet.intervals)  # heartbeats the window held
        return {
            "agents": n,
            "errors": errors,
            "connect_s": round(took, 1),
            "window_s": round(wall, 1),
            "server_cpu_pct": round(100 * (cpu1 - cpu0) / wall, 2),
            # all the server did, per heartbeat of the agents connected (a failed connect sends none)
            "server_cpu_us_per_heartbeat": round(1e6 * (cpu1 - cpu0) / max(1.0, beats)),
            "server_rss_mb": round(rss / 2**20, 1),
            "server_rss_empty_mb": round(base_rss / 2**20, 1),
        }

    return await on_server(body)


def sweep_items(m: int) -> list[dict[str, Any]]:
    """m items over the 64 x 3 points of the fake catalog's syscall.getppid (repeated past 192)."""
    out = []
    for threads in range(1, 65):
        for placement in ("same_core", "cross_core", "unpinned"):
            out.append({"kernel": "syscall.getppid", "params": {"threads": threads, "placement": placement}})
    return [out[i % len(out)] for i in range(m)]


async def _one_run_each(server: Server, fleet: Fleet, items: int) -> list[tuple[FakeAgent, pb.StartRun]]:
    """POST one run of `items` to each agent; each agent's StartRun."""
    api = server.base_url + "/api/v1"
    async with httpx.AsyncClient(base_url=api, headers=server.auth, timeout=60) as http:
        for a in fleet.agents:
            body = {"machine_id": a.agent_id, "items": sweep_items(items), "repetitions": 10}
            (await http.post("/runs", json={**body, "min_time_s": 0.01})).raise_for_status()
    return [(a, (await a.expect("start_run", 30)).start_run) for a in fleet.agents]


def _answers(starts: list[tuple[FakeAgent, pb.StartRun]]) -> dict[str, list[tuple[pb.ConnectRequest, Any]]]:
    """Per run, each item's RunUpdate RUNNING and its ResultReport, built before the clock starts: what is
    measured is the server, not this generator's protobufs."""
    return {
        run.run_id: [
            (
                pb.ConnectRequest(
                    run_update=pb.RunUpdate(
                        run_id=run.run_id, state=pb.ITEM_STATE_RUNNING, item_id=item.item_id, item_index=i
                    )
                ),
                a.result(run.run_id, item),
            )
            for i, item in enumerate(run.items)
        ]
        for a, run in starts
    }


def profiler(pid: int, out: Path | None) -> subprocess.Popen[bytes] | None:
    """py-spy recording the server (collapsed stacks, what `--profile FILE` asks for) until stopped."""
    if out is None:
        return None
    spy = Path(sys.executable).parent / "py-spy"
    # the thread holding the GIL, sampled without stopping the process: what slows the server least
    cmd = [str(spy), "record", "-r", "97", "--nonblocking", "--gil", "-f", "raw", "-o", str(out)]
    cmd += ["--pid", str(pid)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_profiler(spy: subprocess.Popen[bytes] | None) -> None:
    if spy is not None:
        spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
        spy.wait(30)


async def ingest(agents: int, items: int, rate: float, profile: Path | None = None) -> dict[str, Any]:
    """Each agent answers its run's items as a real agent does (RunUpdate RUNNING, then the ResultReport),
    all agents together at `rate` results/s (0: as fast as they can), and times each report to its ack."""

    async def body(server: Server, fleet: Fleet) -> dict[str, Any]:
        _, errors = await fleet.connect_all(agents)
        starts = await _one_run_each(server, fleet, items)
        sent: dict[str, float] = {}
        latencies: list[float] = []
        messages = _answers(starts)
        per_agent = rate / len(starts) if rate > 0 else 0.0

        async def read_acks(a: FakeAgent, run: pb.StartRun) -> None:
            acks = 0
            while acks < len(run.items):
                msg = await a.next(120)
                if msg.WhichOneof("msg") == "result_ack":
                    latencies.append(time.perf_counter() - sent[msg.result_ack.result_id])
                    acks += 1

        spy = profiler(server.proc.pid, profile)
        cpu0, _ = proc_stats(server.proc.pid)
        main0 = main_thread_cpu(server.proc.pid)
        threads0 = threads_cpu(server.proc.pid)
        t0 = time.perf_counter()
        await asyncio.gather(
            *(
                send_paced(a.send, messages[run.run_id], per_agent, TICK_S * i / len(starts), sent)
                for i, (a, run) in enumerate(starts)
            ),
            *(read_acks(a, run) for a, run in starts),
        )
        wall = time.perf_counter() - t0
        cpu1, _ = proc_stats(server.proc.pid)
        main1 = main_thread_cpu(server.proc.pid)
        threads1 = threads_cpu(server.proc.pid)
        stop_profiler(spy)
        n = len(latencies)
        by_thread = {
            name: round(1000 * (cpu - threads0.get(name, 0.0)) / max(1, n), 3)
            for name, cpu in threads1.items()
        }
        return {
            "agents": agents,
            "items_per_run": items,
            "offered_per_s": rate or "max",
            "errors": errors,
            "results": n,
            "results_per_s": round(n / wall, 1),
            "ack_p50_ms": round(1000 * statistics.median(latencies), 1),
            "ack_p99_ms": round(1000 * pct(latencies, 0.99), 1),
            # the server's CPU time per result: what a busy host's load average does not change much
            "server_cpu_ms_per_result": round(1000 * (cpu1 - cpu0) / max(1, n), 3),
            # of which its event loop's thread: the one that bounds the rate (statistics run beside it)
            "main_thread_cpu_ms_per_result": round(1000 * (main1 - main0) / max(1, n), 3),
            # the server's threads by name (the statistics workers are processes: in the total only)
            "thread_cpu_ms_per_result": {k: v for k, v in sorted(by_thread.items()) if v > 0},
        }

    return await on_server(body)


async def batch(
    machines: int, items: int, light: bool = False, profile: Path | None = None, warm: bool = False
) -> dict[str, Any]:
    """`light`: POST /runs?items=false (the runs without their items in the answer). `warm`: one agent
    more gets a one-item POST first, so that the measured POST is not the server's first (its one-time
    costs: routes' schemas built on first use, SQL compiled and cached)."""

    async def body(server: Server, fleet: Fleet) -> dict[str, Any]:
        _, errors = await fleet.connect_all(machines + (1 if warm else 0))
        targets = fleet.agents[1:] if warm else fleet.agents
        query = {"items": "false"} if light else None
        async with httpx.AsyncClient(
            base_url=f"{server.base_url}/api/v1", headers=server.auth, timeout=60
        ) as http:
            if warm:
                first = {"machine_ids": [fleet.agents[0].agent_id], "items": sweep_items(1)}
                (await http.post("/runs", params=query, json=first)).raise_for_status()
                await fleet.agents[0].expect("start_run", 60)
            spy = profiler(server.proc.pid, profile)
            if spy is not None:
                await asyncio.sleep(1.0)  # py-spy attached
            cpu0, _ = proc_stats(server.proc.pid)
            t0 = time.perf_counter()
            ids = [a.agent_id for a in targets]
            req = {"machine_ids": ids, "items": sweep_items(items), "repetitions": 10, "min_time_s": 0.01}
            r = await http.post("/runs", params=query, json=req)
            posted = time.perf_counter() - t0
            post_cpu = proc_stats(server.proc.pid)[0] - cpu0  # the server's CPU for it (the load apart)
            stop_profiler(spy)
            r.raise_for_status()
        got = await asyncio.gather(*(a.expect("start_run", 60) for a in targets), return_exceptions=True)
        started = time.perf_counter() - t0
        return {
            "machines": machines,
            "items": items,
            "server": "warm" if warm else "fresh",
            "errors": errors + sum(isinstance(g, BaseException) for g in got),
            "post_ms": round(1000 * posted, 1),
            "post_server_cpu_ms": round(1000 * post_cpu),
            "all_started_s": round(started, 2),
            "response_kb": round(len(r.content) / 1024, 1),
        }

    return await on_server(body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", default=["connect", "idle", "ingest", "batch"])
    ap.add_argument("--connect", type=int, default=200)
    ap.add_argument("--idle", type=int, default=1000)
    ap.add_argument("--window", type=float, default=30.0)
    ap.add_argument(
        "--settle", type=float, default=15.0, help="idle: seconds between the connects and the window"
    )
    ap.add_argument("--ingest-agents", type=int, default=20)
    ap.add_argument("--ingest-items", type=int, default=1000)
    ap.add_argument("--ingest-rate", type=float, default=5000, help="results/s over all agents; 0: at once")
    ap.add_argument("--batch-machines", type=int, default=100)
    ap.add_argument("--batch-items", type=int, default=50)
    ap.add_argument(
        "--profile",
        type=Path,
        help="ingest, batch: py-spy's collapsed stacks of the server, to FILE (batch: FILE.<shape>.txt)",
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out: dict[str, Any] = {}
    for s in args.scenarios:
        if s == "connect":
            out[s] = asyncio.run(connect(args.connect))
        elif s == "idle":
            out[s] = asyncio.run(idle(args.idle, args.window, args.settle))
        elif s == "ingest":
            out[s] = asyncio.run(
                ingest(args.ingest_agents, args.ingest_items, args.ingest_rate, args.profile)
            )
        elif s == "batch":  # each shape of the answer on a fresh server, then on one that served a POST
            shapes = {}
            for warm in (False, True):
                for light in (False, True):
                    shape = ("warm " if warm else "") + ("items=false" if light else "items")
                    prof = args.profile and args.profile.with_suffix(f".{shape.replace(' ', '-')}.txt")
                    shapes[shape] = asyncio.run(
                        batch(args.batch_machines, args.batch_items, light=light, warm=warm, profile=prof)
                    )
            # the first server's figures, then the others' (the keys earlier versions printed kept)
            out[s] = shapes.pop("items") | shapes
        else:
            ap.error(f"unknown scenario {s!r}")
        print(json.dumps({s: out[s]}), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
