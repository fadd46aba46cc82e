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
samples        long against short samples (issue 24) beside a build, kernel executables by hand: each
               point's run-to-run spread with either, and the estimators a block could use
               (scripts/bench_samples.py, docs/fidelity.md).
figure         which statistic of a short-sample result's 14 repetitions repeats from run to run (median,
               p25, p10, p5, min) on the host as it is and beside a build, kernel executables by hand; the
               figure is p5 (scripts/bench_figure.py, docs/fidelity.md).
power          two agents under seccomp filters (1 against 3, scripts/tools/seccomp_slow.c): a real
               slowdown of every syscall; is syscall.getppid flagged, within 5 % of perf bench's own
               ratio, and no row without a syscall flagged (scripts/bench_power.py, docs/fidelity.md).
alerts         a schedule every 15 s on one agent beside a build, 6 kernel points until each has 20
               succeeded runs: how many alerts the unchanged host opens (target 0), each point's spread
               (scripts/bench_alerts.py, docs/fidelity.md; issue 28).
noise          one agent runs the A/A points 6 times: each point's run-to-run spread, the source of compare's
               per-kernel default noise floors (scripts/bench_noise.py, docs/performance.md).
phases         one agent runs the A/A points 4 times on the host as it is, then 4 times beside a build
               started between them: does History call the load's step a change (target: no series;
               scripts/bench_noise.py, docs/fidelity.md; issue 24).
compare        GET /compare for 10 machines x 50 kernel points on a SQLite database of 1 million results
               (server/benchmarks/fill.py, kept in build/bench-compare between runs), p50/p95/p99 over
               loopback against the real server (server/benchmarks/compare_bench.py; docs/performance.md).
significance   compare's significance rule on seeded synthetic data: simulated A/A false positives and power
               for a true 20 % difference, and what a 200-row comparison's statistics cost
               (server/benchmarks/significance.py; docs/performance.md).
load           simulated agents speaking the real protocol against the real server: 200 connecting at
               once, 1000 idle streams (RSS, CPU), ingest (results/s, ack p50/p99), a batch to 100
               machines (server/benchmarks/load.py; docs/performance.md).
ingest         the server's CPU a result with the reports real agents send (build/bench/ingest-load: the
               agent's own runner and connection code), beside grpc_floor.py's floor and load.py's small
               reports, 3 repetitions; bytes a result takes in SQLite after a real agent's default-profile
               run (server/benchmarks/ingest_real.py; docs/performance.md).
storm          real agents (build/bin/ctxbench-agent) against one real server: 200 and 1000 starting at
               once, then a server restart under them (time to all online, log lines that should not be
               there, a batch POST to 100, the idle server's RSS and CPU), on SQLite and PostgreSQL
               (server/benchmarks/agent_storm.py, tests/storm/storm.py; docs/performance.md).
orchestration  the real server and agent: trigger latency (POST → the agent starts the kernel), result
               latency (kernel ends → the result arrives on the events stream), an idle agent's CPU and
               RSS over 60 s, and a kernel through the agent vs the same kernel run by hand; the table
               goes to docs/performance.md.

Run: .venv/bin/python scripts/bench.py [fidelity] [orchestration] [--rounds N] [--no-write]
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from bench_common import Out, measured

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = (
    "fidelity",
    "storage",
    "orchestration",
    "launches",
    "suite",
    "aa",
    "samples",
    "figure",
    "noise",
    "phases",
    "power",
    "alerts",
    "compare",
    "significance",
    "load",
    "ingest",
    "storm",
)


def _server_bench(report: Out, marker: str, args: list[str], command: str, ok: tuple[int, ...] = (0,)) -> int:
    """One of server/benchmarks/*.py: its output (a Markdown table) becomes the section."""
    out = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), *args], capture_output=True, text=True, cwd=ROOT / "server"
    )
    print(out.stdout, out.stderr, sep="\n")
    report.emit(
        "performance.md", marker, [measured(), command, "", out.stdout.strip()], ok=out.returncode in ok
    )
    return out.returncode


def compare(report: Out) -> int:
    data = ROOT / "build" / "bench-compare"
    if not (data / "ctxbench.db").exists():
        shutil.rmtree(data, ignore_errors=True)
        t0 = dt.datetime.now()
        py = str(ROOT / ".venv" / "bin" / "python")
        subprocess.run([py, "benchmarks/fill.py", "--data-dir", str(data)], check=True, cwd=ROOT / "server")
        print(f"bench: filled {data} in {(dt.datetime.now() - t0).total_seconds():.0f} s", flush=True)
    return _server_bench(
        report,
        "compare",
        ["benchmarks/compare_bench.py", "--data-dir", str(data), "--requests", "200"],
        "Command: `make bench` (`scripts/bench.py compare`: `server/benchmarks/fill.py` once, then "
        "`server/benchmarks/compare_bench.py --requests 200`); target p95 ≤ 50 ms.",
        ok=(0, 1),
    )


def load(report: Out) -> int:
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
    rows = [
        measured(),
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
    report.emit("performance.md", "load", rows, ok=out.returncode == 0)
    return out.returncode or pg.returncode


def storm(report: Out) -> int:
    """server/benchmarks/agent_storm.py: real agents, a real server, a restart under them."""
    py = str(ROOT / ".venv" / "bin" / "python")
    script = str(ROOT / "server" / "benchmarks" / "agent_storm.py")
    rows = [
        measured(),
        "Command: `make bench` (`scripts/bench.py storm`: `server/benchmarks/agent_storm.py --agents N`,"
        " on SQLite and under `scripts/with-postgres.sh`). Real agent processes on this host, each with its"
        " own state dir, the shared agent token over TLS and a one-executable catalog (31 kernels); the"
        " server on the whole host. Target (issue 25): all online within 60 s of each start, 0 bad log"
        " lines (tracebacks, pool or write-gate timeouts), a batch to 100 machines posted in ≤ 1 s.",
        "",
        "| agents | database | first start: all online | restart: all online | deferred | bad lines |"
        " GET /machines | batch to 100 | idle server CPU | server RSS |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    status = 0
    for agents in (200, 1000):
        for wrap in ([], [str(ROOT / "scripts" / "with-postgres.sh")]):
            out = subprocess.run(
                [*wrap, py, script, "--agents", str(agents), "--limit", "600"],
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
            print(out.stdout, out.stderr, sep="\n")
            status |= out.returncode
            line = next((x for x in out.stdout.splitlines() if x.startswith("{")), None)
            if line is None:
                continue
            g = json.loads(line)
            first, again = g["first_start"], g["restart"]
            cells = [
                agents,
                g["database"],
                f"{first['all_online_s']} s ({first['online']})",
                f"{again['all_online_s']} s ({again['online']})",
                f"{first['deferred']} + {again['deferred']}",
                first["bad"] + again["bad"],
                f"{max(first['machines_list_s'], again['machines_list_s'])} s",
                f"{again['batch']['post_s']} s ({again['batch']['status']})",
                f"{g.get('idle_server_cpu_pct')} %",
                f"{g['server_rss_mb']} MB",
            ]
            rows.append("| " + " | ".join(str(c) for c in cells) + " |")
    report.emit("performance.md", "storm", rows, ok=status == 0)
    return status


def significance(report: Out) -> int:
    return _server_bench(
        report,
        "significance",
        ["benchmarks/significance.py"],
        "Command: `make bench` (`scripts/bench.py significance`: `server/benchmarks/significance.py`).",
    )


# Sections measured by a function of that name in a module of their own, given only the report.
REPORT_SECTIONS = {
    "aa": "bench_aa",
    "figure": "bench_figure",
    "samples": "bench_samples",
    "noise": "bench_noise",
    "phases": "bench_noise",
    "power": "bench_power",
    "alerts": "bench_alerts",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "sections",
        nargs="*",
        default=list(SECTIONS),
        choices=SECTIONS,
    )
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/ alone")
    ap.add_argument(
        "--launches", type=int, default=None, help="suite: override the profile's launches per item"
    )
    a = ap.parse_args()
    report = Out(not a.no_write)
    status = 0
    if "fidelity" in a.sections:
        from bench_fidelity import fidelity

        status |= fidelity(a.rounds, report)
    if "storage" in a.sections:
        from bench_fidelity import storage

        status |= storage(a.rounds, report)
    if "orchestration" in a.sections:
        from bench_orchestration import orchestration

        status |= orchestration(a.rounds, report)
    if "compare" in a.sections:
        status |= compare(report)
    if "significance" in a.sections:
        status |= significance(report)
    if "load" in a.sections:
        status |= load(report)
    if "ingest" in a.sections:
        status |= _server_bench(
            report,
            "ingest-real",
            ["benchmarks/ingest_real.py", "--markdown"],
            "Command: `make bench` (`scripts/bench.py ingest`: `server/benchmarks/ingest_real.py"
            " --markdown`). Target (issue 25 item 4): server CPU a result ≤ 2x the same minutes' floor.",
        )
    if "storm" in a.sections:
        status |= storm(report)
    if "launches" in a.sections:
        from bench_launches import launches

        status |= launches(a.rounds, report)
    if "suite" in a.sections:
        from bench_orchestration import suite

        status |= suite(report, a.launches)
    for name, module in REPORT_SECTIONS.items():
        if name in a.sections:
            status |= getattr(importlib.import_module(module), name)(report)
    return status


if __name__ == "__main__":
    sys.exit(main())
