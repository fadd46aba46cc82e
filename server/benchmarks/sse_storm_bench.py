"""300 event streams on one run, a report, then a cancel (issue 12, item 1): what the streams got, how
many database connections the server checked out, and how long the agent's report waited.

    cd server && CTXBENCH_MAX_SSE_PER_CLIENT=1000 ../.venv/bin/python benchmarks/sse_storm_bench.py

The real server in this process (a fresh SQLite file, or CTXBENCH_TEST_DATABASE_URL), a fake agent over
real gRPC, the streams over real HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.conftest import ADMIN, TOKEN, running_server, server_ca, test_settings
from tests.fake_agent import FakeAgent


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=300)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        async with running_server(test_settings(Path(tmp))) as srv:
            checkouts = Counter[str]()
            engines = {"rest": srv.engine, "agents": getattr(srv, "agent_engine", None)}
            for name, engine in engines.items():
                if engine is not None:
                    event.listen(
                        engine.sync_engine.pool, "checkout", lambda *_, n=name: checkouts.update([n])
                    )
            agent = FakeAgent(
                f"127.0.0.1:{srv.grpc_port}", token=TOKEN, credentials={}, root_ca=server_ca(srv)
            )
            await agent.connect()
            base = f"http://127.0.0.1:{srv.http_port}"
            tls = ssl.create_default_context()  # shared: each client would load the CA bundle again
            async with httpx.AsyncClient(base_url=base, headers=ADMIN, timeout=60) as http:
                body = {"machine_id": agent.agent_id, "items": [{"kernel": "ctxsw.pipe"}] * 3}
                run = (await http.post("/api/v1/runs", json=body)).json()
                start = (await agent.expect("start_run")).start_run
                statuses: Counter[int] = Counter()
                ends = 0
                joined = 0
                all_in = asyncio.Event()

                async def follow() -> None:
                    nonlocal ends, joined
                    # A client each, as browsers would be (one client's pool is O(n^2) in its connections).
                    async with (
                        httpx.AsyncClient(base_url=base, headers=ADMIN, timeout=60, verify=tls) as own,
                        own.stream("GET", f"/api/v1/runs/{run['id']}/events") as resp,
                    ):
                        statuses[resp.status_code] += 1
                        if resp.status_code != 200:
                            joined += 1
                            if joined == a.streams:
                                all_in.set()
                            return
                        async for line in resp.aiter_lines():
                            if line == "event: run" and joined < a.streams:
                                joined += 1
                                if joined == a.streams:
                                    all_in.set()
                            if line == "event: end":
                                ends += 1

                c0 = checkouts.copy()
                t0 = time.perf_counter()
                tasks = [asyncio.create_task(follow()) for _ in range(a.streams)]
                await asyncio.wait_for(all_in.wait(), 120)
                join_s = time.perf_counter() - t0
                c1 = checkouts.copy()
                t0 = time.perf_counter()
                await agent.report(run["id"], start.items[0])
                ack_s = time.perf_counter() - t0
                t0 = time.perf_counter()
                r = await http.post(f"/api/v1/runs/{run['id']}/cancel")
                cancel_s = time.perf_counter() - t0
                await asyncio.wait_for(asyncio.gather(*tasks), 120)
                all_s = time.perf_counter() - t0
                c2 = checkouts.copy()
            await agent.close()
    out: dict[str, Any] = {
        "streams": a.streams,
        "HTTP statuses of the streams": dict(statuses),
        "streams that got `end`": ends,
        "connections checked out while the streams joined": dict(c1 - c0),
        "connections checked out from the report to the last `end`": dict(c2 - c1),
        "all joined in": f"{join_s:.2f} s",
        "report acknowledged in": f"{ack_s * 1000:.0f} ms",
        "cancel answered": f"{r.status_code} in {cancel_s * 1000:.0f} ms",
        "last stream ended after the cancel": f"{all_s:.2f} s",
    }
    for k, v in out.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    asyncio.run(main())
