"""GET /compare: each machine's results per (kernel, params_key), side by side, against a baseline.

SQL cost is bounded whatever the number of machines and kernels: at most one statement each for the
runs named by `runs`/`batch`, the machines, the kernel catalog, the latest-result pointers, the results
of restricted runs, and the facts snapshots. Nothing is queried per cell.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Row, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.compare import facts, ratios
from ctxbench_server.kit.errors import NotFound, ValidationFailed, field_error
from ctxbench_server.models import Kernel, LatestResult, Machine, Result, Run

MAX_MACHINES = 20
MAX_LIST = 1000  # kernels or runs named in one request
NOISY_CV = 0.03


@dataclass
class CompareQuery:
    machines: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)  # ids, or prefixes ending in ".*"
    baseline: str | None = None
    runs: list[str] = field(default_factory=list)
    batch: str | None = None


class UnknownMachine(NotFound):
    """A machine id that is not stored."""

    def __init__(self, machine_id: str, index: int) -> None:
        super().__init__(f"machine {machine_id!r} not found")
        self.machine_id = machine_id
        self.index = index


COLUMNS = (
    Result.id,
    Result.run_id,
    Result.machine_id,
    Result.kernel_id,
    Result.params,
    Result.params_key,
    Result.unit,
    Result.samples,
    Result.n,
    Result.median,
    Result.ci_low,
    Result.ci_high,
    Result.cv,
    Result.noisy,
    Result.created_at,
)


def split_list(value: str | Sequence[str] | None) -> list[str]:
    """A comma list (or a list of them) without blanks and repeats, in order."""
    if value is None:
        return []
    parts = value.split(",") if isinstance(value, str) else [p for v in value for p in str(v).split(",")]
    out: list[str] = []
    for p in parts:
        p = p.strip()
        if p and p not in out:
            out.append(p)
    return out


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat().replace("+00:00", "Z")


def _param_sort_key(params: Mapping[str, Any]) -> tuple[Any, ...]:
    out: list[tuple[str, int, float, str]] = []
    for name in sorted(params):
        v = params[name]
        if isinstance(v, bool) or not isinstance(v, int | float):
            out.append((name, 1, 0.0, str(v)))
        else:
            out.append((name, 0, float(v), ""))
    return tuple(out)


def _resolve_kernels(
    wanted: list[str], specs: Mapping[str, Mapping[str, Any]], loc: list[str | int]
) -> list[str] | None:
    """Kernel ids the filter names (None: no filter). Unknown ids and prefixes are 422s."""
    if not wanted:
        return None
    out: set[str] = set()
    errors = []
    for i, k in enumerate(wanted):
        if k.endswith(".*"):
            prefix = k[:-1]
            hits = [kid for kid in specs if kid.startswith(prefix)]
            if not hits:
                errors.append(
                    field_error(
                        [*loc, "kernels", i], f"no kernel id starts with {prefix!r}", "unknown_kernel"
                    )
                )
            out.update(hits)
        elif k in specs:
            out.add(k)
        else:
            errors.append(field_error([*loc, "kernels", i], f"unknown kernel {k!r}", "unknown_kernel"))
    if errors:
        raise ValidationFailed(errors)
    return sorted(out)


async def compare(
    session: AsyncSession, q: CompareQuery, online: set[str], loc: Sequence[str | int] = ("query",)
) -> dict[str, Any]:
    loc = list(loc)
    machine_ids = split_list(q.machines)
    wanted_kernels = split_list(q.kernels)
    run_ids = split_list(q.runs)
    if len(machine_ids) > MAX_MACHINES:
        raise ValidationFailed(
            [field_error([*loc, "machines"], f"at most {MAX_MACHINES} machines", "too_many_machines")]
        )
    if len(wanted_kernels) > MAX_LIST or len(run_ids) > MAX_LIST:
        field_name = "kernels" if len(wanted_kernels) > MAX_LIST else "runs"
        raise ValidationFailed([field_error([*loc, field_name], f"at most {MAX_LIST} entries", "too_long")])

    warnings: list[dict[str, Any]] = []

    # Runs named by `runs` or `batch`: one statement for both.
    restricted: dict[str, set[str]] = {}  # machine -> its runs to use
    if run_ids or q.batch:
        conds: list[ColumnElement[bool]] = []
        if run_ids:
            conds.append(Run.id.in_(run_ids))
        if q.batch:
            conds.append(Run.batch_id == q.batch)
        found = (
            await session.execute(
                select(Run.id, Run.machine_id, Run.batch_id)
                .where(or_(*conds))
                .order_by(Run.created_at, Run.id)
            )
        ).all()
        known = {run.id for run in found}
        bad = [
            field_error([*loc, "runs", i], f"unknown run {rid!r}", "unknown_run")
            for i, rid in enumerate(run_ids)
            if rid not in known
        ]
        if q.batch and not any(run.batch_id == q.batch for run in found):
            bad.append(field_error([*loc, "batch"], f"unknown batch {q.batch!r}", "unknown_batch"))
        if bad:
            raise ValidationFailed(bad)
        if not machine_ids and q.batch:  # a batch names its machines
            for run in found:
                if run.batch_id == q.batch and run.machine_id not in machine_ids:
                    machine_ids.append(run.machine_id)
        for run in found:
            if run.id in run_ids or run.batch_id == q.batch:
                restricted.setdefault(run.machine_id, set()).add(run.id)
        for m in sorted(set(restricted) - set(machine_ids)):
            warnings.append({"message": f"runs of machine {m!r} are ignored: it is not compared"})
            del restricted[m]
        if q.batch:
            for m in machine_ids:
                if m not in restricted:
                    warnings.append(
                        {
                            "message": f"machine {m!r} has no run in batch {q.batch!r}:"
                            " its latest results are used"
                        }
                    )

    if not machine_ids:
        raise ValidationFailed([field_error([*loc, "machines"], "name at least one machine", "missing")])
    baseline = q.baseline or machine_ids[0]
    if baseline not in machine_ids:
        raise ValidationFailed(
            [
                field_error(
                    [*loc, "baseline"], f"baseline {baseline!r} is not among the machines", "not_compared"
                )
            ]
        )

    machines = {m.id: m for m in (await session.scalars(select(Machine).where(Machine.id.in_(machine_ids))))}
    for i, mid in enumerate(machine_ids):
        if mid not in machines:
            raise UnknownMachine(mid, i)

    specs: dict[str, dict[str, Any]] = {
        kid: spec for kid, spec in (await session.execute(select(Kernel.id, Kernel.spec))).all()
    }
    kernel_filter = _resolve_kernels(wanted_kernels, specs, loc)

    # Results: the latest pointers for unrestricted machines, the newest per point of the named runs for
    # the others.
    results: list[Row[Any]] = []
    free = [m for m in machine_ids if m not in restricted]
    if free:
        stmt = (
            select(*COLUMNS)
            .select_from(LatestResult)
            .join(Result, Result.id == LatestResult.result_id)
            .where(LatestResult.machine_id.in_(free))
        )
        if kernel_filter is not None:
            stmt = stmt.where(LatestResult.kernel_id.in_(kernel_filter))
        results.extend((await session.execute(stmt)).all())
    if restricted:
        rank = (
            func.row_number()
            .over(
                partition_by=(Result.machine_id, Result.kernel_id, Result.params_key),
                order_by=(Result.created_at.desc(), Result.id.desc()),
            )
            .label("rn")
        )
        inner = select(*COLUMNS, rank).where(
            Result.run_id.in_(sorted(set().union(*restricted.values()))),
            Result.status == "ok",
            Result.median.is_not(None),
        )
        if kernel_filter is not None:
            inner = inner.where(Result.kernel_id.in_(kernel_filter))
        ranked = inner.subquery()
        results.extend((await session.execute(select(ranked).where(ranked.c.rn == 1))).all())

    # Facts: the snapshot of the run each machine's newest result came from, else its current facts.
    newest: dict[str, Row[Any]] = {}
    for r in results:
        if r.machine_id not in newest or r.created_at > newest[r.machine_id].created_at:
            newest[r.machine_id] = r
    snapshots: dict[str, dict[str, Any] | None] = {}
    if newest:
        wanted_runs = {r.run_id for r in newest.values()}
        snapshots = dict(
            (await session.execute(select(Run.id, Run.facts).where(Run.id.in_(wanted_runs)))).all()
        )
    machine_facts: dict[str, dict[str, Any]] = {}
    facts_run: dict[str, str | None] = {}
    for mid in machine_ids:
        snap = snapshots.get(newest[mid].run_id) if mid in newest else None
        machine_facts[mid] = snap if snap else machines[mid].facts
        facts_run[mid] = newest[mid].run_id if snap else None

    return _assemble(
        machine_ids, baseline, machines, machine_facts, facts_run, online, specs, results, warnings
    )


def _cell(r: Row[Any]) -> dict[str, Any]:
    return {
        "result_id": r.id,
        "run_id": r.run_id,
        "median": r.median,
        "ci_low": r.ci_low,
        "ci_high": r.ci_high,
        "n": r.n,
        "cv": r.cv,
        "noisy": bool(r.noisy) or (r.cv is not None and r.cv > NOISY_CV),
        "samples": r.samples,
        "created_at": _iso(r.created_at),
    }


def _assemble(
    machine_ids: list[str],
    baseline: str,
    machines: Mapping[str, Machine],
    machine_facts: Mapping[str, dict[str, Any]],
    facts_run: Mapping[str, str | None],
    online: set[str],
    specs: Mapping[str, Mapping[str, Any]],
    results: list[Row[Any]],
    warnings: list[dict[str, Any]],
) -> dict[str, Any]:
    points: dict[tuple[str, str], dict[str, Row[Any]]] = {}
    for r in results:
        points.setdefault((r.kernel_id, r.params_key), {})[r.machine_id] = r

    rows = []
    # Per machine, log ratios in the "lower is better" direction, overall and per family.
    logs: dict[str, list[float]] = {m: [] for m in machine_ids}
    logs_by_family: dict[str, dict[str, list[float]]] = {}
    for kernel_id, params_key in sorted(
        points, key=lambda p: (p[0], _param_sort_key(next(iter(points[p].values())).params), p[1])
    ):
        cells = points[(kernel_id, params_key)]
        spec = specs.get(kernel_id) or {}
        family = str(spec.get("family") or kernel_id.partition(".")[0])
        base = cells.get(baseline)
        first = base if base is not None else cells[next(m for m in machine_ids if m in cells)]
        unit = first.unit
        units = {m: cells[m].unit for m in machine_ids if m in cells}
        row: dict[str, Any] = {
            "kernel": kernel_id,
            "family": family,
            "params": first.params,
            "params_key": params_key,
            "unit": unit,
            "higher_is_better": ratios.higher_is_better(unit),
            "cells": {m: _cell(cells[m]) for m in machine_ids if m in cells},
            "ratios": {},
            "seed_reference": spec.get("seed_reference"),
            "warning": None,
        }
        if len(set(units.values())) > 1:
            label = f"{kernel_id} {params_key}".strip()
            message = (
                f"{label}: units differ ("
                + ", ".join(f"{machines[m].name or m}: {u or 'none'}" for m, u in units.items())
                + "); no ratio"
            )
            row["units"] = units
            row["warning"] = message
            warnings.append({"row": label, "kernel": kernel_id, "params_key": params_key, "message": message})
        elif base is not None:
            fam_logs = logs_by_family.setdefault(family, {m: [] for m in machine_ids})
            for m in machine_ids:
                c = cells.get(m)
                if c is None:
                    continue
                rr = (
                    ratios.BASELINE
                    if m == baseline
                    else ratios.cached(c.id, c.samples, base.id, base.samples)
                )
                row["ratios"][m] = rr.as_dict()
                if rr.ratio is not None and rr.ratio > 0:
                    lg = math.log(rr.ratio)
                    if row["higher_is_better"]:
                        lg = -lg
                    logs[m].append(lg)
                    fam_logs[m].append(lg)
        rows.append(row)

    def mean_exp(values: list[float]) -> float | None:
        return math.exp(sum(values) / len(values)) if values else None

    return {
        "machines": [
            {
                "id": m,
                "name": machines[m].name,
                "hostname": machines[m].hostname,
                "online": m in online,
                "facts": machine_facts[m],
                "facts_run_id": facts_run[m],
            }
            for m in machine_ids
        ],
        "baseline": baseline,
        "rows": rows,
        "geomean": {m: mean_exp(v) for m, v in logs.items()},
        "geomean_by_family": {
            fam: {m: mean_exp(v) for m, v in per.items()} for fam, per in sorted(logs_by_family.items())
        },
        "geomean_direction": "time: > 1 is slower than the baseline (throughput ratios are inverted first)",
        "facts_diff": facts.diff({m: machine_facts[m] for m in machine_ids}),
        "result_ids": sorted({r.id for r in results}),
        "warnings": warnings,
    }
