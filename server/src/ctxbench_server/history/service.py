"""A kernel point over time on one machine, the machine's fact changes along it, and the steps that are
real (history/changes.py, each run weighed by its CI: history/run_cis.py), for one series or the fleet."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import anyio
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.compare import facts as facts_mod
from ctxbench_server.errors import NotFound, ValidationFailed, field_error
from ctxbench_server.history import changes
from ctxbench_server.history.run_cis import run_cis
from ctxbench_server.history.schemas import HistoryPoint
from ctxbench_server.lru import LRU
from ctxbench_server.models import Kernel, Machine, Result, Run
from ctxbench_server.stats import figure
from ctxbench_server.stats import summary as stats

# Points of one series looked at (the newest), and series and results a fleet-wide scan looks at.
MAX_POINTS = 200
MAX_SCAN_RESULTS = 200_000
MAX_CHANGES = 500
# Facts whose change between two runs is marked on the time axis. Whatever moves on its own between
# gatherings (load, clock speed, preflight's steal figure) is left out.
WATCHED_EXTRA = set(
    "microcode cpufreq_driver cpuidle_driver energy_perf_pref energy_perf_bias isolated_cpus nohz_full thp"
    " cgroup_cpu_max cgroup_cpuset cpu_quota numa_nodes sched_autogroup".split()
)


def series_filter(machine_id: str, kernel_id: str, params_key: str) -> tuple[Any, ...]:
    """The results that make one series: one machine, kernel and parameter point, measured (ok, with a
    median), as History and the alerts' checks read them."""
    return (
        Result.machine_id == machine_id,
        Result.kernel_id == kernel_id,
        Result.params_key == params_key,
        Result.status == "ok",
        Result.figure > 0,
    )


def watched(run_facts: Mapping[str, Any] | None, agent_version: str | None) -> dict[str, Any]:
    flat = facts_mod.flatten(run_facts)
    out = {
        k: v
        for k, v in flat.items()
        if (k in facts_mod.ORDER and k != "hostname")
        or k.startswith(("vulnerabilities.", "caches."))
        or (k.startswith("extra.") and k[len("extra.") :] in WATCHED_EXTRA)
    }
    if agent_version:
        out["agent_version"] = agent_version
    return out


def fact_changes(
    before: Mapping[str, Any], after: Mapping[str, Any], run_id: str, at: datetime
) -> list[dict[str, Any]]:
    """What changed from one run's watched facts to the next's. A fact unknown on one side (an older
    agent did not report it, or facts were not recorded) is not a change."""
    out = []
    for k in sorted(set(before) & set(after), key=facts_mod._order):
        if repr(before[k]) != repr(after[k]):
            out.append(
                {
                    "run_id": run_id,
                    "at": at,
                    "fact": k,
                    "before": before[k],
                    "after": after[k],
                    "hint": facts_mod.hint(k)
                    or ("A new agent version may measure differently." if k == "agent_version" else None),
                }
            )
    return out


def step_out(
    step: changes.Step, at: datetime, run_id: str, before_run_id: str, facts_changed: list[dict[str, Any]]
) -> dict[str, Any]:
    """A step as the API returns it: at the first run after it."""
    return {
        "at": at,
        "run_id": run_id,
        "before_run_id": before_run_id,
        "index": step.index,
        "before": step.before,
        "after": step.after,
        "ratio": step.ratio,
        "ci_low": step.ci_low,
        "ci_high": step.ci_high,
        "significant": step.significant,
        "significance": {
            "significant": step.significant,
            "rule": step.rule,
            "noise": step.noise,
            "noise_source": step.noise_source,
            "ci_level": changes.CI_LEVEL,
            "runs": [step.runs_before, step.runs_after],
            "busy": [step.busy_before, step.busy_after],
        },
        "facts_changed": facts_changed,
    }


async def _family(session: AsyncSession, kernel_id: str) -> str:
    spec = await session.scalar(select(Kernel.spec).where(Kernel.id == kernel_id))
    return str((spec or {}).get("family") or kernel_id.partition(".")[0])


async def points_of(session: AsyncSession, machine_id: str, kernel_id: str) -> list[dict[str, Any]]:
    """The kernel's parameter points on this machine: {params_key, params, runs, last_at}."""
    rows = await session.execute(
        select(Result.params_key, func.count(), func.max(Result.created_at), func.min(Result.id))
        .where(Result.machine_id == machine_id, Result.kernel_id == kernel_id, Result.status == "ok")
        .group_by(Result.params_key)
        .order_by(Result.params_key)
    )
    got = rows.all()
    params = {
        r.id: r.params
        for r in (
            await session.execute(select(Result.id, Result.params).where(Result.id.in_([g[3] for g in got])))
        )
    }
    return [
        {"params_key": k, "params": params.get(rid) or {}, "runs": n, "last_at": at} for k, n, at, rid in got
    ]


async def machine_or_404(session: AsyncSession, machine_id: str) -> Machine:
    machine = await session.get(Machine, machine_id)
    if machine is None:
        raise NotFound(f"unknown machine {machine_id!r}")
    return machine


def _pick_point(keys: list[dict[str, Any]], kernel_id: str, params_key: str | None) -> str:
    """The series' parameter point: the one given (it must have results), or the kernel's only one."""

    def refused(msg: str, type_: str) -> ValidationFailed:  # `params`, with the points it may name
        choices = [k["params_key"] for k in keys[:50]]
        return ValidationFailed([field_error(["query", "params"], msg, type_, choices=choices)])

    if params_key is None:
        if len(keys) > 1:
            raise refused(
                f"{kernel_id} has {len(keys)} parameter points on this machine: name one", "missing"
            )
        params_key = keys[0]["params_key"]
    elif params_key not in {k["params_key"] for k in keys}:
        raise refused(f"no successful result of {kernel_id} with these parameters on this machine", "unknown")
    return params_key


def _ci(r: Result) -> tuple[float | None, float | None, str | None]:
    return stats.stored_ci(
        r.id, r.samples, r.sample_launches, (r.ci_low, r.ci_high, r.ci_method), r.estimator
    )


def _point(r: Result) -> HistoryPoint:
    ci = _ci(r)
    return HistoryPoint(
        run_id=r.run_id,
        result_id=r.id,
        at=r.created_at,
        median=float(r.median or 0),  # (series reads median > 0 only)
        figure=float(r.figure if r.figure is not None else r.median or 0),
        figure_stat=figure.stat_of(r.estimator),
        ci_low=ci[0],
        ci_high=ci[1],
        ci_method=ci[2],
        n=r.n,
        n_launches=len(set(r.sample_launches)) if r.sample_launches else 1,
        unit=r.unit,
        agent_version=r.agent_version,
        noisy=r.noisy,
        disturbance=r.disturbance,
    )


async def series(
    session: AsyncSession, machine_id: str, kernel_id: str, params_key: str | None
) -> dict[str, Any]:
    machine = await machine_or_404(session, machine_id)
    keys = await points_of(session, machine_id, kernel_id)
    if not keys:
        raise ValidationFailed(
            [
                field_error(
                    ["query", "kernel"], f"no successful result of {kernel_id!r} on this machine", "unknown"
                )
            ]
        )
    params_key = _pick_point(keys, kernel_id, params_key)
    rows = (
        await session.execute(
            select(Result, Run.facts)
            .join(Run, Run.id == Result.run_id)
            .where(*series_filter(machine_id, kernel_id, params_key))
            .order_by(Result.created_at.desc(), Result.id.desc())
            .limit(MAX_POINTS + 1)
        )
    ).all()
    truncated = len(rows) > MAX_POINTS
    rows = list(reversed(rows[:MAX_POINTS]))
    await stats.prefill_cis([r for r, _ in rows])
    points = [_point(r) for r, _ in rows]
    marks: list[dict[str, Any]] = []
    by_index: dict[int, list[dict[str, Any]]] = {}
    prev: dict[str, Any] | None = None
    for i, (r, run_facts) in enumerate(rows):
        cur = watched(run_facts, r.agent_version)
        if prev is not None:
            got = fact_changes(prev, cur, r.run_id, r.created_at)
            marks.extend(got)
            by_index[i] = got
        prev = cur
    family = await _family(session, kernel_id)
    steps = await anyio.to_thread.run_sync(
        lambda: changes.detect(
            [p.figure for p in points],
            kernel_id,
            family,
            [p.run_id for p in points],
            [(p.ci_low, p.ci_high) for p in points],
            [p.disturbance for p in points],
        )
    )
    return {
        "machine": {"id": machine.id, "name": machine.name},
        "kernel": kernel_id,
        "family": family,
        "params_key": params_key,
        "params": next((k["params"] for k in keys if k["params_key"] == params_key), {}),
        "unit": points[-1].unit if points else "",
        "truncated": truncated,
        "points": points,
        "fact_changes": marks,
        "changes": [
            step_out(
                s,
                points[s.index].at,
                points[s.index].run_id,
                points[s.index - 1].run_id,
                by_index.get(s.index, []),
            )
            for s in steps
        ],
    }


# A series' steps only change when a result is added to it: cached by (series, newest result, count).
_steps: LRU[tuple[str, str, str, str, int], list[changes.Step]] = LRU(20_000)


def steps_key(key: tuple[str, str, str], rs: Sequence[Any]) -> tuple[str, str, str, str, int]:
    """A series' key in the steps cache: the series, its newest result, how many it has."""
    return (*key, rs[-1].id, len(rs))


def clear_cache() -> None:
    _steps.clear()


Series = dict[tuple[str, str, str], list[Any]]  # (machine, kernel, params key) -> its results, oldest first


async def _scan(session: AsyncSession, machine_ids: Sequence[str]) -> tuple[Series, bool]:
    """The newest MAX_SCAN_RESULTS measured results (of these machines), by series; and whether there
    were more."""
    q = (
        select(
            Result.id,
            Result.run_id,
            Result.machine_id,
            Result.kernel_id,
            Result.params_key,
            Result.params,
            Result.unit,
            Result.figure,
            Result.ci_low,
            Result.ci_high,
            Result.ci_method,
            Result.created_at,
            Result.disturbance,
        )
        .where(Result.status == "ok", Result.figure > 0)
        .order_by(Result.created_at.desc(), Result.id.desc())
        .limit(MAX_SCAN_RESULTS + 1)
    )
    if machine_ids:
        q = q.where(Result.machine_id.in_(machine_ids))
    rows = (await session.execute(q)).all()
    truncated = len(rows) > MAX_SCAN_RESULTS
    grouped: Series = {}
    for r in reversed(rows[:MAX_SCAN_RESULTS]):
        grouped.setdefault((r.machine_id, r.kernel_id, r.params_key), []).append(r)
    return grouped, truncated


def _detect_all(
    grouped: Series, families: dict[str, str], cis: Mapping[str, changes.RunCI]
) -> list[tuple[tuple[str, str, str], list[Any], changes.Step]]:
    """Every series' steps (cached while a series has no new result); cis by result id (run_cis)."""
    out: list[tuple[tuple[str, str, str], list[Any], changes.Step]] = []
    for key, rs in grouped.items():
        rs = rs[-MAX_POINTS:]
        if len(rs) < 2 * changes.MIN_SEGMENT:
            continue
        ck = steps_key(key, rs)
        steps = _steps.get(ck)
        if steps is None:
            fam = families.get(key[1]) or key[1].partition(".")[0]
            steps = changes.detect(
                [float(r.figure) for r in rs],
                key[1],
                fam,
                [r.run_id for r in rs],
                [cis.get(r.id, (None, None)) for r in rs],
                [r.disturbance for r in rs],
            )
            _steps.put(ck, steps)
        out.extend((key, rs, s) for s in steps)
    return out


async def fleet_changes(
    session: AsyncSession,
    machine_ids: Sequence[str],
    since: datetime | None,
    include_insignificant: bool,
    limit: int,
) -> dict[str, Any]:
    """Steps across every series (machine, kernel, params) of the newest MAX_SCAN_RESULTS results,
    newest first."""
    grouped, truncated = await _scan(session, machine_ids)
    families = {
        k: str((spec or {}).get("family") or k.partition(".")[0])
        for k, spec in (await session.execute(select(Kernel.id, Kernel.spec))).all()
    }

    # The runs' CIs only of the series whose detection is not cached: a missing one is a bootstrap.
    tails = [(k, rs[-MAX_POINTS:]) for k, rs in grouped.items()]
    cis = await run_cis(session, (r for k, rs in tails if _steps.get(steps_key(k, rs)) is None for r in rs))
    found = await anyio.to_thread.run_sync(_detect_all, grouped, families, cis)
    found = [
        f
        for f in found
        if (include_insignificant or f[2].significant)
        and (since is None or f[1][f[2].index].created_at >= since)
    ]
    found.sort(key=lambda f: (f[1][f[2].index].created_at, f[1][f[2].index].id), reverse=True)
    more = len(found) > limit
    found = found[:limit]
    run_ids = {rs[s.index].run_id for _, rs, s in found} | {rs[s.index - 1].run_id for _, rs, s in found}
    run_facts = {
        r.id: (r.facts, r.machine_id)
        for r in (await session.execute(select(Run.id, Run.facts, Run.machine_id).where(Run.id.in_(run_ids))))
    }
    versions = {
        r.id: r.agent_version
        for r in (
            await session.execute(
                select(Result.id, Result.agent_version).where(
                    Result.id.in_({rs[i].id for _, rs, s in found for i in (s.index - 1, s.index)})
                )
            )
        )
    }
    names = {m.id: m.name for m in (await session.execute(select(Machine.id, Machine.name))).all()}
    out = []
    for (mid, kernel_id, params_key), rs, s in found:
        a, b = rs[s.index - 1], rs[s.index]
        moved = fact_changes(
            watched(run_facts.get(a.run_id, (None, ""))[0], versions.get(a.id)),
            watched(run_facts.get(b.run_id, (None, ""))[0], versions.get(b.id)),
            b.run_id,
            b.created_at,
        )
        entry = step_out(s, b.created_at, b.run_id, a.run_id, moved)
        entry.update(
            machine_id=mid,
            machine_name=names.get(mid, mid),
            kernel=kernel_id,
            params_key=params_key,
            params=b.params or {},
            unit=b.unit,
        )
        out.append(entry)
    return {"changes": out, "more": more, "truncated": truncated}
