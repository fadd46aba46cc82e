"""The floor under `load.py ingest`: what the agent stream alone costs on this host, with nothing stored.

A server process that answers each ResultReport with its ResultAck at once (no database, no statistics,
no dispatch) on the real server's gRPC options and TLS, driven by the same load as `load.py ingest`: A
streams, each sending per item a RunUpdate RUNNING and a ResultReport of 10 samples, paced together at R
results/s in ticks of 5 ms. Reports the acknowledged results/s, report -> ack p50/p99, and the CPU time
per result of the server and of this generator (both Python grpc.aio, as the server and the load
generator of `load.py` are). On a 2-CPU host the two share the CPUs: what the floor's server and
generator take together is what a real server cannot have for storing and statistics.

Run: .venv/bin/python server/benchmarks/grpc_floor.py [--agents 20] [--items 1000] [--rate 5000]
     [--insecure] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import uvloop

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server" / "benchmarks"))

from pacing import TICK_S, send_paced  # noqa: E402
from procstat import proc_stats  # noqa: E402

from ctxbench_server.config import Settings  # noqa: E402
from ctxbench_server.fleet.tls import ensure_tls  # noqa: E402
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb  # noqa: E402
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2_grpc as pb_grpc  # noqa: E402
from ctxbench_server.main import GRPC_OPTIONS  # noqa: E402


class AckAll(pb_grpc.AgentServiceServicer):
    """Every ResultReport acknowledged as it is read; nothing else answered."""

    async def Connect(
        self, request_iterator: AsyncIterator[pb.ConnectRequest], context: grpc.aio.ServicerContext
    ) -> None:
        async for req in request_iterator:
            if req.HasField("result_report"):
                ack = pb.ResultAck(result_id=req.result_report.result_id)
                await context.write(pb.ConnectResponse(result_ack=ack))


async def serve(tls_dir: Path, insecure: bool) -> None:
    server = grpc.aio.server(options=GRPC_OPTIONS)
    pb_grpc.add_AgentServiceServicer_to_server(AckAll(), server)
    if insecure:
        port = server.add_insecure_port("127.0.0.1:0")
    else:
        tls = ensure_tls(Settings(data_dir=tls_dir, grpc_host="127.0.0.1"))
        creds = grpc.ssl_server_credentials([(tls.key_pem, tls.cert_chain_pem)])
        port = server.add_secure_port("127.0.0.1:0", creds)
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()


def messages(items: int) -> list[tuple[pb.ConnectRequest, pb.ConnectRequest]]:
    """One agent's RUNNING update and report per item, built before the clock starts (as load.py)."""
    out = []
    for i in range(items):
        report = pb.ResultReport(
            result_id=str(uuid.uuid4()),
            run_id="run",
            item_id=f"item-{i}",
            status=pb.RESULT_STATUS_OK,
            kernel_id="syscall.getppid",
            params={"threads": str(1 + i % 64), "placement": "same_core"},
            unit="ns/op",
            samples=[10.0, 11.0, 12.0, 10.5, 11.5, 10.2, 10.8, 11.1, 10.9, 11.3],
            iterations=[1000] * 10,
            counters={"voluntary_ctxsw_per_op": 0.0},
            harness=pb.Harness(name="google-benchmark", version="1.7.1", min_time_s=0.01),
        )
        running = pb.RunUpdate(run_id="run", state=pb.ITEM_STATE_RUNNING, item_id=f"item-{i}", item_index=i)
        out.append((pb.ConnectRequest(run_update=running), pb.ConnectRequest(result_report=report)))
    return out


async def drive(
    target: str, ca: bytes | None, agents: int, items: int, rate: float, pid: int
) -> dict[str, Any]:
    creds = grpc.ssl_channel_credentials(root_certificates=ca) if ca is not None else None
    own = [("grpc.use_local_subchannel_pool", 1)]  # a connection per agent, as from separate hosts
    channels = [
        grpc.aio.secure_channel(target, creds, own) if creds else grpc.aio.insecure_channel(target, own)
        for _ in range(agents)
    ]
    todo = [messages(items) for _ in range(agents)]
    calls = [pb_grpc.AgentServiceStub(ch).Connect() for ch in channels]
    sent: dict[str, float] = {}
    latencies: list[float] = []
    per_agent = rate / agents if rate > 0 else 0.0

    async def read_acks(call: Any) -> None:
        for _ in range(items):
            msg = await call.read()
            latencies.append(time.perf_counter() - sent[msg.result_ack.result_id])
        await call.done_writing()

    await asyncio.gather(*(ch.channel_ready() for ch in channels))
    server0 = proc_stats(pid)[0]
    self0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    await asyncio.gather(
        *(
            send_paced(c.write, m, per_agent, TICK_S * i / agents, sent)
            for i, (c, m) in enumerate(zip(calls, todo, strict=True))
        ),
        *(read_acks(c) for c in calls),
    )
    wall = time.perf_counter() - t0
    self1 = resource.getrusage(resource.RUSAGE_SELF)
    server1 = proc_stats(pid)[0]
    for ch in channels:
        await ch.close()
    n = len(latencies)
    latencies.sort()
    gen_cpu = (self1.ru_utime + self1.ru_stime) - (self0.ru_utime + self0.ru_stime)
    return {
        "agents": agents,
        "items_per_agent": items,
        "offered_per_s": rate or "max",
        "results": n,
        "results_per_s": round(n / wall, 1),
        "ack_p50_ms": round(1000 * latencies[n // 2], 1),
        "ack_p99_ms": round(1000 * latencies[min(n - 1, int(0.99 * n))], 1),
        "server_cpu_ms_per_result": round(1000 * (server1 - server0) / n, 3),
        "generator_cpu_ms_per_result": round(1000 * gen_cpu / n, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=20)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=5000, help="results/s over all agents; 0: at once")
    ap.add_argument("--insecure", action="store_true", help="no TLS (the real server serves TLS)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # the server child, its TLS dir
    args = ap.parse_args()
    if args.serve:
        uvloop.run(serve(args.serve, args.insecure))  # the server's own loop (ctxbench_server.main)
        return
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, __file__, "--serve", tmp, *(["--insecure"] if args.insecure else [])]
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None
            port = int(child.stdout.readline())
            ca = None if args.insecure else (Path(tmp) / "tls" / "ca.pem").read_bytes()
            out = asyncio.run(drive(f"127.0.0.1:{port}", ca, args.agents, args.items, args.rate, child.pid))
        finally:
            child.terminate()
            child.wait(10)
    print(json.dumps({"grpc_floor": out}), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
    main()
