"""make bench, section `alerts`: does an unchanged host, run on a schedule beside a build, open alerts?
(issue 28, "Tests and figures": "an unchanged series over ≥ 20 scheduled runs beside a build opens none")

A real server (SQLite, a fresh data dir, CTXBENCH_ENV=dev so that a schedule may fire every INTERVAL_S
seconds) and one real agent. Beside a build (bench_aa.build_beside: one compiler loop per CPU), a
schedule on that machine runs a handful of kernel points from different families until each has RUNS
succeeded runs; then the alert watcher is given its settle time and the alerts are counted: nothing on
the host changed, so every alert is a false one (target 0). Per point, the run-to-run spread of the run
medians and the steps History's rule considered (GET /history: every candidate, tested), how uncertain
the runs themselves were (their CIs) and how much the host disturbed them, and the load average over the
series. The table goes to docs/fidelity.md (marker `alerts`); the server's database is kept as
build/bench-alerts.db for a closer look at any alert."""

from __future__ import annotations

import math
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_aa import build_beside
from bench_common import Out, measured

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.stack import TERMINAL, Agent, Server, wait_until  # noqa: E402

# One point from each of six families: C++ calls, syscalls, a context switch, a lock, Go, Python.
POINTS: list[dict[str, Any]] = [
    {"kernel": "call.function"},
    {"kernel": "syscall.getppid"},
    {"kernel": "ctxswitch.pipe", "params": {"placement": "same_core"}},
    {"kernel": "lock.pthread_mutex"},
    {"kernel": "channel.pingpong"},
    {"kernel": "coroutine.py_generator"},
]
# The default profile's sampling (0.5 ms samples, blocks of 0.04 s, 2 repetitions a launch) in 3 launches
# (the quick profile's count) rather than its 7, so that a run of the six points fits its 15 s period
# beside a build on a 2-CPU host (7 launches take about as long as the period). With 3 launches a run's
# CI is the min-max of its 6 samples.
SPEC: dict[str, Any] = {"profile": "default", "launches": 3, "repetitions": 6}
INTERVAL_S = 15
RUNS = 20
SETTLE_S = 2.0  # CTXBENCH_ALERT_SETTLE_S, the server's default; the checks end this long after a result
KEPT_DB = ROOT / "build" / "bench-alerts.db"
DEADLINE_S = 1200  # the series gives up (and says so) if RUNS succeeded runs take longer than this


def _start(tmp: Path) -> tuple[Server, Agent, str]:
    """The server with dev schedule settings and one agent, online with its catalog."""
    server = Server(
        tmp / "data",
        env="dev",
        schedule_tick_s="0.5",
        schedule_min_interval_s=str(INTERVAL_S),
        alert_settle_s=str(SETTLE_S),
    )
    agent = Agent(server, tmp / "agent" / "spool", name="alerts-host")
    wanted = {p["kernel"] for p in POINTS}

    def online() -> str | None:
        for m in server.http.get("/machines").json():
            if m["online"] and m["name"] == "alerts-host" and wanted <= set(m["kernels"]):
                return str(m["id"])
        return None

    return server, agent, wait_until("the agent online with its catalog", online, 120)


def _runs(server: Server, sid: str) -> list[dict[str, Any]]:
    got = server.http.get("/runs", params={"limit": 500, "items": "false"}).json()
    return sorted((r for r in got if r["schedule_id"] == sid), key=lambda r: r["created_at"])


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def _series(server: Server, machine: str) -> dict[str, Any]:
    """Schedules the points beside a build until each has RUNS succeeded runs; the schedule, its runs,
    the 1-min load averages seen every few seconds, and the series' wall time."""
    loads: list[float] = []
    with build_beside():
        time.sleep(5)  # the compilers take the CPUs before the first slot
        body = {
            "name": "unchanged host, every few seconds",
            "run": {"items": POINTS, **SPEC},
            "machine_ids": [machine],
            "interval_s": INTERVAL_S,
        }
        r = server.http.post("/schedules", json=body)
        if r.status_code != 201:
            raise RuntimeError(f"POST /schedules answered {r.status_code}: {r.text[:2000]}")
        created = r.json()
        sid = created["id"]
        t0 = time.monotonic()
        print(f"bench: schedule {sid} every {INTERVAL_S} s, first slot {created['next_due_at']}", flush=True)
        done = 0
        while done < RUNS and time.monotonic() - t0 < DEADLINE_S:
            time.sleep(3)
            loads.append(_load())
            runs = _runs(server, sid)
            now = sum(x["status"] == "succeeded" for x in runs)
            if now != done:
                print(f"bench: {now} runs succeeded of {len(runs)} made, load {loads[-1]}", flush=True)
            done = now
        paused_at = datetime.now(UTC)
        r = server.http.post(f"/schedules/{sid}/pause")
        r.raise_for_status()

        def idle() -> list[dict[str, Any]] | None:
            loads.append(_load())
            runs = _runs(server, sid)
            return runs if all(x["status"] in TERMINAL for x in runs) else None

        runs = wait_until("the schedule's last run to finish", idle, 300, interval=2)
        wall = time.monotonic() - t0
    first = datetime.fromisoformat(created["next_due_at"])
    slots = 1 + int((paused_at - first).total_seconds() // INTERVAL_S)
    return {"id": sid, "runs": runs, "loads": loads, "wall_s": wall, "slots": max(slots, 0)}


Disturbed = dict[tuple[str, str], list[float]]  # (kernel, params key) -> each run's disturbed share


def _disturbed(server: Server, runs: list[dict[str, Any]]) -> Disturbed:
    """Per (kernel, params key), each run's share of short samples the host disturbed."""
    out: Disturbed = {}
    for run in runs:
        r = server.http.get(f"/runs/{run['id']}/results")
        r.raise_for_status()
        for res in r.json():
            share = (res.get("interference") or {}).get("disturbed_frac")
            if share is not None:
                out.setdefault((res["kernel"], res["params_key"]), []).append(float(share))
    return out


def _keep(db: Path) -> None:
    """The server's database (stopped) copied to KEPT_DB."""
    KEPT_DB.parent.mkdir(exist_ok=True)
    KEPT_DB.unlink(missing_ok=True)
    with sqlite3.connect(db) as src, sqlite3.connect(KEPT_DB) as dst:
        src.backup(dst)


def _point_name(h: dict[str, Any]) -> str:
    return f"{h['kernel']} {h['params_key']}".strip()


def _histories(server: Server, machine: str) -> list[dict[str, Any]]:
    """GET /history of each point's series on the machine (its runs' medians and every candidate step)."""
    out = []
    for p in POINTS:
        points = server.http.get("/history/points", params={"machine": machine, "kernel": p["kernel"]})
        points.raise_for_status()
        for key in points.json():
            r = server.http.get(
                "/history", params={"machine": machine, "kernel": p["kernel"], "params": key["params_key"]}
            )
            r.raise_for_status()
            out.append(r.json())
    return out


def _step_cell(step: dict[str, Any] | None) -> str:
    if step is None:
        return "none"
    s = step["significance"]
    return (
        f"{step['ratio']:.3f} ({step['ci_low']:.3f}-{step['ci_high']:.3f}) at run {step['index'] + 1}, "
        f"noise {100 * s['noise']:.1f} % ({s['noise_source']}), {s['rule']}"
    )


def _pct_range(xs: list[float]) -> str:
    return f"{100 * statistics.median(xs):.0f} % ({100 * min(xs):.0f}-{100 * max(xs):.0f})" if xs else "-"


def _rows(histories: list[dict[str, Any]], alerts: list[dict[str, Any]], disturbed: Disturbed) -> list[str]:
    from ctxbench_server.compare.significance import spread

    out = [
        "| kernel point | family | runs | median | min - max | spread | run CI width: median (min-max) "
        "| disturbed samples: median (min-max) | candidate steps | largest candidate: ratio (CI), where, "
        "noise, rule | alerts |",
        "|---|---|---:|---:|---|---:|---|---|---:|---|---:|",
    ]
    for h in sorted(histories, key=_point_name):
        meds = [p["figure"] for p in h["points"]]
        widths = [
            (p["ci_high"] - p["ci_low"]) / p["figure"]
            for p in h["points"]
            if p["ci_low"] is not None and p["ci_high"] is not None
        ]
        s = spread(meds)
        steps = h["changes"]
        big = max(steps, key=lambda x: abs(math.log(x["ratio"])), default=None)
        opened = sum(a["kernel"] == h["kernel"] and a["params_key"] == h["params_key"] for a in alerts)
        out.append(
            f"| `{_point_name(h)}` | {h['family']} | {len(meds)} | "
            f"{statistics.median(meds):,.4g} {h['unit']} | "
            f"{min(meds):,.4g} - {max(meds):,.4g} | {'-' if s is None else f'{100 * s:.1f} %'} | "
            f"{_pct_range(widths)} | {_pct_range(disturbed.get((h['kernel'], h['params_key']), []))} | "
            f"{len(steps)} | {_step_cell(big)} | {opened} |"
        )
    return out


def _alert_lines(alerts: list[dict[str, Any]]) -> list[str]:
    """Each alert as the rule saw it: the series, the ratio and its CI, the noise and the runs tested."""
    out = []
    for a in alerts:
        s = a["significance"]
        out.append(
            f"- `{a['kernel']} {a['params_key']}`: {a['summary']}; ratio {a['ratio']:.3f} (CI "
            f"{a['ci_low']:.3f}-{a['ci_high']:.3f}), before {a['before']:,.4g} after {a['after']:,.4g} "
            f"{a['unit']}, noise {100 * s['noise']:.1f} % ({s['noise_source']}), rule {s['rule']}, runs "
            f"{s['runs'][0]} before / {s['runs'][1]} after, opened {a['opened_at']}, state {a['state']}."
        )
    return out


def alerts(report: Out) -> int:
    load0 = Path("/proc/loadavg").read_text().split()[:3]
    with tempfile.TemporaryDirectory(prefix="ctxbench-alerts-") as tmp_dir:
        tmp = Path(tmp_dir)
        (tmp / "data").mkdir()
        (tmp / "agent").mkdir()
        server, agent = None, None
        try:
            server, agent, machine = _start(tmp)
            series = _series(server, machine)
            time.sleep(SETTLE_S + 3)  # the last results' series checked by the watcher
            r = server.http.get("/alerts", params={"machine": machine, "limit": 500})
            r.raise_for_status()
            found = list(r.json())
            histories = _histories(server, machine)
            disturbed = _disturbed(server, [x for x in series["runs"] if x["status"] == "succeeded"])
        finally:
            if agent is not None:
                agent.stop()
            if server is not None:
                server.stop()
                _keep(tmp / "data" / "ctxbench.db")
    runs = series["runs"]
    ok_runs = [x for x in runs if x["status"] == "succeeded"]
    loads = series["loads"]
    per_point = min((len(h["points"]) for h in histories), default=0)
    target = not found and per_point >= RUNS
    lines = [
        measured(f"; load average (1, 5, 15 min) before: {' '.join(load0)}"),
        "Command: `scripts/bench.py alerts` (part of `make bench`): a real server (SQLite, fresh data dir, "
        f"CTXBENCH_ENV=dev for a {INTERVAL_S} s schedule, alert settle time {SETTLE_S:g} s) and one real "
        f"agent; beside a build (one compiler loop per CPU) a schedule every {INTERVAL_S} s runs "
        f"{len(POINTS)} kernel points (the default profile's 0.5 ms samples in blocks of 0.04 s, but "
        f"{SPEC['launches']} launches of {SPEC['repetitions'] // SPEC['launches']} repetitions, not 7) until "
        f"each has {RUNS} succeeded runs; then the open alerts are counted. Spread = (max - min) / median of "
        "a point's run medians; run CI width = (ci_high - ci_low) / median of each run's result (with 3 "
        "launches, the min-max of its samples); disturbed samples = the share of a run's short samples "
        "the host disturbed (`interference.disturbed_frac`).",
        "",
        f"- alerts opened: **{len(found)}** (target 0)",
        f"- runs: {len(ok_runs)} succeeded of {len(runs)} made, {series['slots']} slots in "
        f"{series['wall_s'] / 60:.1f} min (a slot whose run of the slot before still ran is skipped)",
        f"- load average (1 min) during the series, sampled every 3 s: min {min(loads):.2f}, median "
        f"{statistics.median(loads):.2f}, max {max(loads):.2f}",
        f"- verdict: {'pass' if target else 'fail'}",
        "",
        *_rows(histories, found, disturbed),
    ]
    if found:
        lines += ["", "Alerts opened on the unchanged host (each a false alarm):", *_alert_lines(found)]
    report.emit("fidelity.md", "alerts", lines)
    return 0 if target else 1
