"""Time and size of the run list with many items in the database (issue 12: 100 machines x 1000 items).

    cd server && ../.venv/bin/python benchmarks/runs_list_bench.py [--machines 100] [--items 1000]

Starts the real server (a fresh SQLite file, or CTXBENCH_TEST_DATABASE_URL), fills one finished run per
machine with bulk INSERTs, then times GET /api/v1/runs?limit=200 over loopback, in its default form
(items embedded) and in its light form (items=false), `--requests` times each; prints the median.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.conftest import ADMIN, running_server, test_settings
from tests.runs_helpers import fill_runs


async def measure(client: httpx.AsyncClient, url: str, requests: int) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(requests):
        t0 = time.perf_counter()
        r = await client.get(url)
        times.append(time.perf_counter() - t0)
        assert r.status_code == 200, r.text
        size = len(r.content)
    return statistics.median(times), size


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--machines", type=int, default=100)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--requests", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        async with running_server(test_settings(Path(tmp))) as srv:
            t0 = time.perf_counter()
            await fill_runs(srv.sessionmaker, a.machines, a.items)
            print(f"filled {a.machines} runs x {a.items} items in {time.perf_counter() - t0:.1f} s")
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{srv.http_port}", headers=ADMIN, timeout=120
            ) as client:
                for form in ("limit=200", "limit=200&items=false"):
                    t, size = await measure(client, f"/api/v1/runs?{form}", a.requests)
                    print(f"GET /api/v1/runs?{form}: median {t * 1000:.0f} ms, {size / 1024:.0f} KiB")


if __name__ == "__main__":
    asyncio.run(main())
