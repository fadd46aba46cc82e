"""Fills a ctxbench SQLite database with a realistic history for the compare benchmark.

    ../.venv/bin/python benchmarks/fill.py --data-dir /tmp/ctxbench-bench [--results 1000000]

10 machines with distinct facts, 12 kernels (5 swept over threads=1..10 plus 7 single points: 57 points
per machine), runs of one item per point, ~10 samples per result, created one second apart per run. The
schema comes from the server's own migrations; rows go in with sqlite3 executemany in large
transactions (the ORM would take many minutes for a million results). latest_results is filled as
the server would have kept it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from ctxbench_server.db import create_engine, migrate
from ctxbench_server.stats.summary import CI_ORDER_STATISTICS, median_ci_ranks

SWEPT = {  # kernel -> (family, unit, base value at 1 thread)
    "syscall.getppid": ("syscall", "ns/op", 55.0),
    "ctxsw.pipe": ("ctxsw", "ns/op", 2400.0),
    "ctxsw.futex": ("ctxsw", "ns/op", 1900.0),
    "lock.pthread_mutex": ("lock", "ns/op", 40.0),
    "storage.write": ("storage", "MB/s", 1800.0),
}
SINGLE = {
    "syscall.open_close": ("syscall", "ns/op", 900.0),
    "syscall.gettimeofday": ("syscall", "ns/op", 20.0),
    "timer.usleep0": ("timer", "ns/op", 55000.0),
    "process.fork_exit": ("process", "ns/op", 95000.0),
    "thread.create_join": ("thread", "ns/op", 14000.0),
    "ipc.unix_socket": ("ipc", "ns/op", 3100.0),
    "coroutine.switch": ("coroutine", "ns/op", 9.0),
}
THREADS = list(range(1, 11))
BENCH_KERNELS = list(SWEPT)  # 5 kernels x 10 points = 50 points per machine

CPUS = [
    ("Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz", 1.0, "kvm", "kvm-clock"),
    ("AMD EPYC 7763 64-Core Processor", 0.8, "none", "tsc"),
    ("Intel(R) Core(TM) i7-8700K CPU @ 3.70GHz", 0.9, "none", "tsc"),
    ("Intel(R) Pentium(R) CPU G2030 @ 3.00GHz", 1.4, "none", "tsc"),
    ("AMD Ryzen 9 5950X 16-Core Processor", 0.7, "none", "tsc"),
    ("Neoverse-N1", 1.1, "kvm", "arch_sys_counter"),
    ("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", 1.05, "kvm", "kvm-clock"),
    ("Intel(R) Celeron(R) N5105 @ 2.00GHz", 2.0, "none", "tsc"),
    ("AMD EPYC 9654 96-Core Processor", 0.75, "none", "tsc"),
    ("Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz", 1.3, "xen", "xen"),
]


def spec(kid: str, family: str, unit: str, swept: bool) -> dict[str, Any]:
    params = (
        [{"name": "threads", "type": "int", "default": 1, "min": 1, "max": 64, "sweep": THREADS, "help": ""}]
        if swept
        else []
    )
    return {
        "id": kid,
        "title": kid.split(".", 1)[1],
        "family": family,
        "unit": unit,
        "description": f"{kid} (benchmark filler)",
        "params": params,
        "seed_reference": {"seed": "000", "value": 1.0, "unit": unit, "machine": "Pentium G2030"},
        "executable": "ctxbench-kernels-cpp",
    }


def facts(i: int) -> dict[str, Any]:
    cpu, _, virt, clock = CPUS[i]
    return {
        "hostname": f"bench-{i:02d}",
        "os_release": "Debian GNU/Linux 12 (bookworm)" if i % 3 else "Ubuntu 24.04.1 LTS",
        "kernel_release": "6.1.0-26-amd64" if i % 2 else "6.8.0-45-generic",
        "kernel_cmdline": "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet"
        + (" mitigations=off" if i == 4 else ""),
        "cpu_model": cpu,
        "logical_cpus": [4, 8, 12, 2, 32, 16, 8, 4, 64, 28][i],
        "physical_cores": [2, 4, 6, 2, 16, 16, 4, 4, 32, 14][i],
        "smt_active": i not in (3, 5, 7),
        "caches": {
            "L1d": "32K",
            "L1i": "32K",
            "L2": ["1024K", "512K", "256K"][i % 3],
            "L3": f"{8 * (i + 1)}M",
        },
        "memory_bytes": (8 << 30) * (1 + i % 4),
        "governor": "performance" if i % 4 else "powersave",
        "boost": "on" if i % 5 else "off",
        "vulnerabilities": {
            "meltdown": "Not affected" if i % 2 else "Mitigation: PTI",
            "spectre_v2": "Mitigation: Retpolines" if i % 3 else "Mitigation: Enhanced IBRS",
            "mds": "Not affected",
        },
        "clocksource": clock,
        "virtualization": virt,
        "load_average": [0.05, 0.1, 0.2],
        "arch": "arm64" if i == 5 else "amd64",
        "extra": {"timer_slack_ns": "50000" if i != 7 else "1", "cpu_mhz": "2500.000", "thp": "madvise"},
    }


def ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.%f")


POINTS = [(k, {"threads": t}) for k in SWEPT for t in THREADS] + [(k, {}) for k in SINGLE]
KERNELS = {**{k: (*v, True) for k, v in SWEPT.items()}, **{k: (*v, False) for k, v in SINGLE.items()}}


def _create_schema(db: Path) -> None:
    async def schema() -> None:
        engine = create_engine(f"sqlite+aiosqlite:///{db}")
        await migrate(engine)
        await engine.dispose()

    asyncio.run(schema())


def _insert_catalog(
    con: sqlite3.Connection, rng: np.random.Generator, n_machines: int, now: str
) -> list[str]:
    """The kernels, the machines and which machine has which kernel; the machines' ids."""
    con.execute("BEGIN")
    con.executemany(
        "INSERT INTO kernels (id, spec, updated_at) VALUES (?, ?, ?)",
        [(k, json.dumps(spec(k, f, u, s)), now) for k, (f, u, _, s) in KERNELS.items()],
    )
    machine_ids = [str(uuid.UUID(int=rng.integers(0, 2**63).item())) for _ in range(n_machines)]
    con.executemany(
        "INSERT INTO machines (id, name, hostname, agent_version, first_seen, last_seen, facts)"
        " VALUES (?, ?, ?, 'bench', ?, ?, ?)",
        [
            (m, f"bench-{i:02d}", f"bench-{i:02d}", now, now, json.dumps(facts(i)))
            for i, m in enumerate(machine_ids)
        ],
    )
    con.executemany(
        "INSERT INTO machine_kernels (machine_id, kernel_id, spec) VALUES (?, ?, ?)",
        [(m, k, json.dumps(spec(k, f, u, s))) for m in machine_ids for k, (f, u, _, s) in KERNELS.items()],
    )
    con.execute("COMMIT")
    return machine_ids


class _Rows:
    """One machine's rows for the runs, run_items and results tables, and its latest result per point."""

    def __init__(self) -> None:
        self.runs: list[tuple] = []
        self.items: list[tuple] = []
        self.results: list[tuple] = []
        self.latest: dict[tuple[str, str, str], tuple[str, str]] = {}


def _machine_rows(
    mi: int, m: str, runs_per_machine: int, n_samples: int, rng: np.random.Generator, t0: datetime
) -> _Rows:
    """One machine's runs: every point once per run, samples drawn at once (runs, points, n)."""
    per_run = len(POINTS)
    ranks = median_ci_ranks(n_samples)
    speed = CPUS[mi % len(CPUS)][1]
    base = np.array([KERNELS[k][2] * (1 + 0.15 * (p.get("threads", 1) - 1)) for k, p in POINTS])
    base = np.where([KERNELS[k][1] == "MB/s" for k, _ in POINTS], base / speed, base * speed)
    drift = 1 + 0.02 * rng.standard_normal((runs_per_machine, per_run, 1))
    samples = (
        base[None, :, None] * drift * (1 + 0.01 * rng.standard_normal((runs_per_machine, per_run, n_samples)))
    )
    srt = np.sort(samples, axis=2)
    med = np.median(srt, axis=2)
    mean = srt.mean(axis=2)
    std = srt.std(axis=2, ddof=1)
    lo = srt[:, :, ranks[0] - 1] if ranks else srt[:, :, 0]
    hi = srt[:, :, ranks[1] - 1] if ranks else srt[:, :, -1]
    fact_json = json.dumps(facts(mi))
    rows = _Rows()
    for r in range(runs_per_machine):
        run_id = str(uuid.uuid4())
        created = t0 + timedelta(hours=r, seconds=mi)
        rows.runs.append(
            (run_id, m, run_id, "succeeded", "default", "{}", fact_json, 5, ts(created), ts(created))
        )
        for pi, (k, params) in enumerate(POINTS):
            item_id, res_id = str(uuid.uuid4()), str(uuid.uuid4())
            pkey = "&".join(f"{a}={b}" for a, b in sorted(params.items()))
            pjson = json.dumps(params)
            rows.items.append((item_id, run_id, pi, k, pjson, "succeeded", res_id, 60.0))
            at = ts(created + timedelta(seconds=pi + 1))
            s = srt[r, pi]
            rows.results.append(
                (
                    res_id, run_id, item_id, m, k, "ok", pjson, pkey, KERNELS[k][1],
                    json.dumps(samples[r, pi].round(3).tolist()), "[]", "{}", "{}", n_samples,
                    float(med[r, pi]), float(med[r, pi]), float(mean[r, pi]), float(std[r, pi]),
                    float(std[r, pi] / mean[r, pi]), float(s[0]), float(s[-1]),
                    float(lo[r, pi]), float(hi[r, pi]), CI_ORDER_STATISTICS, 0, at,
                )
            )  # fmt: skip
            rows.latest[(m, k, pkey)] = (res_id, at)
    return rows


def _insert_machine(con: sqlite3.Connection, rows: _Rows) -> None:
    con.execute("BEGIN")
    con.executemany(
        "INSERT INTO runs (id, machine_id, batch_id, status, profile, spec, facts, repetitions,"
        " created_at, queued_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows.runs,
    )
    con.executemany(
        'INSERT INTO run_items (id, run_id, "index", kernel_id, params, state, result_id, timeout_s)'
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        rows.items,
    )
    con.executemany(
        "INSERT INTO results (id, run_id, item_id, machine_id, kernel_id, status, params, params_key,"
        " unit, samples, iterations, counters, harness, n, median, figure, mean, stddev, cv, min, max,"
        " ci_low, ci_high, ci_method, exit_code, created_at) VALUES"
        " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows.results,
    )
    con.execute("COMMIT")


def fill(data_dir: Path, total: int, n_machines: int, n_samples: int, seed: int) -> dict[str, Any]:
    data_dir.mkdir(parents=True, exist_ok=True)
    db = data_dir / "ctxbench.db"
    if db.exists():
        sys.exit(f"{db} exists: give an empty --data-dir")
    t_start = time.perf_counter()
    _create_schema(db)
    runs_per_machine = max(1, round(total / (n_machines * len(POINTS))))
    rng = np.random.default_rng(seed)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA synchronous=OFF")
    con.execute("PRAGMA foreign_keys=OFF")  # every id below is consistent by construction
    con.execute("PRAGMA cache_size=-262144")
    machine_ids = _insert_catalog(con, rng, n_machines, ts(datetime.now(UTC)))
    latest: dict[tuple[str, str, str], tuple[str, str]] = {}
    n_results = 0
    for mi, m in enumerate(machine_ids):
        rows = _machine_rows(mi, m, runs_per_machine, n_samples, rng, t0)
        _insert_machine(con, rows)
        latest.update(rows.latest)
        n_results += len(rows.results)
        print(f"machine {mi + 1}/{n_machines}: {n_results} results, {time.perf_counter() - t_start:.0f} s")
    con.execute("BEGIN")
    con.executemany(
        "INSERT INTO latest_results (machine_id, kernel_id, params_key, result_id, created_at)"
        " VALUES (?, ?, ?, ?, ?)",
        [(m, k, p, rid, at) for (m, k, p), (rid, at) in latest.items()],
    )
    con.execute("COMMIT")
    con.execute("ANALYZE")
    con.close()
    return {
        "db": str(db),
        "machines": machine_ids,
        "results": n_results,
        "points_per_machine": len(POINTS),
        "seconds": time.perf_counter() - t_start,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--results", type=int, default=1_000_000)
    ap.add_argument("--machines", type=int, default=10)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.machines > len(CPUS):
        sys.exit(f"at most {len(CPUS)} machines")
    out = fill(a.data_dir, a.results, a.machines, a.samples, a.seed)
    (a.data_dir / "fill.json").write_text(json.dumps(out, indent=1))
    print(f"filled {out['db']}: {out['results']} results in {out['seconds']:.0f} s")


if __name__ == "__main__":
    main()
