"""`make bench` orchestration section: what the server and agent add around a kernel.

Real processes (the same ones the end-to-end tests start, from tests/e2e/stack.py), one machine's clock.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from bench_common import Out, measured

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.stack import KERNELS_DIR, Agent, Server, post_run, wait_until  # noqa: E402

_KERNEL_START = re.compile(r'^time=(\S+) level=INFO msg="kernel starting".*run=(\S+)')


def _parse_slog_time(stamp: str) -> float:
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _kernel_start_time(agent: Agent, run_id: str, timeout: float = 30) -> float:
    def find() -> float | None:
        for line in list(agent.lines):
            m = _KERNEL_START.search(line)
            if m and m.group(2).strip('"') == run_id:
                return _parse_slog_time(m.group(1))
        return None

    return wait_until(f"the agent to start run {run_id}", find, timeout, interval=0.01)


class EventStream:
    """Reads a run's Server-Sent Events in a thread and timestamps each `result` event on arrival."""

    def __init__(self, server: Server, run_id: str) -> None:
        self.arrivals: list[tuple[float, dict]] = []
        self._t = threading.Thread(target=self._read, args=(server, run_id), daemon=True)
        self._t.start()

    def _read(self, server: Server, run_id: str) -> None:
        event = ""
        url = f"{server.base_url}/api/v1/runs/{run_id}/events"
        with httpx.stream("GET", url, headers=server.auth, timeout=60) as r:
            for line in r.iter_lines():
                if line.startswith("event:"):
                    event = line.split(":", 1)[1].strip()
                elif line.startswith("data:") and event == "result":
                    self.arrivals.append((time.time(), json.loads(line.split(":", 1)[1])))
                elif line.startswith("data:") and event == "end":
                    return

    def join(self, timeout: float) -> None:
        self._t.join(timeout)


def _proc_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _by_hand(kernel: str, min_time: float, reps: int) -> float:
    argv = [str(KERNELS_DIR / "ctxbench-kernels-cpp"), "--run", kernel]
    argv += ["--repetitions", str(reps), "--min-time", str(min_time)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return statistics.median(json.loads(out)["samples"])


@contextlib.contextmanager
def local_stack(name: str) -> Iterator[tuple[Server, Agent, dict]]:
    """A real server and one real agent in a temporary data dir; yields them and the agent's machine."""
    with tempfile.TemporaryDirectory(prefix=f"ctxbench-{name}-") as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        server = Server(data)
        agent = Agent(server, Path(tmp) / "spool", name=name)
        try:

            def ready() -> dict | None:
                # Online, and its kernel catalog stored (the machine row comes first, its kernels after).
                m = next((x for x in server.http.get("/machines").json() if x["online"]), None)
                kernels = server.http.get("/kernels").json()
                return m if m and any(m["id"] in k["machines"] for k in kernels) else None

            machine = wait_until("the agent online with its kernels", ready, 30)
            yield server, agent, machine
        finally:
            agent.stop()
            server.stop()


def orchestration(
    rounds: int,
    report: Out,
) -> int:
    with local_stack("bench") as (server, agent, machine):
        time.sleep(2)  # let connect-time work settle

        # Idle agent: connected, nothing to run, 60 s.
        cpu0, t0 = _proc_cpu_seconds(agent.proc.pid), time.monotonic()
        time.sleep(60)
        idle_cpu = (_proc_cpu_seconds(agent.proc.pid) - cpu0) / (time.monotonic() - t0) * 100
        idle_rss = _proc_rss_mb(agent.proc.pid)
        print(f"idle agent: {idle_cpu:.3f} % CPU over 60 s, RSS {idle_rss:.1f} MB", flush=True)

        trigger, result_lat, through_agent, by_hand = [], [], [], []
        for _ in range(rounds):
            by_hand.append(_by_hand("syscall.getppid", 0.2, 5))
            posted = time.time()
            run_id = post_run(
                server,
                machine["id"],
                [{"kernel": "syscall.getppid"}],
                repetitions=5,
                min_time_s=0.2,
                launches=1,  # the same one process as the by-hand run
            )["id"]
            events = EventStream(server, run_id)
            trigger.append(_kernel_start_time(agent, run_id) - posted)
            events.join(60)
            if not events.arrivals:
                raise RuntimeError(f"no result event for run {run_id}")
            arrived, res = events.arrivals[0]
            finished = dt.datetime.fromisoformat(res["finished_at"].replace("Z", "+00:00")).timestamp()
            result_lat.append(arrived - finished)
            through_agent.append(res["median"])
            print(
                f"round: trigger {trigger[-1] * 1000:.0f} ms, result {result_lat[-1] * 1000:.0f} ms, "
                f"agent {through_agent[-1]:.1f} vs hand {by_hand[-1]:.1f} ns/op",
                flush=True,
            )

    ms = lambda xs: f"{statistics.median(xs) * 1000:.0f} ms (max {max(xs) * 1000:.0f} ms)"  # noqa: E731
    agent_med, hand_med = statistics.median(through_agent), statistics.median(by_hand)
    diff = (agent_med - hand_med) / hand_med * 100
    report.emit(
        "performance.md",
        "orchestration",
        [
            measured(),
            f"Command: `make bench` (`scripts/bench.py orchestration --rounds {rounds}`), {rounds} rounds.",
            "",
            "| what | target | measured | how |",
            "|---|---|---|---|",
            f"| trigger latency: `POST /runs` → agent starts the kernel | ≤ 1 s | {ms(trigger)} "
            "| POST time vs the agent's `kernel starting` log time |",
            f"| result latency: kernel ends → result on the events stream | ≤ 1 s | {ms(result_lat)} "
            "| result `finished_at` vs arrival of the SSE `result` event |",
            f"| idle agent CPU over 60 s | ≈ 0 % | {idle_cpu:.3f} % | utime+stime from /proc |",
            f"| idle agent RSS | ≤ 20 MB | {idle_rss:.1f} MB | VmRSS |",
            f"| `syscall.getppid` through the agent vs by hand | within 1 % | {agent_med:.1f} vs "
            f"{hand_med:.1f} ns/op ({diff:+.1f} %) | medians of {rounds} interleaved rounds, 5 x 0.2 s |",
        ],
    )
    return 0


# The swept parameter of each kernel family (the issues' "x param"); other params keep their defaults.
SWEPT = ("threads", "goroutines", "coroutines", "depth", "block_size", "size", "processes")


def _suite_items(kernels: list[dict], machine_id: str) -> list[dict]:
    """Every kernel the machine has, each with the default sweep of its swept parameter."""
    items = []
    for k in sorted((k for k in kernels if machine_id in k["machines"]), key=lambda k: k["id"]):
        swept = [p["name"] for p in k["params"] if p["name"] in SWEPT and p.get("sweep")]
        items.append({"kernel": k["id"], "sweep": {swept[0]: "default"}} if swept else {"kernel": k["id"]})
    return items


def _run_suite(launches: int | None) -> tuple[dict, list[dict], float]:
    """POST the whole catalog as one run on a fresh local stack and wait for it: the finished run, its
    results and the seconds from POST to the run's end."""
    with local_stack("suite") as (server, _agent, machine):
        items = _suite_items(server.http.get("/kernels").json(), machine["id"])
        started = time.monotonic()
        body: dict[str, object] = {"machine_id": machine["id"], "items": items, "profile": "default"}
        if launches is not None:
            body["launches"] = launches
        r = server.http.post("/runs", json=body)
        if r.status_code != 201:
            print(f"bench: POST /runs answered {r.status_code}: {r.text[:2000]}", file=sys.stderr)
        r.raise_for_status()
        run = r.json()
        run = wait_until(
            "the suite to finish",
            lambda: (
                (x := server.http.get(f"/runs/{run['id']}").json())["status"]
                in ("succeeded", "failed", "cancelled")
                and x
            ),
            3600,
            interval=1,
        )
        took = time.monotonic() - started
        return run, server.http.get(f"/runs/{run['id']}/results").json(), took


# Issue 6's kernels (storage, IPC, everyday syscalls, cross-process locks), left out of the CPU and
# scheduling figure.
ISSUE6 = (
    "storage.",
    "ipc.",
    "lock.spin_shm",
    "lock.posix_sem",
    "lock.flock",
    "lock.fcntl",
    "lock.pthread_mutex_p",
    "syscall.open_close",
    "syscall.gettimeofday",
    "syscall.socket_close",
)


def _launch_figures(res: list[dict]) -> list[str]:
    """Disturbance lines: launches, disturbed, re-measured, still noisy, other processes' CPU share."""
    all_launches = [lr for r in res for lr in (r.get("launches") or [])]
    disturbed = sum(lr["disturbed"] for lr in all_launches)
    noisy = sum(bool(r.get("noisy")) for r in res)
    busy = sorted(lr["other_busy_frac"] or 0 for lr in all_launches) or [0.0]
    return [
        f"- launches: {len(all_launches)}, of them disturbed: {disturbed} "
        f"({100 * disturbed / max(1, len(all_launches)):.0f} %), re-measured: "
        f"{sum(r.get('reruns') or 0 for r in res)}; results still noisy after re-measuring: {noisy} of "
        f"{len(res)}",
        f"- other processes' share of the kernel's CPUs per launch: median "
        f"{100 * busy[len(busy) // 2]:.1f} %, "
        f"90th percentile {100 * busy[int(0.9 * (len(busy) - 1))]:.1f} %",
    ]


def suite(
    report: Out,
    launches: int | None = None,
) -> int:
    """Every kernel with its default sweep, through one agent, default profile: how long it takes, and
    how often launches were disturbed (the host's load is printed beside it)."""
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    run, res, took = _run_suite(launches)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    # Items' spans overlap (launches are interleaved): a kernel's time is its launches' wall time.
    secs: dict[str, float] = {}
    remeasured: dict[str, int] = {}
    for r in res:
        secs[r["kernel"]] = secs.get(r["kernel"], 0.0) + sum(
            lr["wall_s"] or 0 for lr in r.get("launches") or []
        )
        remeasured[r["kernel"]] = remeasured.get(r["kernel"], 0) + (r.get("reruns") or 0)
    cpu_sched = sum(v for k, v in secs.items() if not k.startswith(ISSUE6))
    dump = ROOT / "build" / "bench" / "suite-results.json"
    dump.parent.mkdir(parents=True, exist_ok=True)
    dump.write_text(json.dumps({"run": run, "results": res, "took_s": took}))
    slowest = sorted(secs.items(), key=lambda kv: -kv[1])[:12]
    per_kernel: dict[str, int] = {}
    for it in run["items"]:
        per_kernel[it["kernel"]] = per_kernel.get(it["kernel"], 0) + 1
    failed = [
        f"`{i['kernel']}` {i['params']}: {i['error']}" for i in run["items"] if i["state"] != "succeeded"
    ]
    section = "suite" if launches is None else f"suite-launches-{launches}"
    report.emit(
        "performance.md",
        section,
        [
            measured(),
            "Command: `make bench` (`scripts/bench.py suite`): one run of every kernel in the catalog, each "
            f"with its default sweep of {', '.join(SWEPT)} (other parameters at their defaults), default "
            f"profile ({run['repetitions']} repetitions in {run['launches']} launches per item, interleaved "
            f"round-robin, min time {run['min_time_s']} s), through one agent.",
            f"Host load average (1, 5, 15 min) before: {' '.join(load_before)}, "
            f"after: {' '.join(load_after)}.",
            "",
            f"- kernels: {len(per_kernel)}, items: {len(run['items'])}, status: {run['status']}",
            f"- wall time from POST to the run's end: **{took / 60:.1f} min** (target: ≤ 5 min)",
            f"- launches' wall time in all: {sum(secs.values()) / 60:.1f} min; the rest of the wall time "
            f"(the agent and server between launches, the kernels' exits and starts as the agent sees them) "
            f"{(took - sum(secs.values())) / 60:.1f} min",
            f"- kernel time of the CPU and scheduling kernels alone (issue 3's set, without storage, IPC, "
            f"everyday syscalls and cross-process locks): **{cpu_sched / 60:.1f} min**",
            *_launch_figures(res),
            f"- failed items: {len(failed)}"
            + ("" if not failed else "\n" + "\n".join(f"  - {f}" for f in failed)),
            "",
            "| kernel (slowest first) | items | launch seconds | re-measured launches |",
            "|---|---:|---:|---:|",
            *(f"| `{k}` | {per_kernel[k]} | {v:.1f} | {remeasured[k]} |" for k, v in slowest),
        ],
    )
    return 0 if not failed else 1
