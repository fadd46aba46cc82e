"""make bench, section `launches`: what a launch costs and how often launches are marked disturbed.

- per-launch overhead: a kernel run directly with 2 and with 4 repetitions; overhead = 2*wall(2) - wall(4)
  (process start, harness calibration and warm-up: what a launch adds beyond its timed repetitions);
- disturbance: the same small run through a real agent on the host as it is, then with one CPU hog
  (`sh -c 'while :; do :; done'`) per CPU beside it: the share of launches marked disturbed, re-measured,
  and the results still noisy.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_common import Out, measured

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_orchestration import local_stack  # noqa: E402

from tests.e2e.stack import KERNELS_DIR, wait_until  # noqa: E402

OVERHEAD_KERNELS = [
    ("cpp", "call.function"),
    ("cpp", "syscall.getppid"),
    ("cpp", "ctxswitch.pipe"),
    ("go", "channel.pingpong"),
    ("py", "call.py_loop"),
]
RUN_ITEMS = [
    {"kernel": "call.function"},
    {"kernel": "syscall.getppid"},
    {"kernel": "jmp.setjmp_longjmp"},
    {"kernel": "ctxswitch.pipe"},
    {"kernel": "channel.pingpong"},
    {"kernel": "thread.create_join"},
]


def _wall(family: str, kernel: str, reps: int, min_time: float) -> float:
    exe = KERNELS_DIR / f"ctxbench-kernels-{family}"
    args = [str(exe), "--run", kernel, "--repetitions", str(reps), "--min-time", str(min_time)]
    t0 = time.monotonic()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t0


def _overhead(rounds: int) -> list[str]:
    rows = []
    for family, kernel in OVERHEAD_KERNELS:
        cells = []
        for mt in (0.05, 0.1, 0.2):
            over, per_rep = [], []
            for _ in range(rounds):
                w2, w4 = _wall(family, kernel, 2, mt), _wall(family, kernel, 4, mt)
                over.append(2 * w2 - w4)
                per_rep.append((w4 - w2) / 2)
            cells.append(f"{statistics.median(over):.2f} s ({statistics.median(per_rep):.2f} s/rep)")
        rows.append(f"| `{kernel}` | " + " | ".join(cells) + " |")
    return rows


def _disturbance(server, machine: dict, label: str) -> str:  # type: ignore[no-untyped-def]
    load = Path("/proc/loadavg").read_text().split()[0]
    body = {"machine_id": machine["id"], "items": RUN_ITEMS, "profile": "default"}
    r = server.http.post("/runs", json=body)
    r.raise_for_status()
    run_id = r.json()["id"]
    wait_until(
        "the run to finish",
        lambda: server.http.get(f"/runs/{run_id}").json()["status"] in ("succeeded", "failed"),
        900,
        interval=0.5,
    )
    res = server.http.get(f"/runs/{run_id}/results").json()
    launches = [lr for x in res for lr in x.get("launches") or []]
    planned = sum(1 for lr in launches if not lr["remeasured"])
    disturbed = sum(1 for lr in launches if lr["disturbed"] and not lr["remeasured"])
    remeasured = sum(1 for lr in launches if lr["remeasured"])
    noisy = sum(1 for x in res if x.get("noisy"))
    busy = statistics.median(lr["other_busy_frac"] or 0 for lr in launches) if launches else 0.0
    return (
        f"| {label} | {load} | {disturbed} of {planned} ({100 * disturbed / max(1, planned):.0f} %) | "
        f"{remeasured} | {noisy} of {len(res)} | {100 * busy:.1f} % |"
    )


def launches(
    rounds: int,
    report: Out,
) -> int:
    overhead = _overhead(max(1, rounds // 2))
    rows = []
    with local_stack("launches") as (server, _agent, machine):
        rows.append(_disturbance(server, machine, "host as it is"))
        hogs = [
            subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)
            for _ in range(os.cpu_count() or 1)
        ]
        try:
            time.sleep(0.5)
            rows.append(_disturbance(server, machine, f"{len(hogs)} CPU hogs beside it"))
        finally:
            for h in hogs:
                h.kill()
                h.wait()
    items = ", ".join(f"`{i['kernel']}`" for i in RUN_ITEMS)
    report.emit(
        "performance.md",
        "launches",
        [
            measured(),
            "Command: `scripts/bench.py launches` (part of `make bench`).",
            "",
            "Per-launch overhead (process start, harness calibration and warm-up: "
            f"2*wall(2 reps) - wall(4 reps), median of {max(1, rounds // 2)}), and the cost of one more "
            "repetition, by `--min-time`:",
            "",
            "| kernel | min time 0.05 s | 0.1 s | 0.2 s |",
            "|---|---:|---:|---:|",
            *overhead,
            "",
            f"Disturbance: one run of {items}, default profile (3 launches per item), through one agent:",
            "",
            "| host | load (1 min) | planned launches disturbed | re-measured | results noisy | "
            "median other busy |",
            "|---|---:|---:|---:|---:|---:|",
            *rows,
        ],
    )
    return 0
