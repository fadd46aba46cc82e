"""Ingest with the reports real agents send, beside the floor and load.py's small reports (issue 25 item 4,
issue 24 item 5).

`ingest`  per repetition, one after the other on this host: (1) real reports: a fresh real server (SQLite,
          or PostgreSQL under scripts/with-postgres.sh), `build/bench/ingest-load replay` (the agent's own
          connection code: enrollment with the agent token, TLS, Hello with the real catalog, outbox,
          spool) with A agents, each sent one default-profile run of M items, answering every item with
          the messages the agent's runner sent for one real item of syscall.getppid (`ingest-load
          capture`: 7 launches of short samples, their RUNNING updates coalesced into RunProgress as the
          server's default CTXBENCH_PROGRESS_INTERVAL_MS asks, the report: the item's last message), paced
          at R results/s in all; (2) `load.py ingest` (10-sample reports, RUNNING + report); (3)
          `grpc_floor.py` (a server that only acknowledges). Server CPU per result from /proc (the
          process, its threads and its statistics workers) over the window from the first message to the
          last ack; for (1) also by thread, and the same with only the first RUNNING + report
          (`--no-progress`).
`profile` one real replay as in (1) with py-spy recording the server over the window (collapsed stacks to
          --profile FILE; py-spy's sampling costs the server CPU too: its figures are not the bench's).
`stored`  the real agent (build/bin/ctxbench-agent) runs a default-profile run of a few kernels; bytes a
          result takes in the SQLite `results` table: sum(length(column)) over every column, per row.

Run: .venv/bin/python server/benchmarks/ingest_real.py [ingest] [stored] [profile] [--reps 3] [--json FILE]
     [--markdown] [--profile FILE] [--messages CAPTURE]
Figures depend on the host and on what runs beside: the load average is printed with each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "server" / "benchmarks"))
sys.path.insert(0, str(ROOT / "server" / "tests"))  # load.py's fake_agent

import load  # noqa: E402
from procstat import proc_stats, threads_cpu  # noqa: E402
from tests.e2e.stack import KERNELS_DIR, Agent, Server, wait_run, wait_until  # noqa: E402

TOOL = ROOT / "build" / "bench" / "ingest-load"
KERNEL = "syscall.getppid"
# A default-profile run of a few kernels of each harness (stored bytes).
STORED_ITEMS = [
    {"kernel": "syscall.getppid"},
    {"kernel": "call.function"},
    {"kernel": "ctxswitch.pipe", "params": {"placement": "same_core"}},
    {"kernel": "lock.pthread_mutex", "params": {"threads": 2}},
]


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def build_tool(messages: Path | None = None) -> Path:
    """The generator, built for the bench only (go's cache makes a rebuild cheap); then one real item
    captured through the agent's runner, or `messages`: a capture kept from before (the progress
    messages of a capture follow the item's length, which follows the host's load: comparing two
    servers wants the same messages)."""
    subprocess.run(["go", "build", "-o", str(TOOL), "./cmd/ingest-load"], cwd=ROOT / "agent", check=True)
    if messages is not None:
        return messages
    cap = TOOL.with_name(f"ingest-load-{KERNEL}.pb")
    subprocess.run(
        [str(TOOL), "capture", "--kernels", str(KERNELS_DIR), "--kernel", KERNEL, "--out", str(cap)],
        check=True,
    )
    return cap


def post_runs(server: Server, agents: int, items: int) -> None:
    def online() -> list[str]:
        ms = server.http.get("/machines").json()
        ids = [m["id"] for m in ms if m["online"] and m["name"].startswith("ingest-load-")]
        return ids if len(ids) == agents else []

    with httpx.Client(base_url=server.base_url + "/api/v1", headers=server.auth, timeout=60) as http:
        for mid in wait_until("every replay agent online", online, 120, 0.2):
            body = {"machine_id": mid, "items": [{"kernel": KERNEL}] * items, "profile": "default"}
            http.post("/runs", json=body).raise_for_status()


def drive(
    argv: list[str], pid: int, ready: Callable[[], None] = lambda: None, profile: Path | None = None
) -> dict[str, Any]:
    """Runs the generator until it says every agent holds its run (`ready` meanwhile: the runs posted),
    then measures process pid's CPU from the go line to the generator's figures (every result acked);
    `profile`: py-spy's collapsed stacks of pid over that window, to that file."""
    gen = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert gen.stdin is not None and gen.stdout is not None
    try:
        ready()
        started = json.loads(gen.stdout.readline())
        assert "started" in started, started
        spy = load.profiler(pid, profile)
        if spy is not None:
            time.sleep(1.0)  # py-spy attached
        la0, cpu0, th0 = loadavg(), proc_stats(pid)[0], threads_cpu(pid)
        gen.stdin.write("go\n")
        gen.stdin.flush()
        out = json.loads(gen.stdout.readline())
        cpu1, th1 = proc_stats(pid)[0], threads_cpu(pid)
        load.stop_profiler(spy)
    finally:
        gen.stdin.close()
        gen.wait(60)
    n = out["results"]
    by_thread = {k: round(1000 * (v - th0.get(k, 0.0)) / n, 3) for k, v in th1.items()}
    return out | {
        "server_cpu_ms_per_result": round(1000 * (cpu1 - cpu0) / n, 3),
        "thread_cpu_ms_per_result": {k: v for k, v in sorted(by_thread.items()) if v > 0},
        "loadavg": f"{la0} -> {loadavg()}",
    }


def replay_argv(cap: Path, target: str, ca: Path, agents: int, rate: float, progress: bool) -> list[str]:
    flags = {"server": target, "ca-file": ca, "kernels": KERNELS_DIR, "messages": cap, "agents": agents}
    return [
        str(TOOL),
        "replay",
        *(f"--{k}={v}" for k, v in flags.items()),
        f"--rate={rate}",
        f"--progress={str(progress).lower()}",
    ]


def real(
    cap: Path, agents: int, items: int, rate: float, progress: bool, profile: Path | None = None
) -> dict[str, Any]:
    """One replay against a fresh real server: the generator's figures and the server's CPU a result."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        server = Server(data)
        assert server.ca_file is not None
        argv = replay_argv(cap, server.grpc_target, server.ca_file, agents, rate, progress)
        try:
            return drive(
                [*argv, f"--token-file={server.token_file}"],
                server.proc.pid,
                lambda: post_runs(server, agents, items),
                profile,
            )
        finally:
            server.stop()


def real_floor(cap: Path, agents: int, items: int, rate: float, progress: bool) -> dict[str, Any]:
    """The same replay's messages to grpc_floor.py's server, which only acknowledges."""
    with tempfile.TemporaryDirectory() as tmp:
        script = ROOT / "server" / "benchmarks" / "grpc_floor.py"
        child = subprocess.Popen(
            [sys.executable, str(script), "--serve", tmp], stdout=subprocess.PIPE, text=True
        )
        try:
            assert child.stdout is not None
            port = int(child.stdout.readline())
            argv = replay_argv(cap, f"127.0.0.1:{port}", Path(tmp) / "tls" / "ca.pem", agents, rate, progress)
            return drive([*argv, "--floor", f"--items={items}"], child.pid)
        finally:
            child.terminate()
            child.wait(10)


def floor(agents: int, items: int, rate: float) -> dict[str, Any]:
    la0 = loadavg()
    script = ROOT / "server" / "benchmarks" / "grpc_floor.py"
    argv = [sys.executable, str(script), "--agents", str(agents), "--items", str(items), "--rate", str(rate)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])["grpc_floor"]
    return got | {"loadavg": f"{la0} -> {loadavg()}"}


def small(agents: int, items: int, rate: float) -> dict[str, Any]:
    la0 = loadavg()
    got = asyncio.run(load.ingest(agents, items, rate))
    return got | {"loadavg": f"{la0} -> {loadavg()}"}


def ingest(reps: int, agents: int, items: int, rate: float, messages: Path | None) -> dict[str, Any]:
    cap = build_tool(messages)
    scenarios: dict[str, Callable[[], dict[str, Any]]] = {
        "real": lambda: real(cap, agents, items, rate, True),
        "real_floor": lambda: real_floor(cap, agents, items, rate, True),
        "real_no_progress": lambda: real(cap, agents, items, rate, False),
        "real_no_progress_floor": lambda: real_floor(cap, agents, items, rate, False),
        "small": lambda: small(agents, items, rate),
        "floor": lambda: floor(agents, items, rate),
    }
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in scenarios}
    for rep in range(reps):
        for name, run in scenarios.items():
            rows[name].append(run())
            print(json.dumps({f"{name} {rep + 1}": rows[name][-1]}), file=sys.stderr, flush=True)
    cpu = {name: [r["server_cpu_ms_per_result"] for r in got] for name, got in rows.items()}
    pairs = [
        ("real", "floor"),
        ("real", "real_floor"),
        ("real_no_progress", "floor"),
        ("real_no_progress", "real_no_progress_floor"),
        ("small", "floor"),
    ]
    # each repetition's ratio to the floor measured in the same minutes
    ratios = {f"{a} / {b}": [round(x / y, 1) for x, y in zip(cpu[a], cpu[b], strict=True)] for a, b in pairs}
    return {"server_cpu_ms_per_result": cpu, "ratios": ratios, "runs": rows}


def row_bytes(db: Path) -> dict[str, Any]:
    """Bytes the `results` rows take: sum(length(column)) over every column, per row (NULL: 0)."""
    con = sqlite3.connect(db)
    try:
        cols = [r[1] for r in con.execute("PRAGMA table_info(results)")]
        total = " + ".join(f'coalesce(length("{c}"), 0)' for c in cols)
        per = {
            c: con.execute(f'SELECT avg(coalesce(length("{c}"), 0)) FROM results').fetchone()[0] for c in cols
        }
        n, size = con.execute(f"SELECT count(*), sum({total}) FROM results WHERE status = 'ok'").fetchone()
    finally:
        con.close()
    top = sorted(per.items(), key=lambda kv: -(kv[1] or 0))[:6]
    return {
        "results": n,
        "bytes_per_result": round(size / max(1, n)),
        "largest_columns": {k: round(v or 0) for k, v in top},
    }


def stored() -> dict[str, Any]:
    """A default-profile run of STORED_ITEMS through the real agent; the rows' bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        server = Server(data)
        agent = Agent(server, Path(tmp) / "spool", name="stored-bytes")
        try:
            mid = wait_until(
                "the agent online",
                lambda: next((m["id"] for m in server.http.get("/machines").json() if m["online"]), None),
                60,
            )
            r = server.http.post(
                "/runs", json={"machine_id": mid, "items": STORED_ITEMS, "profile": "default"}
            )
            r.raise_for_status()
            run = wait_run(server, r.json()["id"], timeout=600, interval=1)
            time.sleep(1)
        finally:
            agent.stop()
            server.stop()
        return {"run_status": run["status"], "items": len(STORED_ITEMS)} | row_bytes(data / "ctxbench.db")


LABELS = {
    "real": "real reports (the runner's messages, progress coalesced)",
    "real_floor": "the same to the floor's server",
    "real_no_progress": "real reports, first progress + report",
    "real_no_progress_floor": "the same to the floor's server",
    "small": "`load.py ingest` (10 samples, RUNNING + report)",
    "floor": "`grpc_floor.py` (the same, only acked)",
}


def markdown(out: dict[str, Any]) -> str:
    """The section make bench writes (docs/performance.md): one row per scenario, its repetitions."""
    lines = []
    if "ingest" in out:
        runs = out["ingest"]["runs"]
        lines += [
            "| scenario | server CPU a result | results/s | load average |",
            "|---|---|---|---|",
        ]
        for name, got in runs.items():
            cells = [
                LABELS[name],
                ", ".join(f"{r['server_cpu_ms_per_result']:.3f}" for r in got) + " ms",
                ", ".join(f"{r['results_per_s']:.0f}" for r in got),
                " to ".join(
                    sorted({r["loadavg"].split()[0] for r in got}, key=float)[:: max(1, len(got) - 1)]
                ),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", "Ratios, each repetition to the floor measured in the same minutes:", ""]
        lines += [f"- {k}: {', '.join(f'{v}x' for v in vs)}" for k, vs in out["ingest"]["ratios"].items()]
    if "stored" in out:
        st = out["stored"]
        cols = ", ".join(f"{k} {v}" for k, v in st["largest_columns"].items())
        lines += ["", f"Stored: {st['bytes_per_result']} bytes a result ({st['results']} results; {cols})."]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", default=["ingest", "stored"])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--agents", type=int, default=20)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=5000, help="results/s over all agents; 0: at once")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--profile", type=Path, default=Path("ingest-real.txt"), help="profile: the stacks' file")
    ap.add_argument("--messages", type=Path, help="a kept capture (ingest-load capture --out) to replay")
    ap.add_argument("--markdown", action="store_true", help="stdout: the Markdown section (JSON to stderr)")
    args = ap.parse_args()
    log = sys.stderr if args.markdown else sys.stdout
    out: dict[str, Any] = {}
    for s in args.scenarios:
        if s == "ingest":
            out[s] = ingest(args.reps, args.agents, args.items, args.rate, args.messages)
            print(json.dumps({s: {k: v for k, v in out[s].items() if k != "runs"}}), file=log, flush=True)
        elif s == "profile":  # one real replay under py-spy (no floor beside it: not a figure to report)
            out[s] = real(build_tool(args.messages), args.agents, args.items, args.rate, True, args.profile)
            print(json.dumps({s: out[s]}), file=log, flush=True)
        elif s == "stored":
            out[s] = stored()
            print(json.dumps({s: out[s]}), file=log, flush=True)
        else:
            ap.error(f"unknown scenario {s!r}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    if args.markdown:
        print(markdown(out))


if __name__ == "__main__":
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
    main()
