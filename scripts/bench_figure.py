"""make bench, section `figure`: which statistic of a short-sample result's repetitions is its figure
(issue 24; docs/architecture.md "Statistics", stats/figure.py).

A run is the default profile's shape measured by hand with the kernel executables: 7 launches x 2
repetitions x 0.04 s of 0.5 ms samples (each repetition's value the p5 of its block), the launches of all
points interleaved round-robin as the agent runs them. Per run and point, each candidate statistic of its
14 block values (median, p25, p10, p5, min); spread = (max - min) / median over the runs, the quantity
compare's noise floors and History's steps are made of. Runs on the host as it is, then beside a build
(one compiler loop per CPU, bench_aa.build_beside).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from bench_aa import build_beside
from bench_common import Out, measured
from bench_samples import SAMPLE_TIME, _name, _quantile, _run, _spread

POINTS: list[tuple[str, str, list[str]]] = [
    ("cpp", "call.function", []),
    ("cpp", "syscall.getppid", []),
    ("cpp", "ctxswitch.pipe", ["placement=same_core"]),
    ("cpp", "lock.pthread_mutex", ["threads=4"]),
    ("cpp", "thread.create_join", []),
    ("cpp", "ipc.pipe", []),
    ("cpp", "process.fork_wait", []),
    ("cpp", "sched.yield", []),
    ("cpp", "coroutine.switch", []),
    ("go", "channel.pingpong", []),
    ("go", "goroutine.create", []),
    ("py", "coroutine.py_generator", []),
]
LAUNCHES = 7
STATISTICS = {"median": 0.5, "p25": 0.25, "p10": 0.10, "p5": 0.05, "min": 0.0}


def _runs(runs: int) -> dict[tuple[str, str], list[float]]:
    """(point, statistic) -> the statistic of each run's block values."""
    out: dict[tuple[str, str], list[float]] = {}
    for _ in range(runs):
        blocks: dict[str, list[float]] = {}
        for _launch in range(LAUNCHES):
            for exe, kernel, params in POINTS:
                got = _run(
                    exe,
                    kernel,
                    params,
                    "--repetitions",
                    "2",
                    "--min-time",
                    "0.04",
                    "--sample-time",
                    SAMPLE_TIME,
                )
                blocks.setdefault(_name(kernel, params), []).extend(got["samples"])
        for name, values in blocks.items():
            for stat, q in STATISTICS.items():
                out.setdefault((name, stat), []).append(_quantile(values, q))
        time.sleep(1)
    return out


def _table(got: dict[tuple[str, str], list[float]]) -> list[str]:
    lines = [
        "| kernel point | " + " | ".join(f"{s}: median (spread)" for s in STATISTICS) + " |",
        "|---|" + "---:|" * len(STATISTICS),
    ]
    for _exe, kernel, params in POINTS:
        name = _name(kernel, params)
        cells = [
            f"{statistics.median(v):,.4g} ({100 * _spread(v):.1f} %)"
            for s in STATISTICS
            for v in [got[(name, s)]]
        ]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return lines


def figure(report: Out, runs: int = 8) -> int:
    load0 = Path("/proc/loadavg").read_text().split()[0]
    quiet = _runs(runs)
    with build_beside():
        time.sleep(5)
        load1 = Path("/proc/loadavg").read_text().split()[0]
        busy = _runs(runs)
    out = [
        measured(f"; load average {load0} on the host as it is, {load1} beside the build"),
        f"Command: `scripts/bench.py figure` (part of `make bench`): {runs} runs, each {LAUNCHES} launches "
        "x 2 repetitions x 0.04 s of 0.5 ms samples per point (the default profile's shape, points "
        "interleaved); per run each statistic of its 14 block values; spread = (max - min) / median of "
        "the runs. The figure is p5 (stats/figure.py).",
        "",
        "On the host as it is:",
        "",
        *_table(quiet),
        "",
        "Beside a build (one compiler loop per CPU):",
        "",
        *_table(busy),
    ]
    report.emit("fidelity.md", "figure", out)
    return 0
