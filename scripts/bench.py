#!/usr/bin/env python3
"""`make bench`: measurements that are not tests.

fidelity       each kernel that has an independent anchor runs beside that anchor, interleaved, in the
               same run on the same machine; the table goes to docs/fidelity.md with date and machine.
storage        storage.write/read beside fio doing the same pattern, block size and cache mode
               (docs/fidelity.md, section storage).
launches       what a kernel launch costs beyond its repetitions, and how often launches are marked
               disturbed on the host as it is and beside CPU hogs (docs/performance.md).
suite          every kernel with its default sweep through one agent: the wall time (docs/performance.md).
aa             three agents on this host: an A/A pair (host as it is, and beside a build) and one under
               a 50 % CPU quota; how many rows compare flags significant (scripts/bench_aa.py,
               docs/fidelity.md).
noise          one agent runs the A/A points 6 times: each point's run-to-run spread, the source of compare's
               per-kernel default noise floors (scripts/bench_aa.py, docs/performance.md).
compare        GET /compare for 10 machines x 50 kernel points on a SQLite database of 1 million results
               (server/benchmarks/fill.py, kept in build/bench-compare between runs), p50/p95/p99 over
               loopback against the real server (server/benchmarks/compare_bench.py; docs/performance.md).
significance   compare's significance rule on seeded synthetic data: simulated A/A false positives and power
               for a true 20 % difference, and what a 200-row comparison's statistics cost
               (server/benchmarks/significance.py; docs/performance.md).
load           simulated agents speaking the real protocol against the real server: 200 connecting at
               once, 1000 idle streams (RSS, CPU), ingest (results/s, ack p50/p99), a batch to 100
               machines (server/benchmarks/load.py; docs/performance.md).
orchestration  the real server and agent: trigger latency (POST → the agent starts the kernel), result
               latency (kernel ends → the result arrives on the events stream), an idle agent's CPU and
               RSS over 60 s, and a kernel through the agent vs the same kernel run by hand; the table
               goes to docs/performance.md.

Run: .venv/bin/python scripts/bench.py [fidelity] [orchestration] [--rounds N] [--no-write]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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


def kernel_samples(exe: str, kernel: str, params: dict[str, str], min_time: float, reps: int) -> list[float]:
    argv = [str(KERNELS / exe), "--run", kernel, "--repetitions", str(reps), "--min-time", str(min_time)]
    for k, v in params.items():
        argv += ["--param", f"{k}={v}"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["samples"]


def kernel_median(exe: str, kernel: str, params: dict[str, str], min_time: float, reps: int) -> float:
    return statistics.median(kernel_samples(exe, kernel, params, min_time, reps))


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


def fidelity_pairs() -> list[Pair]:
    return [
        Pair(
            "syscall.getppid",
            {},
            "perf bench syscall basic",
            lambda: perf_bench(["syscall", "basic", "-l", "5000000"]),
            "both time a loop of getppid(); perf uses glibc's wrapper, the kernel the raw syscall()",
        ),
        Pair(
            "ctxswitch.pipe",
            {"placement": "same_core"},
            "taskset -c 0 perf bench sched pipe (÷2)",
            lambda: perf_bench(["sched", "pipe", "-l", "200000"], pin="0") / 2,
            "perf reports a round trip (two switches); halved here to match ns per switch",
        ),
        Pair(
            "ctxswitch.pipe",
            {"placement": "unpinned"},
            "perf bench sched pipe (÷2)",
            lambda: perf_bench(["sched", "pipe", "-l", "200000"]) / 2,
            "unpinned: the scheduler may place the two processes on one core or two",
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


STORAGE_PAIRS = [
    StoragePair(
        "storage.write",
        {"pattern": "seq", "block_size": "4096", "target": "memory", "cache": "buffered"},
        "tmpfs: both copy into the page cache",
    ),
    StoragePair(
        "storage.write",
        {"pattern": "seq", "block_size": "8", "target": "memory", "cache": "buffered"},
        "8 B writes: per-call cost dominates",
    ),
    StoragePair(
        "storage.write",
        {"pattern": "rand", "block_size": "512", "target": "memory", "cache": "buffered"},
        "pwrite at shuffled offsets vs fio randwrite",
    ),
    StoragePair(
        "storage.write",
        {"pattern": "seq", "block_size": "4096", "target": "disk", "cache": "direct"},
        "O_DIRECT: the device's own speed",
    ),
    StoragePair(
        "storage.read",
        {"pattern": "seq", "block_size": "4096", "target": "disk", "cache": "buffered", "state": "warm"},
        "warm page cache",
    ),
    StoragePair(
        "storage.read",
        {"pattern": "rand", "block_size": "4096", "target": "disk", "cache": "direct"},
        "O_DIRECT random reads",
    ),
]


def storage(rounds: int, write: bool) -> int:
    if not shutil.which("fio"):
        print("bench: `fio` is missing (Debian package fio); run `make deps-bench`", file=sys.stderr)
        return 1
    disk_dir = str(ROOT / "build" / "bench-storage")
    os.makedirs(disk_dir, exist_ok=True)
    rows = []
    try:
        for pair in STORAGE_PAIRS:
            directory = "/dev/shm" if pair.params["target"] == "memory" else disk_dir
            params = dict(pair.params) | ({"dir": disk_dir} if pair.params["target"] == "disk" else {})
            ours, theirs = [], []
            for _ in range(rounds):
                ours.append(kernel_median("ctxbench-kernels-cpp", pair.kernel, params, 0.2, 5))
                theirs.append(fio_mb_s(pair, directory))
            o, t = statistics.median(ours), statistics.median(theirs)
            diff = (o - t) / t * 100
            shown = ",".join(f"{k}={v}" for k, v in pair.params.items())
            rows.append(
                f"| `{pair.kernel}` | {shown} | {o:,.1f} | {t:,.1f} | {diff:+.1f} % "
                f"| {'yes' if abs(diff) <= 10 else 'NO'} | {pair.note} |"
            )
            print(rows[-1], flush=True)
    finally:
        shutil.rmtree(disk_dir, ignore_errors=True)
        for leftover in ("/dev/shm/ctxbench-fio.dat",):
            if os.path.exists(leftover):
                os.remove(leftover)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    table = "\n".join(
        [
            f"Measured {now} on: {machine_line()}; disk = the filesystem under `build/`.",
            f"Command: `make bench` (`scripts/bench.py storage --rounds {rounds}`); medians of {rounds} "
            "interleaved rounds; fio 16 MiB file, iodepth 1, one job, 2 s per round, the same pattern, "
            "block size and cache mode (`sync`/`psync` engines, `--direct`, `--gtod_reduce=1`).",
            "",
            "| kernel | params | ctxbench MB/s | fio MB/s | difference | within ±10 % | note |",
            "|---|---|---:|---:|---:|:-:|---|",
            *rows,
        ]
    )
    print(table)
    if write:
        write_section(ROOT / "docs" / "fidelity.md", "storage", table)
    return 0


def compare(write: bool) -> int:
    data = ROOT / "build" / "bench-compare"
    py = str(ROOT / ".venv" / "bin" / "python")
    bench = ROOT / "server" / "benchmarks"
    if not (data / "ctxbench.db").exists():
        shutil.rmtree(data, ignore_errors=True)
        t0 = dt.datetime.now()
        subprocess.run([py, str(bench / "fill.py"), "--data-dir", str(data)], check=True, cwd=ROOT / "server")
        print(f"bench: filled {data} in {(dt.datetime.now() - t0).total_seconds():.0f} s", flush=True)
    out = subprocess.run(
        [py, str(bench / "compare_bench.py"), "--data-dir", str(data), "--requests", "200"],
        capture_output=True,
        text=True,
        cwd=ROOT / "server",
    )
    print(out.stdout, out.stderr, sep="\n")
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    table = "\n".join(
        [
            f"Measured {now} on: {machine_line()}.",
            "Command: `make bench` (`scripts/bench.py compare`: `server/benchmarks/fill.py` once, then "
            "`server/benchmarks/compare_bench.py --requests 200`); target p95 ≤ 50 ms.",
            "",
            out.stdout.strip(),
        ]
    )
    if write and out.returncode in (0, 1):
        write_section(ROOT / "docs" / "performance.md", "compare", table)
    return out.returncode


def load(write: bool) -> int:
    """server/benchmarks/load.py: simulated protocol-speaking agents against the real server."""
    py = str(ROOT / ".venv" / "bin" / "python")
    script = str(ROOT / "server" / "benchmarks" / "load.py")
    out = subprocess.run([py, script], capture_output=True, text=True, cwd=ROOT)
    print(out.stdout, out.stderr, sep="\n")
    got: dict[str, dict[str, object]] = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            got.update(json.loads(line))
    # Ingest on PostgreSQL too (a private server of its own: scripts/with-postgres.sh), beside SQLite's.
    pg = subprocess.run(
        [str(ROOT / "scripts" / "with-postgres.sh"), py, script, "ingest"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    print(pg.stdout, pg.stderr, sep="\n")
    for line in pg.stdout.splitlines():
        if line.startswith("{"):
            got.update({f"{k} (PostgreSQL)": v for k, v in json.loads(line).items()})
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    rows = [
        f"Measured {now} on: {machine_line()}.",
        "Command: `make bench` (`scripts/bench.py load`: `server/benchmarks/load.py` on SQLite, and its"
        " ingest on PostgreSQL under `scripts/with-postgres.sh`). Targets (issue"
        ' "The server holds"): 1000 idle streams ≤ 300 MB RSS and ≤ 2 % CPU; ingest ≥ 5000 results/s with'
        " p99 ack ≤ 100 ms; a batch to 100 machines x 50 items posted ≤ 200 ms, started ≤ 1 s later;"
        " 200 agents connecting at once with 0 errors.",
        "",
        "| scenario | figures |",
        "|---|---|",
    ]
    rows += [f"| {k} | {', '.join(f'{kk} {vv}' for kk, vv in v.items())} |" for k, v in got.items()]
    table = "\n".join(rows)
    if write and out.returncode == 0:
        write_section(ROOT / "docs" / "performance.md", "load", table)
    return out.returncode or pg.returncode


def significance(write: bool) -> int:
    out = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "benchmarks/significance.py"],
        capture_output=True,
        text=True,
        cwd=ROOT / "server",
    )
    print(out.stdout, out.stderr, sep="\n")
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    table = "\n".join(
        [
            f"Measured {now} on: {machine_line()}.",
            "Command: `make bench` (`scripts/bench.py significance`: `server/benchmarks/significance.py`).",
            "",
            out.stdout.strip(),
        ]
    )
    if write and out.returncode == 0:
        write_section(ROOT / "docs" / "performance.md", "significance", table)
    return out.returncode


def machine_line() -> str:
    cpu = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    virt = ""
    if shutil.which("systemd-detect-virt"):
        virt = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True).stdout.strip()
    return f"{cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}, virtualization: {virt or 'unknown'}"


def fidelity(rounds: int, write: bool) -> int:
    if not shutil.which("perf"):
        print("bench: `perf` is missing (Debian package linux-perf); run `make deps-bench`", file=sys.stderr)
        return 1
    rows = []
    for pair in fidelity_pairs():
        ours, theirs = [], []
        for _ in range(rounds):  # interleaved, so drift on a busy machine hits both sides alike
            ours.append(kernel_median("ctxbench-kernels-cpp", pair.kernel, pair.params, 0.3, 5))
            theirs.append(pair.anchor())
        o, t = statistics.median(ours), statistics.median(theirs)
        diff = (o - t) / t * 100
        params = ",".join(f"{k}={v}" for k, v in pair.params.items()) or "-"
        rows.append(
            f"| `{pair.kernel}` | {params} | {o:,.1f} | {pair.anchor_name} | {t:,.1f} | {diff:+.1f} % "
            f"| {'yes' if abs(diff) <= 10 else 'NO'} | {pair.note} |"
        )
        print(rows[-1], flush=True)
    cv_rows = []
    for kernel in CPU_BOUND:
        samples = kernel_samples("ctxbench-kernels-cpp", kernel, {}, 0.2, 10)
        cv = statistics.stdev(samples) / statistics.mean(samples) * 100
        verdict = "yes" if cv <= 3 else "NO"
        cv_rows.append(f"| `{kernel}` | {statistics.median(samples):,.2f} | {cv:.2f} % | {verdict} |")
        print(cv_rows[-1], flush=True)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    table = "\n".join(
        [
            f"Measured {now} on: {machine_line()}; load average before: {os.getloadavg()[0]:.2f}.",
            f"Command: `make bench` (`scripts/bench.py fidelity --rounds {rounds}`); medians of {rounds} "
            "interleaved rounds, each kernel round itself the median of 5 repetitions of ≥ 0.3 s.",
            "",
            "| kernel | params | ctxbench ns/op | anchor | anchor ns/op | difference | within ±10 % | note |",
            "|---|---|---:|---|---:|---:|:-:|---|",
            *rows,
            "",
            "CPU-bound kernels, defaults but 10 repetitions of 0.2 s (target CV ≤ 3 % on a quiet machine):",
            "",
            "| kernel | median ns/op | CV | ≤ 3 % |",
            "|---|---:|---:|:-:|",
            *cv_rows,
        ]
    )
    print(table)
    if write:
        write_section(ROOT / "docs" / "fidelity.md", "fidelity", table)
    return 0


def write_section(doc: Path, marker: str, table: str) -> None:
    """Replaces the part of `doc` after `<!-- bench:marker -->` up to the next marker (or the end)."""
    tag = f"<!-- bench:{marker} -->"
    text = doc.read_text() if doc.exists() else ""
    if tag in text:
        head, rest = text.split(tag, 1)
        nxt = rest.find("<!-- bench:")
        tail = rest[nxt:] if nxt >= 0 else ""
    else:
        head, tail = text, ""
    doc.write_text(head.rstrip() + f"\n\n{tag}\n{table}\n" + ("\n" + tail if tail else ""))
    print(f"bench: wrote {doc.relative_to(ROOT)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "sections",
        nargs="*",
        default=[
            "fidelity",
            "storage",
            "orchestration",
            "launches",
            "suite",
            "aa",
            "noise",
            "compare",
            "significance",
            "load",
        ],
        choices=[
            "fidelity",
            "storage",
            "orchestration",
            "launches",
            "suite",
            "aa",
            "noise",
            "compare",
            "significance",
            "load",
        ],
    )
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/ alone")
    ap.add_argument(
        "--launches", type=int, default=None, help="suite: override the profile's launches per item"
    )
    a = ap.parse_args()
    status = 0
    if "fidelity" in a.sections:
        status |= fidelity(a.rounds, not a.no_write)
    if "storage" in a.sections:
        status |= storage(a.rounds, not a.no_write)
    if "orchestration" in a.sections:
        from bench_orchestration import orchestration

        status |= orchestration(a.rounds, not a.no_write, write_section, machine_line)
    if "compare" in a.sections:
        status |= compare(not a.no_write)
    if "significance" in a.sections:
        status |= significance(not a.no_write)
    if "load" in a.sections:
        status |= load(not a.no_write)
    if "launches" in a.sections:
        from bench_launches import launches

        status |= launches(a.rounds, not a.no_write, write_section, machine_line)
    if "suite" in a.sections:
        from bench_orchestration import suite

        status |= suite(not a.no_write, write_section, machine_line, a.launches)
    if "aa" in a.sections:
        from bench_aa import aa

        status |= aa(not a.no_write, write_section, machine_line)
    if "noise" in a.sections:
        from bench_aa import noise

        status |= noise(not a.no_write, write_section, machine_line)
    return status


if __name__ == "__main__":
    sys.exit(main())
