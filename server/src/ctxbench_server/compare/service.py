"""GET /compare: each machine's results per (kernel, params_key), side by side, against a baseline.

SQL cost is bounded whatever the number of machines and kernels: at most one statement each for the
runs named by `runs`/`batch`, the machines, the kernel catalog, the latest-result pointers, the results
of restricted runs, and the facts snapshots. Nothing is queried per cell.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import ColumnElement, Row, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from ctxbench_server.compare import facts, ratios, sides
from ctxbench_server.compare import significance as sig
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
    sides: str | None = None  # "label:run,run;label:run" (compare/sides.py)


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
    Result.sample_launches,
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
    return list(dict.fromkeys(p.strip() for p in parts if p.strip()))  # ordered, O(n)


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat().replace("+00:00", "Z")


def param_sort_key(params: Mapping[str, Any]) -> tuple[Any, ...]:
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
    session: AsyncSession,
    q: CompareQuery,
    online: set[str],
    loc: Sequence[str | int] = ("query",),
    fragments: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The compare answer. With `fragments`, each cell is a placeholder string and `fragments` gets the
    cell's JSON by placeholder: `render` puts them together (GET /compare; shares store the plain dict)."""
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
    if q.sides:
        if machine_ids or run_ids or q.batch:
            raise ValidationFailed(
                [
                    field_error(
                        [*loc, "sides"], "compare either machines (with runs or a batch) or sides", "conflict"
                    )
                ]
            )
        return await _compare_sides(
            session, sides.parse(q.sides, loc), q, wanted_kernels, online, loc, fragments
        )

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
    if len(machine_ids) > MAX_MACHINES:  # a batch of more machines, named by `batch` alone
        raise ValidationFailed(
            [field_error([*loc, "machines"], f"at most {MAX_MACHINES} machines", "too_many_machines")]
        )
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

    # Result ids: the latest pointers for unrestricted machines, the newest per point of the named runs
    # for the others; then the rows of those not cached yet (results never change once stored).
    ids: list[str] = []
    conn = await session.connection()  # Core rows: no ORM processing for hundreds of cells
    free = [m for m in machine_ids if m not in restricted]
    if free:
        stmt = select(LatestResult.result_id).where(LatestResult.machine_id.in_(free))
        if kernel_filter is not None:
            stmt = stmt.where(LatestResult.kernel_id.in_(kernel_filter))
        ids.extend((await conn.execute(stmt)).scalars())
    if restricted:
        rank = (
            func.row_number()
            .over(
                partition_by=(Result.machine_id, Result.kernel_id, Result.params_key),
                order_by=(Result.created_at.desc(), Result.id.desc()),
            )
            .label("rn")
        )
        inner = select(Result.id, rank).where(
            Result.run_id.in_(sorted(set().union(*restricted.values()))),
            Result.status == "ok",
            Result.median.is_not(None),
        )
        if kernel_filter is not None:
            inner = inner.where(Result.kernel_id.in_(kernel_filter))
        ranked = inner.subquery()
        ids.extend((await conn.execute(select(ranked.c.id).where(ranked.c.rn == 1))).scalars())
    results = await _records(conn, ids)
    spreads = await sig.spreads(conn, [r.id for r in results])

    # Facts: the snapshot of the run each machine's newest result came from, else its current facts.
    newest: dict[str, Record] = {}
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
        machine_ids,
        baseline,
        machines,
        machine_facts,
        facts_run,
        online,
        specs,
        results,
        spreads,
        warnings,
        fragments,
    )


async def _compare_sides(
    session: AsyncSession,
    side_list: list[sides.Side],
    q: CompareQuery,
    wanted_kernels: list[str],
    online: set[str],
    loc: list[str | int],
    fragments: dict[str, str] | None,
) -> dict[str, Any]:
    """compare() with sets of runs as the columns (compare/sides.py)."""
    labels = [s.label for s in side_list]
    baseline = q.baseline or labels[0]
    if baseline not in labels:
        raise ValidationFailed(
            [field_error([*loc, "baseline"], f"baseline {baseline!r} is not among the sides", "not_compared")]
        )
    specs: dict[str, dict[str, Any]] = {
        kid: spec for kid, spec in (await session.execute(select(Kernel.id, Kernel.spec))).all()
    }
    got = await sides.gather(session, side_list, _resolve_kernels(wanted_kernels, specs, loc), loc)
    results = sides.relabel(await _records(await session.connection(), list(got.chosen)), got.chosen)
    return _assemble(
        labels,
        baseline,
        got.columns,
        {label: got.facts.get(label) or {} for label in labels},
        got.facts_run,
        {label for label, c in got.columns.items() if any(m in online for m in c.machine_ids)},
        specs,
        results,
        got.spreads,
        [],
        fragments,
    )


def _cell(r: Record, fragments: dict[str, str] | None) -> Any:
    if fragments is None:
        return r.cell
    fragments[r.id] = r.cell_json
    return _MARK + r.id


@dataclass(frozen=True)
class Record:
    """A stored result as compare uses it, with its cell ready (as a dict and as JSON)."""

    id: str
    run_id: str
    machine_id: str
    kernel_id: str
    params: dict[str, Any]
    params_key: str
    unit: str
    samples: list[float]
    sample_launches: list[int] | None
    created_at: datetime
    cell: dict[str, Any]
    cell_json: str


# 20 000 results of up to 1 000 samples: well under 200 MB even then, ~40 MB with typical sample counts.
CACHE_MAX_SAMPLES = 1000
_records_cache: ratios.LRU[str, Record] = ratios.LRU(20_000)
# Placeholders for cells in the answer before rendering: unguessable, so no stored string can fake one.
_MARK = f"@@cell-{secrets.token_hex(8)}:"
_MARK_RE = re.compile(f'"{re.escape(_MARK)}([^"]+)"')


def _record(r: Row[Any]) -> Record:
    # The CI of the median from the hierarchical bootstrap (or min-max, labelled so), recomputed for
    # results stored before it with another method, so every cell's interval means the same thing.
    ci = ratios.cell_ci(r.id, r.samples, r.sample_launches)
    cell = {
        "result_id": r.id,
        "run_id": r.run_id,
        "median": r.median,
        "ci_low": ci["ci_low"],
        "ci_high": ci["ci_high"],
        "ci_kind": ci["ci_kind"],
        "n_launches": ci["n_launches"],
        "n": r.n,
        "cv": r.cv,
        "noisy": bool(r.noisy) or (r.cv is not None and r.cv > NOISY_CV),
        "samples": r.samples,
        "created_at": _iso(r.created_at),
    }
    return Record(
        id=r.id,
        run_id=r.run_id,
        machine_id=r.machine_id,
        kernel_id=r.kernel_id,
        params=r.params,
        params_key=r.params_key,
        unit=r.unit,
        samples=r.samples,
        sample_launches=r.sample_launches,
        created_at=r.created_at,
        cell=cell,
        cell_json=json.dumps(cell, ensure_ascii=False, allow_nan=False, separators=(",", ":")),
    )


async def _records(conn: AsyncConnection, ids: list[str]) -> list[Record]:
    """The results by id: cached ones from memory, the others in one statement."""
    got = {i: rec for i in ids if (rec := _records_cache.get(i)) is not None}
    missing = [i for i in ids if i not in got]
    if missing:
        for row in await conn.execute(select(*COLUMNS).where(Result.id.in_(missing))):
            rec = _record(row)
            if len(rec.samples) <= CACHE_MAX_SAMPLES:
                _records_cache.put(rec.id, rec)
            got[rec.id] = rec
    return [got[i] for i in ids if i in got]


def clear_caches() -> None:
    """Forget cached results and ratios (benchmarks and tests measure the cold path with it)."""
    _records_cache.clear()
    ratios.clear_cache()
    sig.clear_cache()


def render(answer: dict[str, Any], fragments: dict[str, str]) -> bytes:
    """The answer as JSON with each cell placeholder replaced by the cell's own JSON."""
    text = json.dumps(answer, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return _MARK_RE.sub(lambda m: fragments[m.group(1)], text).encode()


class Column(Protocol):
    """What the assembly reads of a compared column: a machine, or a side of runs."""

    @property
    def name(self) -> str: ...
    @property
    def hostname(self) -> str: ...


def _assemble(
    machine_ids: list[str],
    baseline: str,
    machines: Mapping[str, Column],
    machine_facts: Mapping[str, dict[str, Any]],
    facts_run: Mapping[str, str | None],
    online: set[str],
    specs: Mapping[str, Mapping[str, Any]],
    results: list[Record],
    spreads: Mapping[str, float | None],
    warnings: list[dict[str, Any]],
    fragments: dict[str, str] | None,
) -> dict[str, Any]:
    points: dict[tuple[str, str], dict[str, Record]] = {}
    for r in results:
        points.setdefault((r.kernel_id, r.params_key), {})[r.machine_id] = r

    rows = []
    pending: list[tuple[dict[str, Any], str, ratios.Pair]] = []
    # Per machine, log ratios in the "lower is better" direction, overall and per family.
    logs: dict[str, list[float]] = {m: [] for m in machine_ids}
    logs_by_family: dict[str, dict[str, list[float]]] = {}
    for kernel_id, params_key in sorted(
        points, key=lambda p: (p[0], param_sort_key(next(iter(points[p].values())).params), p[1])
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
            "cells": {m: _cell(cells[m], fragments) for m in machine_ids if m in cells},
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
            logs_by_family.setdefault(family, {m: [] for m in machine_ids})
            for m in machine_ids:
                c = cells.get(m)
                if c is None:
                    continue
                if m == baseline:
                    row["ratios"][m] = ratios.BASELINE
                else:
                    noise, source = sig.noise_for(
                        kernel_id, family, [spreads.get(c.id), spreads.get(base.id)]
                    )
                    pair = ratios.Pair(
                        c.id,
                        c.samples,
                        c.sample_launches,
                        base.id,
                        base.samples,
                        base.sample_launches,
                        noise,
                        source,
                    )
                    pending.append((row, m, pair))
        rows.append(row)

    answers = ratios.compare_pairs([p[2] for p in pending])
    for (row, m, _), rr in zip(pending, answers, strict=True):
        row["ratios"][m] = rr
    for row in rows:
        for m, rr in row["ratios"].items():
            if rr["ratio"] is not None and rr["ratio"] > 0:
                lg = math.log(rr["ratio"])
                if row["higher_is_better"]:
                    lg = -lg
                logs[m].append(lg)
                logs_by_family[row["family"]][m].append(lg)

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
