"""Times GET /api/v1/compare on a filled database, over loopback against the real server.

    ../.venv/bin/python benchmarks/fill.py --data-dir /tmp/ctxbench-bench          # once
    ../.venv/bin/python benchmarks/compare_bench.py --data-dir /tmp/ctxbench-bench [--requests 200]

Starts `ctxbench-server` (ports 0, the filled data dir), asks for 10 machines x 50 kernel points
(5 swept kernels x threads=1..10), and prints a markdown table: the first request (cold: every
result's hierarchical bootstrap, every ratio and the noise history statement computed) and
p50/p95/p99 of the next N (results, ratios and noise spreads come from the server's caches: results
never change once stored), plus the SQL statements
one compare runs, counted in a separate in-process measurement with a SQLAlchemy event listener, and
one in-process compare with the caches cleared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from sqlalchemy import event

from ctxbench_server.compare import service
from ctxbench_server.db import create_engine, create_sessionmaker

BENCH_KERNELS = "syscall.getppid,ctxsw.pipe,ctxsw.futex,lock.pthread_mutex,storage.write"
TARGET_P95_MS = 50.0
ADMIN_TOKEN = "bench-admin-token-0123456789abcdef"  # given to the server, sent as authorization: Bearer


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * q
    f = int(k)
    c = min(f + 1, len(s) - 1)
    return s[f] + (s[c] - s[f]) * (k - f)


def start_server(data_dir: Path) -> tuple[subprocess.Popen[str], str]:
    exe = shutil.which("ctxbench-server") or str(Path(sys.executable).with_name("ctxbench-server"))
    env = {
        **os.environ,
        "CTXBENCH_DATA_DIR": str(data_dir),
        "CTXBENCH_HTTP_PORT": "0",
        "CTXBENCH_GRPC_PORT": "0",
        "CTXBENCH_AGENT_TOKEN": "bench-token-0123456789abcdef",
        "CTXBENCH_ADMIN_TOKEN": ADMIN_TOKEN,
        "CTXBENCH_LOG_LEVEL": "warning",
    }
    env.pop("CTXBENCH_DATABASE_URL", None)
    proc = subprocess.Popen([exe], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        m = re.search(r"http listening on (\S+)", line)
        if m:
            return proc, m.group(1)
    raise SystemExit(f"server exited ({proc.wait()}) before listening")


async def in_process(db: Path, machines: list[str]) -> tuple[int, int, float]:
    """SQL statements of one compare with cold and warm caches, and its time with cold caches."""
    engine = create_engine(f"sqlite+aiosqlite:///{db}")
    seen: list[str] = []
    event.listen(engine.sync_engine, "before_cursor_execute", lambda *a: seen.append(a[2]))
    q = service.CompareQuery(machines=machines, kernels=BENCH_KERNELS.split(","))
    try:
        async with create_sessionmaker(engine)() as session:
            await service.compare(session, q, set())  # scipy imported, connection open
            service.clear_caches()
            seen.clear()
            t = time.perf_counter()
            await service.compare(session, q, set())
            cold = (time.perf_counter() - t) * 1000
            n_cold = len(seen)
            seen.clear()
            await service.compare(session, q, set())
        return n_cold, len(seen), cold
    finally:
        await engine.dispose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--requests", type=int, default=200)
    a = ap.parse_args()
    info = json.loads((a.data_dir / "fill.json").read_text())
    machines: list[str] = info["machines"][:10]
    params = {"machines": ",".join(machines), "kernels": BENCH_KERNELS}

    proc, base = start_server(a.data_dir)
    try:
        auth = {"authorization": f"Bearer {ADMIN_TOKEN}"}
        with httpx.Client(base_url=base, headers=auth, timeout=60) as http:
            t = time.perf_counter()
            r = http.get("/api/v1/compare", params=params)
            first_ms = (time.perf_counter() - t) * 1000
            r.raise_for_status()
            body = r.json()
            cells = sum(len(row["cells"]) for row in body["rows"])
            times = []
            for _ in range(a.requests):
                t = time.perf_counter()
                r = http.get("/api/v1/compare", params=params)
                times.append((time.perf_counter() - t) * 1000)
                r.raise_for_status()
            size_kb = len(r.content) / 1024
    finally:
        proc.terminate()
        proc.wait(10)
    cold_statements, statements, uncached_ms = asyncio.run(in_process(a.data_dir / "ctxbench.db", machines))

    p50, p95, p99 = (percentile(times, q) for q in (0.5, 0.95, 0.99))
    print(f"\nCompare API: {len(machines)} machines x {len(body['rows'])} points ({cells} cells),"
          f" {info['results']:,} results in SQLite, {a.requests} requests over loopback\n")  # fmt: skip
    print("| measure | value |")
    print("|---|---|")
    print(f"| p50 | {p50:.1f} ms |")
    verdict = "met" if p95 <= TARGET_P95_MS else "MISSED"
    print(f"| p95 | {p95:.1f} ms (target ≤ {TARGET_P95_MS:.0f} ms: {verdict}) |")
    print(f"| p99 | {p99:.1f} ms |")
    print(f"| mean | {statistics.mean(times):.1f} ms |")
    print(f"| first request (cold ratio cache, over HTTP) | {first_ms:.0f} ms |")
    print(f"| one compare in-process, caches cleared | {uncached_ms:.0f} ms |")
    print(f"| SQL statements per compare (cold caches / warm) | {cold_statements} / {statements} |")
    print(f"| response size | {size_kb:.0f} KiB |")
    sys.exit(0 if p95 <= TARGET_P95_MS else 1)


if __name__ == "__main__":
    main()
