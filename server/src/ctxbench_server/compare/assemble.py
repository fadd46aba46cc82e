"""The compare answer from its records: rows per (kernel, params_key), ratios against the baseline with
their significance, geometric means overall and per family, and the facts that differ.
"""

from __future__ import annotations

import math
from collections.abc import Container, Mapping
from typing import Any, Protocol

from ctxbench_server.compare import facts, ratios
from ctxbench_server.compare import significance as sig
from ctxbench_server.compare.records import Record, cell
from ctxbench_server.compare.schemas import CompareWarning


def param_sort_key(params: Mapping[str, Any]) -> tuple[Any, ...]:
    out: list[tuple[str, int, float, str]] = []
    for name in sorted(params):
        v = params[name]
        if isinstance(v, bool) or not isinstance(v, int | float):
            out.append((name, 1, 0.0, str(v)))
        else:
            out.append((name, 0, float(v), ""))
    return tuple(out)


class Column(Protocol):
    """What the assembly reads of a compared column: a machine, or a side of runs."""

    @property
    def name(self) -> str: ...
    @property
    def hostname(self) -> str: ...


Pending = list[tuple[dict[str, Any], str, ratios.Pair]]


def assemble(
    machine_ids: list[str],
    baseline: str,
    machines: Mapping[str, Column],
    machine_facts: Mapping[str, dict[str, Any]],
    facts_run: Mapping[str, str | None],
    online: Container[str],
    specs: Mapping[str, Mapping[str, Any]],
    results: list[Record],
    spreads: Mapping[str, float | None],
    warnings: list[CompareWarning],
    fragments: dict[str, str] | None,
) -> dict[str, Any]:
    points: dict[tuple[str, str], dict[str, Record]] = {}
    for r in results:
        points.setdefault((r.kernel_id, r.params_key), {})[r.machine_id] = r
    rows = []
    pending: Pending = []  # ratios to compute, all at once
    for kernel_id, params_key in sorted(
        points, key=lambda p: (p[0], param_sort_key(next(iter(points[p].values())).params), p[1])
    ):
        row = _row(
            kernel_id, params_key, points[(kernel_id, params_key)], machine_ids, baseline, specs, fragments
        )
        if row.get("units"):
            units = row["units"]
            label = f"{kernel_id} {params_key}".strip()
            row["warning"] = (
                f"{label}: units differ ("
                + ", ".join(f"{machines[m].name or m}: {u or 'none'}" for m, u in units.items())
                + "); no ratio"
            )
            warnings.append(
                {"row": label, "kernel": kernel_id, "params_key": params_key, "message": row["warning"]}
            )
        elif baseline in points[(kernel_id, params_key)]:
            pending += _pairs(row, points[(kernel_id, params_key)], machine_ids, baseline, spreads)
        rows.append(row)
    answers = ratios.compare_pairs([p[2] for p in pending])
    for (row, m, _), rr in zip(pending, answers, strict=True):
        row["ratios"][m] = rr
    geomean, by_family = _geomeans(rows, machine_ids)
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
        "geomean": geomean,
        "geomean_by_family": by_family,
        "geomean_direction": "time: > 1 is slower than the baseline (throughput ratios are inverted first)",
        "facts_diff": facts.diff({m: machine_facts[m] for m in machine_ids}),
        "result_ids": sorted({r.id for r in results}),
        "warnings": warnings,
    }


def _row(
    kernel_id: str,
    params_key: str,
    cells: Mapping[str, Record],
    machine_ids: list[str],
    baseline: str,
    specs: Mapping[str, Mapping[str, Any]],
    fragments: dict[str, str] | None,
) -> dict[str, Any]:
    """One row without its ratios; `units` only when the machines' units differ (then no ratio)."""
    spec = specs.get(kernel_id) or {}
    base = cells.get(baseline)
    first = base if base is not None else cells[next(m for m in machine_ids if m in cells)]
    units = {m: cells[m].unit for m in machine_ids if m in cells}
    row: dict[str, Any] = {
        "kernel": kernel_id,
        "family": str(spec.get("family") or kernel_id.partition(".")[0]),
        "params": first.params,
        "params_key": params_key,
        "unit": first.unit,
        "higher_is_better": ratios.higher_is_better(first.unit),
        "cells": {m: cell(cells[m], fragments) for m in machine_ids if m in cells},
        "ratios": {},
        "seed_reference": spec.get("seed_reference"),
        "warning": None,
    }
    if len(set(units.values())) > 1:
        row["units"] = units
    return row


def _pairs(
    row: dict[str, Any],
    cells: Mapping[str, Record],
    machine_ids: list[str],
    baseline: str,
    spreads: Mapping[str, float | None],
) -> Pending:
    """The baseline's own ratio set in the row; each other machine's ratio as a pair to compute, with the
    pair's run-to-run noise (significance.py)."""
    base = cells[baseline]
    out: Pending = []
    for m in machine_ids:
        c = cells.get(m)
        if c is None:
            continue
        if m == baseline:
            row["ratios"][m] = ratios.BASELINE
            continue
        noise, source = sig.noise_for(row["kernel"], row["family"], [spreads.get(c.id), spreads.get(base.id)])
        pair = ratios.Pair(
            c.id,
            c.samples,
            c.sample_launches,
            base.id,
            base.samples,
            base.sample_launches,
            noise,
            source,
            q=c.q,
            base_q=base.q,
        )
        out.append((row, m, pair))
    return out


def _geomeans(
    rows: list[dict[str, Any]], machine_ids: list[str]
) -> tuple[dict[str, float | None], dict[str, dict[str, float | None]]]:
    """Per machine, the geometric mean of its ratios in the "lower is better" direction, overall and per
    family (a family is listed once one of its rows has ratios)."""
    logs: dict[str, list[float]] = {m: [] for m in machine_ids}
    by_family: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        if not row["ratios"]:
            continue
        family = by_family.setdefault(row["family"], {m: [] for m in machine_ids})
        for m, rr in row["ratios"].items():
            if rr["ratio"] is not None and rr["ratio"] > 0:
                lg = math.log(rr["ratio"])
                if row["higher_is_better"]:
                    lg = -lg
                logs[m].append(lg)
                family[m].append(lg)

    def mean_exp(values: list[float]) -> float | None:
        return math.exp(sum(values) / len(values)) if values else None

    return (
        {m: mean_exp(v) for m, v in logs.items()},
        {fam: {m: mean_exp(v) for m, v in per.items()} for fam, per in sorted(by_family.items())},
    )
