"""`make bench` sections fidelity and storage: kernels beside an independent anchor (perf bench, fio),
interleaved in the same run on the same machine (docs/fidelity.md). Called by scripts/bench.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from bench_common import Out, measured

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "build" / "kernels"


@dataclass
class Pair:
    """One kernel configuration and the independent tool it is checked against."""

    kernel: str
    params: dict[str, str]
    anchor_name: str
    anchor: Callable[[], float]  # returns ns in the kernel's unit
    note: str


def kernel_samples(
    exe: str, kernel: str, params: dict[str, str], min_time: float, reps: int, sample_time: float = 0
) -> list[float]:
    """A launch's samples: with `sample_time`, one value per repetition, the p5 of its block of short
    samples (kernels/contract/README.md "Short samples"); without, one long sample per repetition."""
    argv = [str(KERNELS / exe), "--run", kernel, "--repetitions", str(reps), "--min-time", str(min_time)]
    if sample_time:
        argv += ["--sample-time", str(sample_time)]
    for k, v in params.items():
        argv += ["--param", f"{k}={v}"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["samples"]


def kernel_median(
    exe: str, kernel: str, params: dict[str, str], min_time: float, reps: int, sample_time: float = 0
) -> float:
    return statistics.median(kernel_samples(exe, kernel, params, min_time, reps, sample_time))


# The short-sample discipline on both sides (issue 24): the kernel's blocks of 0.5 ms samples (the
# profiles' SAMPLE_TIME_S), and the anchor in many short runs, each under a scheduler slice where the
# tool allows, their 5th percentile: so a build beside disturbs neither figure.
SAMPLE_TIME_S = 0.0005
ANCHOR_RUNS = 40
PIPE_LOOPS = (1000, 3000)  # round trips of the two `perf bench sched pipe` runs compared (perf_loop_p5)


def p5(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[0]


# CPU-bound kernels: no sleeping, no other process; their spread is the harness's and the machine's.
CPU_BOUND = [
    "call.function",
    "call.indirect",
    "syscall.getppid",
    "syscall.clock_gettime",
    "jmp.setjmp_longjmp",
]


_USECS_OP = re.compile(r"([\d.]+)\s+usecs/op")


def perf_bench(args: list[str], pin: str | None = None) -> float:
    """usecs/op printed by `perf bench`, in ns."""
    argv = ["perf", "bench", *args]
    if pin is not None:
        argv = ["taskset", "-c", pin, *argv]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    m = _USECS_OP.search(out)
    if not m:
        raise RuntimeError(f"no usecs/op in output of {' '.join(argv)}:\n{out}")
    return float(m.group(1)) * 1000


def perf_p5(args: list[str], pin: str | None = None) -> float:
    """The 5th percentile of ANCHOR_RUNS short `perf bench` runs, in ns per op."""
    return p5([perf_bench(args, pin) for _ in range(ANCHOR_RUNS)])


def perf_loop_p5(args: list[str], loops: tuple[int, int], pin: str | None = None) -> float:
    """ns per loop of `perf bench ... -l N` by difference: the p5 of ANCHOR_RUNS runs' whole time at
    each of two loop counts (interleaved), and the per-loop cost the slope between them. A run's fixed
    cost (`sched pipe` forks its second process and waits for it inside its timed span: about 1 ms here,
    9 % of a 2000-loop run) is in both totals and cancels; a figure from one count carries it."""
    few, many = loops
    totals: dict[int, list[float]] = {few: [], many: []}
    for _ in range(ANCHOR_RUNS):
        for n in loops:
            totals[n].append(perf_bench([*args, "-l", str(n)], pin) * n)
    return (p5(totals[many]) - p5(totals[few])) / (many - few)


def fidelity_pairs() -> list[Pair]:
    return [
        Pair(
            "syscall.getppid",
            {},
            f"perf bench syscall basic -l 2000, p5 of {ANCHOR_RUNS}",
            lambda: perf_p5(["syscall", "basic", "-l", "2000"]),
            "both time a loop of getppid(); perf uses glibc's wrapper, the kernel the raw syscall(); 2000 "
            "calls are ~0.4 ms, under a slice",
        ),
        Pair(
            "ctxswitch.pipe",
            {"placement": "same_core"},
            f"taskset -c 0 perf bench sched pipe, -l 1000 and 3000 by difference (÷2), p5 of {ANCHOR_RUNS}",
            lambda: perf_loop_p5(["sched", "pipe"], PIPE_LOOPS, pin="0") / 2,
            "perf reports a round trip (two switches); halved here to match ns per switch. perf times its "
            "fork and wait with the loop (~1 ms a run): the slope between two loop counts leaves it out",
        ),
        Pair(
            "ctxswitch.pipe",
            {"placement": "unpinned"},
            f"perf bench sched pipe -l 2000 (÷2), p5 of {ANCHOR_RUNS}",
            lambda: perf_p5(["sched", "pipe", "-l", "2000"]) / 2,
            "unpinned: the scheduler may place the two processes on one core or two, run by run, so two "
            "loop counts may not meet the same placement and the slope is not used; perf's ~1 ms of fork "
            "and wait stays in this anchor (about 9 %)",
        ),
    ]


@dataclass
class StoragePair:
    kernel: str  # storage.write | storage.read
    params: dict[str, str]  # pattern, block_size, target, cache[, state]
    note: str

    def fio_argv(self, directory: str) -> list[str]:
        p = self.params
        write = self.kernel == "storage.write"
        rw = {("seq", True): "write", ("rand", True): "randwrite", ("seq", False): "read"}.get(
            (p["pattern"], write), "randread"
        )
        argv = ["fio", "--name=ctxbench-storage", f"--directory={directory}", "--filename=ctxbench-fio.dat"]
        argv += ["--size=16M", f"--bs={p['block_size']}", f"--rw={rw}"]
        argv += [f"--ioengine={'sync' if p['pattern'] == 'seq' else 'psync'}"]
        argv += [f"--direct={1 if p['cache'] == 'direct' else 0}", "--iodepth=1", "--numjobs=1"]
        # gtod_reduce: no per-I/O clock reads for latency statistics, which on cached paths cost about as
        # much as the 4 KiB copy itself; the kernel times whole passes, so both then time the call alone.
        argv += ["--time_based", "--runtime=2", "--gtod_reduce=1", "--output-format=json"]
        if not write and p.get("state") == "warm" and p["cache"] == "buffered":
            argv += ["--invalidate=0", "--pre_read=1"]
        return argv


def fio_mb_s(pair: StoragePair, directory: str) -> float:
    out = subprocess.run(pair.fio_argv(directory), capture_output=True, text=True, check=True).stdout
    job = json.loads(out[out.index("{") :])["jobs"][0]
    return job["write" if pair.kernel == "storage.write" else "read"]["bw_bytes"] / 1e6


# One row a pair: the kernel, its point (pattern block_size target cache, in that order), what it adds
# (a read's page-cache state), and what the comparison shows.
STORAGE_POINT = ("pattern", "block_size", "target", "cache")
STORAGE_PAIRS = [
    StoragePair(kernel, dict(zip(STORAGE_POINT, point.split(), strict=True)) | extra, note)
    for kernel, point, extra, note in (
        ("storage.write", "seq 4096 memory buffered", {}, "tmpfs: both copy into the page cache"),
        ("storage.write", "seq 8 memory buffered", {}, "8 B writes: per-call cost dominates"),
        ("storage.write", "rand 512 memory buffered", {}, "pwrite at shuffled offsets vs fio randwrite"),
        ("storage.write", "seq 4096 disk direct", {}, "O_DIRECT: the device's own speed"),
        ("storage.read", "seq 4096 disk buffered", {"state": "warm"}, "warm page cache"),
        ("storage.read", "rand 4096 disk direct", {}, "O_DIRECT random reads"),
    )
]


def interleaved(
    rounds: int, ours: Callable[[], float], theirs: Callable[[], float], within: float = 10
) -> tuple[float, float, str]:
    """Medians of `rounds` interleaved rounds of each side (drift on a busy machine hits both alike), and
    the table's difference and verdict cells (within ±`within` %)."""
    o_rounds, t_rounds = [], []
    for _ in range(rounds):
        o_rounds.append(ours())
        t_rounds.append(theirs())
    o, t = statistics.median(o_rounds), statistics.median(t_rounds)
    diff = (o - t) / t * 100
    return o, t, f"{diff:+.1f} % | {'yes' if abs(diff) <= within else 'NO'}"


def cv_percent(samples: list[float]) -> float:
    """The CV a stored result would show: the server's statistics (stats/summary.py), not a copy of them."""
    from ctxbench_server.stats.summary import compute

    cv = compute(samples).cv
    if cv is None:
        raise ValueError("samples with a zero mean have no CV")
    return cv * 100


def missing(tool: str, package: str) -> bool:
    """Whether the anchor tool is absent (then says which Debian package brings it)."""
    if shutil.which(tool):
        return False
    print(f"bench: `{tool}` is missing (Debian package {package}); run `make deps-bench`", file=sys.stderr)
    return True


def storage(rounds: int, report: Out) -> int:
    if missing("fio", "fio"):
        return 1
    disk_dir = str(ROOT / "build" / "bench-storage")
    os.makedirs(disk_dir, exist_ok=True)
    rows = []
    try:
        for pair in STORAGE_PAIRS:
            directory = "/dev/shm" if pair.params["target"] == "memory" else disk_dir
            params = dict(pair.params) | ({"dir": disk_dir} if pair.params["target"] == "disk" else {})
            o, t, verdict = interleaved(
                rounds,
                partial(kernel_median, "ctxbench-kernels-cpp", pair.kernel, params, 0.2, 5),
                partial(fio_mb_s, pair, directory),
            )
            shown = ",".join(f"{k}={v}" for k, v in pair.params.items())
            rows.append(f"| `{pair.kernel}` | {shown} | {o:,.1f} | {t:,.1f} | {verdict} | {pair.note} |")
            print(rows[-1], flush=True)
    finally:
        shutil.rmtree(disk_dir, ignore_errors=True)
        for leftover in ("/dev/shm/ctxbench-fio.dat",):
            if os.path.exists(leftover):
                os.remove(leftover)
    report.emit(
        "fidelity.md",
        "storage",
        [
            measured("; disk = the filesystem under `build/`"),
            f"Command: `make bench` (`scripts/bench.py storage --rounds {rounds}`); medians of {rounds} "
            "interleaved rounds; fio 16 MiB file, iodepth 1, one job, 2 s per round, the same pattern, "
            "block size and cache mode (`sync`/`psync` engines, `--direct`, `--gtod_reduce=1`).",
            "",
            "| kernel | params | ctxbench MB/s | fio MB/s | difference | within ±10 % | note |",
            "|---|---|---:|---:|---:|:-:|---|",
            *rows,
        ],
    )
    return 0


def fidelity(rounds: int, report: Out) -> int:
    """Beside a build (one compiler loop per CPU, as users' shared hosts are), short samples on both
    sides; target within ±5 % (issue 24)."""
    from bench_aa import build_beside

    if missing("perf", "linux-perf"):
        return 1
    rows = []
    cv_rows = []
    with build_beside():
        load = os.getloadavg()[0]
        for pair in fidelity_pairs():
            o, t, verdict = interleaved(
                rounds,
                partial(
                    kernel_median, "ctxbench-kernels-cpp", pair.kernel, pair.params, 0.1, 2, SAMPLE_TIME_S
                ),
                pair.anchor,
                within=5,
            )
            params = ",".join(f"{k}={v}" for k, v in pair.params.items()) or "-"
            anchor = f"{pair.anchor_name} | {t:,.1f}"
            rows.append(f"| `{pair.kernel}` | {params} | {o:,.1f} | {anchor} | {verdict} | {pair.note} |")
            print(rows[-1], flush=True)
        for kernel in CPU_BOUND:
            samples = kernel_samples("ctxbench-kernels-cpp", kernel, {}, 0.1, 10, SAMPLE_TIME_S)
            cv = cv_percent(samples)
            verdict = "yes" if cv <= 3 else "NO"
            cv_rows.append(f"| `{kernel}` | {statistics.median(samples):,.2f} | {cv:.2f} % | {verdict} |")
            print(cv_rows[-1], flush=True)
    report.emit(
        "fidelity.md",
        "fidelity",
        [
            measured(f"; beside a build (one compiler loop per CPU), load average {load:.2f}"),
            f"Command: `make bench` (`scripts/bench.py fidelity --rounds {rounds}`); medians of {rounds} "
            "interleaved rounds; a kernel round is one launch of 2 blocks of 0.5 ms samples (the median of "
            f"the blocks' p5), an anchor round the p5 of {ANCHOR_RUNS} short perf runs.",
            "",
            "| kernel | params | ctxbench ns/op | anchor | anchor ns/op | difference | within ±5 % | note |",
            "|---|---|---:|---|---:|---:|:-:|---|",
            *rows,
            "",
            "CPU-bound kernels, defaults but 10 blocks of 0.1 s of short samples, beside the build (target "
            "CV of the blocks ≤ 3 %):",
            "",
            "| kernel | median ns/op | CV | ≤ 3 % |",
            "|---|---:|---:|:-:|",
            *cv_rows,
        ],
    )
    return 0
