"""Measures the default noise floors of the significance rule (compare/significance.py, DEFAULT_NOISE).

    ../.venv/bin/python benchmarks/noise_floor.py [--processes 6] [--repetitions 2] [--min-time 0.1]

For one default kernel point per family, runs the kernel in `--processes` independent processes,
interleaved round-robin over the families as the agent interleaves launches (so each kernel's processes
span the whole measurement), with the default profile's share of repetitions and min time per process.
Prints, per family, the relative range of the per-process medians ((max - min) / median: the largest
difference between two independent measurements of the same point) and the CV of those medians, as a
markdown table. Run from server/ after `make build` (the kernels in build/kernels).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from pathlib import Path

KERNELS = Path(__file__).resolve().parents[2] / "build" / "kernels"
# One default point per family: (executable, kernel id, extra params).
POINTS = [
    ("cpp", "call.function", []),
    ("cpp", "syscall.getppid", []),
    ("cpp", "jmp.setjmp_longjmp", []),
    ("cpp", "ucontext.swapcontext", []),
    ("cpp", "ctxswitch.pipe", []),
    ("cpp", "process.fork_wait", []),
    ("cpp", "thread.create_join", []),
    ("cpp", "sched.yield", []),
    ("cpp", "sleep.usleep0", []),
    ("cpp", "lock.pthread_mutex", []),
    ("cpp", "coroutine.switch", []),
    ("cpp", "storage.write", []),
    ("cpp", "ipc.pipe", []),
    ("go", "go.goroutine_create", []),
    ("go", "go.chan_pingpong", []),
    ("py", "py.loop", []),
]


def family(kernel: str) -> str:
    return kernel.split(".")[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=6)
    ap.add_argument("--repetitions", type=int, default=2)
    ap.add_argument("--min-time", type=float, default=0.1)
    a = ap.parse_args()
    medians: dict[str, list[float]] = {k: [] for _, k, _ in POINTS}
    skipped: dict[str, str] = {}
    for _ in range(a.processes):
        for exe, kernel, extra in POINTS:
            if kernel in skipped:
                continue
            cmd = [str(KERNELS / f"ctxbench-kernels-{exe}"), "--run", kernel, *extra]
            cmd += ["--repetitions", str(a.repetitions), "--min-time", str(a.min_time)]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                skipped[kernel] = (
                    p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
                )
                continue
            medians[kernel].append(statistics.median(json.loads(p.stdout)["samples"]))
    print(
        f"\n{a.processes} processes per point, {a.repetitions} repetitions x {a.min_time} s each,"
        " interleaved\n"
    )
    print("| family | kernel | median of medians | range / median | CV of medians |")
    print("|---|---|---|---|---|")
    for _, kernel, _ in POINTS:
        m = medians[kernel]
        if kernel in skipped or len(m) < 2:
            print(f"| {family(kernel)} | {kernel} | skipped: {skipped.get(kernel, 'no result')} | | |")
            continue
        mid = statistics.median(m)
        cv = statistics.stdev(m) / statistics.mean(m)
        print(f"| {family(kernel)} | {kernel} | {mid:.4g} | {(max(m) - min(m)) / mid:.1%} | {cv:.1%} |")


if __name__ == "__main__":
    main()
