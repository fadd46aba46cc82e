"""make bench, section `noise`: run-to-run noise per kernel point, the default floors compare uses where a
machine has no runs to learn from (compare/noise_floors.json), and History's false alarms over those
runs of one unchanged host (issue 24). One fresh agent runs the A/A points of bench_aa, one run after the
other, beside a build, as a user repeating a run on a shared host would."""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_aa import FLOORS, POINTS, ROOT, Server, build_beside, compare, pair, run_on
from bench_common import Out, machine_line, measured, now_utc

# What a floor is the spread of: the runs' figures, p5 of short samples' repetitions (stats/figure.py).
FIGURE = "p5"


def _medians(server: Server, machine_id: str, run_id: str) -> dict[str, tuple[float, float]]:
    """Each point's (figure, CV of its samples) in one run: the figure, what compare compares (the
    median, or the p5 of short samples' repetitions: docs/architecture.md "Statistics")."""
    rows = compare(server, [machine_id], [run_id])
    cells = [(r, r["cells"].get(machine_id) or {}) for r in rows]
    return {
        f"{r['kernel']} {r['params_key']}".strip(): (float(c["figure"]), float(c.get("cv") or 0.0))
        for r, c in cells
        if c.get("figure")
    }


def _run_series(
    server: Server, machine_id: str, runs: int, into: dict[str, list[float]], cvs: dict[str, list[float]]
) -> None:
    """`runs` runs of the A/A points one after the other: each point's run medians (and CVs) appended."""
    for _ in range(runs):
        for point, (median, cv) in _medians(server, machine_id, run_on(server, machine_id)).items():
            into.setdefault(point, []).append(median)
            cvs.setdefault(point, []).append(cv)


def _changes(server: Server, machine_id: str, every: bool = False) -> list[dict[str, Any]]:
    """The steps History calls significant on the machine's series (GET /changes); every: all it tested."""
    r = server.http.get("/changes", params={"machines": machine_id, **({"all": "true"} if every else {})})
    r.raise_for_status()
    return list(r.json()["changes"])


def _repeat_runs(
    runs: int,
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, str], str, list[dict[str, Any]]]:
    """One fresh agent runs the A/A points `runs` times, one run after the other, beside a build (a shared
    host, where users run it; issue 24): per point its run medians and within-run CVs, each kernel's
    family, the load average once the build runs, and the steps History calls significant in those
    series (an unchanged host: every one is a false alarm)."""
    per_point: dict[str, list[float]] = {}
    cvs: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="ctxbench-noise-") as tmp_dir:
        tmp = Path(tmp_dir)
        (tmp / "data").mkdir()
        server = Server(tmp / "data")
        try:
            with pair(server, tmp, "noise") as (a_id, _b_id), build_beside():
                family_of = {k["id"]: k["family"] for k in server.http.get("/kernels").json()}
                time.sleep(5)  # let the build's compilers take the CPUs before the first run
                load0 = Path("/proc/loadavg").read_text().split()[0]
                _run_series(server, a_id, runs, per_point, cvs)
                steps = _changes(server, a_id)
        finally:
            server.stop()
    return per_point, cvs, family_of, load0, steps


def _floors(
    per_point: dict[str, list[float]], family_of: dict[str, str]
) -> tuple[dict[str, float], dict[str, float]]:
    """Each kernel's default floor, the largest spread among its points, and each family's (for its
    kernels not measured here), the largest of its measured kernels' (compare/significance.py)."""
    from ctxbench_server.compare.significance import spread

    floors: dict[str, float] = {}
    for point, meds in per_point.items():
        s = spread(meds)
        if s is not None:
            kernel = point.split(" ")[0]
            floors[kernel] = round(max(floors.get(kernel, 0.0), s), 3)
    families: dict[str, float] = {}
    for kernel, floor in floors.items():
        fam = family_of.get(kernel, kernel.split(".")[0])
        families[fam] = max(families.get(fam, 0.0), floor)
    return floors, families


def _record(measurement: dict[str, Any]) -> dict[str, Any]:
    """noise_floors.json with this measurement added: the newest FLOOR_MEASUREMENTS measurements, and the
    floors compare uses, each kernel's median over them (significance.combine_measurements)."""
    from ctxbench_server.compare.significance import FLOOR_MEASUREMENTS, combine_measurements

    old = json.loads(FLOORS.read_text()) if FLOORS.exists() else {}
    # Only measurements of today's figure (stats/figure.py): before it a floor was the spread of run
    # medians, a different quantity.
    measurement = {**measurement, "figure": FIGURE}
    same = [m for m in old.get("measurements", []) if m.get("figure") == FIGURE]
    measurements = [*same, measurement][-FLOOR_MEASUREMENTS:]
    floors, families = combine_measurements(measurements)
    return {
        "command": "scripts/bench.py noise",
        "rule": "per kernel (and family), the median of its floor over the newest measurements",
        "measured": measurement["measured"],
        "host": measurement["host"],
        "load_before": measurement["load_before"],
        "runs": measurement["runs"],
        "floors": floors,
        "families": families,
        "measurements": measurements,
    }


def noise(
    report: Out,
    runs: int = 8,
) -> int:
    """Run-to-run noise per kernel point: one fresh agent runs the A/A points `runs` times, one run after
    the other, as a user repeating a run would; per point the relative range of the run medians, the
    quantity compare learns from a machine's own repeated runs (compare/significance.py `spread`). The
    default floors (FLOORS there, from noise_floors.json) are the median of this table's floors and the
    measurements before it (`_record`)."""
    from ctxbench_server.compare.significance import spread

    per_point, cvs, family_of, load0, steps = _repeat_runs(runs)
    out = [
        measured(f"; load average before: {load0}"),
        f"Command: `scripts/bench.py noise` (part of `make bench`): one agent, {runs} runs of the "
        f"{len(POINTS)} A/A points one after the other, default profile (short samples), beside a build "
        "(one compiler loop per CPU); spread = (max - min) / median of the run medians.",
        "",
        "| kernel point | runs | min | median | max | spread | CV within a run (median of runs) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for point, meds in sorted(per_point.items()):
        s = spread(meds)
        out.append(
            f"| `{point}` | {len(meds)} | {min(meds):,.4g} | {statistics.median(meds):,.4g} | "
            f"{max(meds):,.4g} | {'-' if s is None else f'{100 * s:.1f} %'} | "
            f"{100 * statistics.median(cvs[point]):.1f} % |"
        )
    floors, families = _floors(per_point, family_of)
    measurement = {
        "measured": now_utc(),
        "host": machine_line(),
        "load_before": float(load0),
        "runs": runs,
        "floors": dict(sorted(floors.items())),
        "families": dict(sorted(families.items())),
    }
    record = _record(measurement)
    alarms = [f"`{c['kernel']}` {c['ratio']:.3f} ({c['significance']['noise_source']} noise)" for c in steps]
    out += [
        "",
        f"History over these {runs} runs of one unchanged host (GET /changes): {len(steps)} of "
        f"{len(per_point)} series with a significant step"
        + (": " + ", ".join(alarms) if alarms else "")
        + ".",
        "",
        "This measurement's floors: "
        + ", ".join(f"`{k}` {100 * v:.1f} %" for k, v in measurement["floors"].items()),
        "",
        f"Default floors (compare/noise_floors.json), the median over its {len(record['measurements'])} "
        f"newest measurements ({', '.join(m['measured'] for m in record['measurements'])}): "
        + ", ".join(f"`{k}` {100 * v:.1f} %" for k, v in record["floors"].items()),
    ]
    report.emit("performance.md", "noise-floor", out)
    if not report.write:
        return 0
    FLOORS.write_text(json.dumps(record, indent=2) + "\n")
    print(f"bench: wrote {FLOORS.relative_to(ROOT)}")
    return 0


def _busy(step: dict[str, Any]) -> str:
    b, a = step["significance"].get("busy", [None, None])
    if b is None or a is None:
        return "load not known"
    return f"other processes kept {100 * b:.0f} % -> {100 * a:.0f} % of the CPUs busy"


def phases(report: Out, quiet_runs: int = 4, busy_runs: int = 4) -> int:
    """History on one unchanged host whose load changes during the series (issue 24: "whether or not the
    load beside it changes during the series: no change flagged"): one fresh agent runs the A/A points
    `quiet_runs` times on the host as it is, then `busy_runs` times beside a build started between them.
    A step detector fed the host's load finds a step at exactly that boundary, in every series. Per point:
    each phase's median of run medians, their ratio, and whether History calls a change (GET /changes)."""
    with tempfile.TemporaryDirectory(prefix="ctxbench-phases-") as tmp_dir:
        tmp = Path(tmp_dir)
        (tmp / "data").mkdir()
        server = Server(tmp / "data")
        quiet: dict[str, list[float]] = {}
        busy: dict[str, list[float]] = {}
        try:
            with pair(server, tmp, "phases") as (a_id, _b_id):
                load_quiet = Path("/proc/loadavg").read_text().split()[0]
                _run_series(server, a_id, quiet_runs, quiet, {})
                with build_beside():
                    time.sleep(5)  # let the build's compilers take the CPUs before the first run
                    load_busy = Path("/proc/loadavg").read_text().split()[0]
                    _run_series(server, a_id, busy_runs, busy, {})
                steps = _changes(server, a_id)
                held = [
                    c
                    for c in _changes(server, a_id, every=True)
                    if c["significance"]["rule"] == "load_changed"
                ]
        finally:
            server.stop()
    flagged = {c["kernel"] for c in steps}
    out = [
        measured(f"; load average (1 min) before the quiet phase: {load_quiet}, with the build: {load_busy}"),
        f"Command: `scripts/bench.py phases` (part of `make bench`): one agent, {len(POINTS)} A/A points, "
        f"default profile; {quiet_runs} runs one after the other on the host as it is, then {busy_runs} "
        "beside a build (one compiler loop per CPU) started between them; History's verdict over the "
        f"{quiet_runs + busy_runs} runs (GET /changes). Ratio = the busy phase's median of run medians over "
        "the quiet phase's.",
        "",
        f"- series with a change flagged: **{len(steps)}** of {len(quiet)} (target 0)"
        + (": " + ", ".join(f"`{c['kernel']}` {c['ratio']:.3f}" for c in steps) if steps else ""),
        f"- steps History's test passed that the load explains (`load_changed`, not flagged): **{len(held)}**"
        + (": " + ", ".join(f"`{c['kernel']}` {c['ratio']:.3f} ({_busy(c)})" for c in held) if held else ""),
        "",
        "| kernel point | quiet: median (runs) | beside the build: median (runs) | ratio | change flagged |",
        "|---|---:|---:|---:|:-:|",
    ]
    for point in sorted(quiet):
        q, b = quiet[point], busy.get(point, [])
        if not b:
            continue
        mq, mb = statistics.median(q), statistics.median(b)
        out.append(
            f"| `{point}` | {mq:,.4g} ({len(q)}) | {mb:,.4g} ({len(b)}) | {mb / mq:.3f} | "
            f"{'yes' if point.split(' ')[0] in flagged else 'no'} |"
        )
    report.emit("fidelity.md", "phases", out)
    return 0 if not steps else 1
