"""Times GET /fleet-changes and /peers computed on read, in process, over a seeded SQLite fleet.

    cd server && ../.venv/bin/python benchmarks/fleet_changes_bench.py MACHINES POINTS RUNS [--repeats 5]
    e.g. ../.venv/bin/python benchmarks/fleet_changes_bench.py 100 10 20   # 1000 series, the read's bound

Seeds MACHINES machines x POINTS parameter points of syscall.getppid x RUNS runs, ten minutes apart
(one SQLite file under --db-dir, default a temporary directory, rebuilt each time); the first third of the
machines steps +18 % halfway, with their runs' kernel_release going from 6.1 to 6.8. Then calls the
services the endpoints call, in process: /fleet-changes once with History's step cache empty (the first
read: every series' step detection runs), then --repeats times more (the cache holds them: median and
best), and /peers --repeats times, printing the times and the SQL statements one read ran (a SQLAlchemy
event listener). --db-dir keeps the SQLite file (default: a temporary directory).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import event, insert

from ctxbench_server.db import create_engine, create_sessionmaker, migrate
from ctxbench_server.fleetchanges import peers, service
from ctxbench_server.history import service as history
from ctxbench_server.models import Kernel, LatestResult, Machine, Result, Run, RunItem

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def fleet(machines: int, points: int, runs: int) -> dict[Any, list[dict[str, Any]]]:
    """The rows to insert, by table."""
    rows: dict[Any, list[dict[str, Any]]] = {Run: [], RunItem: [], Result: [], LatestResult: []}
    for i in range(machines):
        for r in range(runs):
            rid, at = str(uuid.uuid4()), T0 + timedelta(minutes=10 * r, seconds=i)
            step = i < machines // 3 and r >= runs // 2
            facts = {"kernel_release": "6.8" if step else "6.1", "cpu_model": "X"}
            rows[Run].append(
                {"id": rid, "machine_id": f"m{i}", "batch_id": rid, "status": "succeeded", "spec": {}}
                | {"facts": facts, "created_at": at}
            )
            for p in range(points):
                iid, res = str(uuid.uuid4()), str(uuid.uuid4())
                params = {"threads": p}
                rows[RunItem].append(
                    {"id": iid, "run_id": rid, "index": p, "kernel_id": "syscall.getppid", "params": params}
                )
                key = {"machine_id": f"m{i}", "kernel_id": "syscall.getppid", "params_key": f"threads={p}"}
                median = 100.0 * (1.18 if step else 1.0) * (1 + 0.004 * ((r + p) % 3))
                rows[Result].append(
                    {"id": res, "run_id": rid, "item_id": iid, "status": "ok", "params": params}
                    | key
                    | {"unit": "ns/op", "median": median, "figure": median, "created_at": at}
                )
                if r == runs - 1:
                    rows[LatestResult].append(key | {"result_id": res, "created_at": at})
    return rows


async def main(machines: int, points: int, runs: int, repeats: int, db_dir: Path) -> None:
    path = db_dir / f"fleet-{machines}-{points}-{runs}.db"
    path.unlink(missing_ok=True)
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    await migrate(engine)
    sessions = create_sessionmaker(engine)
    rows = fleet(machines, points, runs)
    async with sessions() as s:
        await s.execute(insert(Kernel), [{"id": "syscall.getppid", "spec": {"family": "syscall"}}])
        await s.execute(
            insert(Machine),
            [
                {"id": f"m{i}", "name": f"m{i}", "hostname": f"m{i}"}
                | {"facts": {"cpu_model": "X", "logical_cpus": 4, "kernel_release": "6.1"}}
                for i in range(machines)
            ],
        )
        for table, got in rows.items():
            for k in range(0, len(got), 5000):
                await s.execute(insert(table), got[k : k + 5000])
        await s.commit()

    statements = 0

    def count(*_: Any) -> None:
        nonlocal statements
        statements += 1

    event.listen(engine.sync_engine, "before_cursor_execute", count)
    history.clear_cache()
    q = service.FleetQuery(
        T0 - timedelta(days=1), T0 + timedelta(days=30), timedelta(hours=24), [], 2, 50, None
    )
    size = f"{machines} machines x {points} points x {runs} runs ({len(rows[Result])} results)"
    times = []
    for _ in range(1 + repeats):
        statements, t = 0, time.perf_counter()
        async with sessions() as s:
            got = await service.fleet_changes(s, q)
        times.append(time.perf_counter() - t)
        if len(times) == 1:
            print(
                f"fleet-changes first read: {size}, {got.series} series: {times[0]:.2f} s, "
                f"{statements} statements, {len(got.fleet_changes)} changes"
            )
    print(
        f"fleet-changes repeat read: median {statistics.median(times[1:]):.2f} s, "
        f"best {min(times[1:]):.2f} s of {repeats}, {statements} statements"
    )
    times = []
    for _ in range(repeats):
        statements, t = 0, time.perf_counter()
        async with sessions() as s:
            out = await peers.outliers(s, None, [], 100)
        times.append(time.perf_counter() - t)
    print(
        f"peers: median {statistics.median(times):.2f} s, best {min(times):.2f} s of {repeats}, "
        f"{statements} statements, {out.points} points judged, {len(out.outliers)} flagged"
    )
    await engine.dispose()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("machines", type=int)
    ap.add_argument("points", type=int)
    ap.add_argument("runs", type=int)
    ap.add_argument("--repeats", type=int, default=5, help="repeat reads timed (median and best)")
    ap.add_argument(
        "--db-dir", type=Path, default=None, help="where the SQLite file goes (default: a temp dir)"
    )
    a = ap.parse_args()
    if a.db_dir is not None:
        a.db_dir.mkdir(parents=True, exist_ok=True)
        asyncio.run(main(a.machines, a.points, a.runs, a.repeats, a.db_dir))
    else:
        with tempfile.TemporaryDirectory(prefix="ctxbench-fleet-") as tmp:
            asyncio.run(main(a.machines, a.points, a.runs, a.repeats, Path(tmp)))
