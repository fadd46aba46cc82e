"""make bench, section `aa`: does compare tell the truth on real runs? (issue "Honest comparisons")

Three real agents on this host, each its own machine to the server:
- A and B: the same kernels, the same host. Every row between them is an A/A comparison; a row flagged
  significant is a false positive. Measured twice: on the host as it is, and while a compiler loop (a
  build) runs beside them.
- Q: the same, but the agent and its kernels run in a cgroup with a 50 % CPU quota (cpu.cfs_quota_us, as a
  container with a CPU limit). Against A every CPU-bound row should be significantly slower, ratio ≈ 2.

The kernel points come from every family; the runs go one machine after the other (A, then B, then Q),
with the default profile, as a user would start them. The table goes to docs/fidelity.md.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench_common import Out, measured

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.stack import Agent, Server, wait_until  # noqa: E402

POINTS: list[dict[str, Any]] = [
    {"kernel": "call.function"},
    {"kernel": "call.indirect"},
    {"kernel": "syscall.getppid"},
    {"kernel": "syscall.clock_gettime"},
    {"kernel": "jmp.setjmp_longjmp"},
    {"kernel": "ucontext.swapcontext"},
    {"kernel": "coroutine.switch"},
    {"kernel": "ctxswitch.pipe", "params": {"placement": "same_core"}},
    {"kernel": "process.fork_wait"},
    {"kernel": "thread.create_join"},
    {"kernel": "sched.yield"},
    {"kernel": "lock.pthread_mutex"},
    {"kernel": "ipc.pipe"},
    {"kernel": "sched.gosched"},
    {"kernel": "channel.pingpong"},
    {"kernel": "lock.go_mutex"},
    {"kernel": "call.py_loop"},
    {"kernel": "coroutine.py_generator"},
    {"kernel": "syscall.open_close"},
    {"kernel": "ctxswitch.futex", "params": {"placement": "same_core"}},
    {"kernel": "sleep.usleep0"},
    {"kernel": "storage.write", "params": {"target": "memory", "block_size": 4096}},
    {"kernel": "ipc.unix_socket"},
    {"kernel": "goroutine.create"},
    {"kernel": "coroutine.create"},
    {"kernel": "coroutine.py_greenlet"},
]
# Single-threaded kernels that never wait (their cpu_wall_ratio counter, kernels/README.md): a CPU quota
# slows exactly these by its share.
CPU_BOUND = {
    "call.function",
    "call.indirect",
    "syscall.getppid",
    "syscall.clock_gettime",
    "jmp.setjmp_longjmp",
    "ucontext.swapcontext",
    "coroutine.switch",
    "call.py_loop",
    "coroutine.py_generator",
    "coroutine.py_greenlet",
}
CGROUP = Path("/sys/fs/cgroup/cpu")
FLOORS = ROOT / "server" / "src" / "ctxbench_server" / "compare" / "noise_floors.json"
QUOTA_GROUP = "ctxbench-bench-q50"


@contextlib.contextmanager
def quota_cgroup(percent: int) -> Iterator[list[str] | None]:
    """A cgroup v1 cpu group with `percent` % of one CPU; yields the wrap that starts a process in it."""
    group = CGROUP / QUOTA_GROUP
    if not (CGROUP / "cpu.cfs_quota_us").exists() or os.geteuid() != 0:
        yield None
        return
    group.mkdir(exist_ok=True)
    try:
        (group / "cpu.cfs_period_us").write_text("100000")
        (group / "cpu.cfs_quota_us").write_text(str(percent * 1000))
        yield ["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$@"', "sh"]
    finally:
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                (CGROUP / "cgroup.procs").write_text(pid)
        with contextlib.suppress(OSError):
            group.rmdir()


@contextlib.contextmanager
def build_beside() -> Iterator[None]:
    """A build's load: the C++ kernels' sources compiled in a loop, one compiler per CPU."""
    srcs = sorted((ROOT / "kernels" / "cpp" / "src").glob("*.cc"))
    loop = " ".join(f"g++ -std=c++20 -O2 -c {s} -o /dev/null;" for s in srcs)
    procs = [
        subprocess.Popen(
            ["sh", "-c", f"while :; do {loop} done"], start_new_session=True, stderr=subprocess.DEVNULL
        )
        for _ in range(os.cpu_count() or 1)
    ]
    try:
        yield
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, 9)
            p.wait()


def run_on(server: Server, machine_id: str) -> str:
    r = server.http.post("/runs", json={"machine_id": machine_id, "items": POINTS, "profile": "default"})
    if r.status_code != 201:
        print(f"bench: POST /runs answered {r.status_code}: {r.text[:2000]}", file=sys.stderr)
    r.raise_for_status()
    run_id = str(r.json()["id"])

    def finished() -> dict[str, Any] | None:
        x = server.http.get(f"/runs/{run_id}").json()
        return x if x["status"] in ("succeeded", "failed", "cancelled") else None

    done = wait_until("the run to finish", finished, 1800, interval=1)
    if done["status"] != "succeeded":
        failed = [i for i in done["items"] if i["state"] != "done"]
        print(f"run {run_id} {done['status']}: {failed[:3]}", file=sys.stderr)
    return run_id


def compare(server: Server, machines: list[str], runs: list[str]) -> list[dict[str, Any]]:
    r = server.http.get(
        "/compare", params={"machines": ",".join(machines), "baseline": machines[0], "runs": ",".join(runs)}
    )
    r.raise_for_status()
    return list(r.json()["rows"])


def verdicts(rows: list[dict[str, Any]], other: str) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        ratio = row["ratios"].get(other) or {}
        sig = ratio.get("significance") or {}
        out.append(
            {
                "kernel": row["kernel"],
                "ratio": ratio.get("ratio"),
                "ci": (ratio.get("ci_low"), ratio.get("ci_high")),
                "significant": bool(sig.get("significant")),
                "rule": sig.get("rule"),
                "cpu_bound": row["kernel"] in CPU_BOUND,
            }
        )
    return out


def screenshot(server: Server, path: str, name: str = "compare.png") -> None:
    """A README compare screenshot (docs/images/<name>), redone from a real comparison on this host (the
    A/A pair's by default), when Debian's Chromium and the frontend's node modules are here; skipped with
    a line otherwise."""
    script = ROOT / "frontend" / "scripts" / "shoot.mjs"
    if not Path("/usr/bin/chromium").exists() or not (ROOT / "frontend" / "node_modules").exists():
        print(
            "bench: no /usr/bin/chromium or frontend/node_modules: compare screenshot not redone",
            file=sys.stderr,
        )
        return
    out = ROOT / "docs" / "images" / name
    r = subprocess.run(
        ["node", str(script), server.base_url, path, str(out), "compare-row"],
        cwd=ROOT / "frontend",
        env={**os.environ, "CTXBENCH_TOKEN": server.admin_token},
        capture_output=True,
        text=True,
        timeout=120,
    )
    if r.returncode == 0:
        print(f"bench: wrote {out.relative_to(ROOT)}")
    else:
        print(f"bench: compare screenshot failed: {r.stderr[-500:]}", file=sys.stderr)


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


@contextlib.contextmanager
def pair(
    server: Server, tmp: Path, tag: str, wrap_b: list[str] | None = None, wrap_a: list[str] | None = None
) -> Iterator[tuple[str, str]]:
    """Two fresh agents (machines) for one comparison, so no machine carries runs of another scenario
    (compare learns a machine's noise from its own repeated runs); `wrap_a`/`wrap_b` prefix an agent's
    command (a cgroup, a seccomp filter), which its kernels inherit."""
    names = [f"{tag}-a", f"{tag}-b"]
    agents = [
        Agent(server, tmp / f"spool-{names[0]}", name=names[0], wrap=wrap_a),
        Agent(server, tmp / f"spool-{names[1]}", name=names[1], wrap=wrap_b),
    ]
    try:

        def online() -> dict[str, str] | None:
            m = {x["name"]: x["id"] for x in server.http.get("/machines").json() if x["online"]}
            return m if set(names) <= set(m) else None

        by_name = wait_until(f"agents {names} online", online, 120)
        yield by_name[names[0]], by_name[names[1]]
    finally:
        for a in agents:
            a.stop()


def _rows(v: list[dict[str, Any]], title: str) -> list[str]:
    out = [
        title,
        "",
        "| kernel | CPU-bound | ratio | CI | significant | rule |",
        "|---|:-:|---:|---|:-:|---|",
    ]
    out += [
        f"| `{x['kernel']}` | {'yes' if x['cpu_bound'] else 'no'} | {_fmt(x['ratio'])} | "
        f"{_fmt(x['ci'][0])}-{_fmt(x['ci'][1])} | {'yes' if x['significant'] else 'no'} | {x['rule']} |"
        for x in v
    ]
    return [*out, ""]


def aa(report: Out) -> int:
    lines: list[str] = []
    summary: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ctxbench-aa-") as tmp_dir, quota_cgroup(50) as wrap:
        tmp = Path(tmp_dir)
        (tmp / "data").mkdir()
        server = Server(tmp / "data")
        try:
            for tag, label, ctx in (
                ("aa1", "host as it is", contextlib.nullcontext()),
                ("aa2", "a build beside", build_beside()),
            ):
                with pair(server, tmp, tag) as (a_id, b_id):
                    load0 = Path("/proc/loadavg").read_text().split()[0]
                    with ctx:
                        runs = [run_on(server, a_id), run_on(server, b_id)]
                    v = verdicts(compare(server, [a_id, b_id], runs), b_id)
                    if tag == "aa1" and report.write:
                        screenshot(
                            server, f"/compare?machines={a_id},{b_id}&baseline={a_id}&runs={','.join(runs)}"
                        )
                flagged = [x for x in v if x["significant"]]
                summary.append(
                    f"| A/A, {label} | {load0} | {len(v)} | {len(flagged)} | "
                    + (", ".join(f"`{x['kernel']}` {_fmt(x['ratio'])}" for x in flagged) or "none")
                    + " |"
                )
                lines += _rows(v, f"A/A rows (B/A), {label}:")
            if wrap is not None:
                with pair(server, tmp, "q50", wrap_b=wrap) as (a_id, q_id):
                    load0 = Path("/proc/loadavg").read_text().split()[0]
                    runs = [run_on(server, a_id), run_on(server, q_id)]
                    v = verdicts(compare(server, [a_id, q_id], runs), q_id)
                cpu = [x for x in v if x["cpu_bound"]]
                slower = [x for x in cpu if x["significant"] and (x["ratio"] or 0) > 1]
                summary.append(
                    f"| 50 % CPU quota (B) vs none (A) | {load0} | {len(cpu)} CPU-bound | "
                    f"{len(slower)} of them significantly slower | "
                    f"ratios {', '.join(_fmt(x['ratio']) for x in cpu)} |"
                )
                lines += _rows(v, "Quota rows (B = its agent and kernels under a 50 % CPU quota, A none):")
        finally:
            server.stop()
    report.emit(
        "fidelity.md",
        "aa",
        [
            measured(),
            "Command: `scripts/bench.py aa` (part of `make bench`): three agents on this host, "
            f"{len(POINTS)} kernel points from every family, default profile, one machine after the other.",
            "",
            "| comparison | load (1 min) before | rows | flagged significant | which |",
            "|---|---:|---:|---:|---|",
            *summary,
            "",
            *lines,
        ],
    )
    return 0
