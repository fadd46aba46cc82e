"""make bench, section `samples`: what short samples buy on a shared host (issue 24).

Per kernel point, `runs` runs a few seconds apart beside a build (one compiler loop per CPU, as
bench_aa.build_beside); a run is the default profile's shape measured by hand with the kernel
executables: 3 launches x 2 repetitions x 0.1 s, its figure the median of the 6 samples. Each run does it
twice, interleaved: long samples (one per repetition, the measure before issue 24) and short samples
(`--sample-time 0.0005`: each repetition a block of 0.5 ms samples, its value the block's 5th percentile).
Spread = (max - min) / median of the run figures: the quantity compare's noise floor is made of. A
second table gives, for one launch of 400 short samples per run, each estimator a block could use (min,
p1, p2, p5, p10, p25, p50), which is how p5 was chosen (docs/architecture.md "Statistics").
"""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from bench_aa import build_beside
from bench_common import Out, measured

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "build" / "kernels"
POINTS: list[tuple[str, str, list[str]]] = [
    ("cpp", "call.function", []),
    ("cpp", "syscall.getppid", []),
    ("cpp", "syscall.clock_gettime", []),
    ("cpp", "coroutine.switch", []),
    ("cpp", "ctxswitch.pipe", ["placement=same_core"]),
    ("cpp", "lock.pthread_mutex", []),
    ("cpp", "thread.create_join", []),
    ("cpp", "process.fork_wait", []),
    ("cpp", "ipc.pipe", []),
    ("go", "channel.pingpong", []),
    ("go", "lock.go_mutex", []),
    ("go", "goroutine.create", []),
    ("py", "call.py_loop", []),
    ("py", "coroutine.py_greenlet", []),
]
SAMPLE_TIME = "0.0005"
ESTIMATORS = {"min": 0.0, "p1": 0.01, "p2": 0.02, "p5": 0.05, "p10": 0.10, "p25": 0.25, "p50": 0.5}


def _run(exe: str, kernel: str, params: list[str], *extra: str) -> dict[str, Any]:
    args = [str(KERNELS / f"ctxbench-kernels-{exe}"), "--run", kernel, *extra]
    for p in params:
        args += ["--param", p]
    out = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"{kernel}: exit {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def _quantile(values: list[float], p: float) -> float:
    s = sorted(values)
    pos = p * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _spread(values: list[float]) -> float:
    return (max(values) - min(values)) / statistics.median(values)


def _name(kernel: str, params: list[str]) -> str:
    return kernel + (" " + " ".join(params) if params else "")


def samples(report: Out, runs: int = 6) -> int:
    figures: dict[tuple[str, str], list[float]] = {}
    estimators: dict[tuple[str, str], list[float]] = {}
    disturbed: dict[str, list[float]] = {}
    with build_beside():
        time.sleep(5)
        load0 = Path("/proc/loadavg").read_text().split()[0]
        for _ in range(runs):
            for exe, kernel, params in POINTS:
                name = _name(kernel, params)
                for mode in ("long", "short"):
                    values: list[float] = []
                    for _launch in range(3):
                        extra = ["--repetitions", "2", "--min-time", "0.1"]
                        if mode == "short":
                            extra += ["--sample-time", SAMPLE_TIME]
                        got = _run(exe, kernel, params, *extra)
                        values += got["samples"]
                        if mode == "short":
                            s = got["sampling"]
                            disturbed.setdefault(name, []).append(
                                sum(s["disturbed"]) / (len(got["samples"]) * s["samples_per_repetition"])
                            )
                    figures.setdefault((name, mode), []).append(statistics.median(values))
                # 400 short samples of one launch, one block each: every estimator a block could use
                one = _run(exe, kernel, params, "--repetitions", "400", "--min-time", SAMPLE_TIME)["samples"]
                for est, p in ESTIMATORS.items():
                    estimators.setdefault((name, est), []).append(_quantile(one, p))
            time.sleep(2)
    out = [
        measured(f"; beside a build (one compiler loop per CPU), load average {load0}"),
        f"Command: `scripts/bench.py samples` (part of `make bench`): {runs} runs per point, each 3 "
        "launches x 2 repetitions x 0.1 s (the default profile shape) with long samples and with short ones "
        f"(`--sample-time {SAMPLE_TIME}`, p5 per block), interleaved; spread = (max - min) / median of the "
        "run figures.",
        "",
        "| kernel point | long samples: median (spread) | short samples, p5 of blocks: median (spread) "
        "| short samples the host disturbed |",
        "|---|---:|---:|---:|",
    ]
    for _exe, kernel, params in POINTS:
        name = _name(kernel, params)
        cells = []
        for mode in ("long", "short"):
            v = figures[(name, mode)]
            cells.append(f"{statistics.median(v):,.4g} ({100 * _spread(v):.1f} %)")
        out.append(f"| `{name}` | {cells[0]} | {cells[1]} | {100 * statistics.mean(disturbed[name]):.0f} % |")
    out += [
        "",
        f"Estimators over one launch of 400 short samples ({SAMPLE_TIME} s), per run; median (spread) of "
        "the runs:",
        "",
        "| kernel point | " + " | ".join(ESTIMATORS) + " |",
        "|---|" + "---:|" * len(ESTIMATORS),
    ]
    for _exe, kernel, params in POINTS:
        name = _name(kernel, params)
        cells = []
        for est in ESTIMATORS:
            v = estimators[(name, est)]
            cells.append(f"{statistics.median(v):,.4g} ({100 * _spread(v):.1f} %)")
        out.append(f"| `{name}` | " + " | ".join(cells) + " |")
    report.emit("fidelity.md", "samples", out)
    return 0
