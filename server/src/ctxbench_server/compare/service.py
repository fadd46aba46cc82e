"""GET /compare: each machine's results per (kernel, params_key), side by side, against a baseline.

SQL cost is bounded whatever the number of machines and kernels: at most one statement each for the
runs named by `runs`/`batch`, the machines, the kernel catalog, the latest-result pointers, the results
of restricted runs, and the facts snapshots. Nothing is queried per cell. The parts: which results
(this module), the results as cells (records.py), the answer from them (assemble.py), sets of runs as
columns (sides.py), the statistics (ratios.py, significance.py).
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from ctxbench_server.compare import ratios, records, sides
from ctxbench_server.compare import significance as sig
from ctxbench_server.compare.assemble import assemble, param_sort_key
from ctxbench_server.compare.schemas import CompareWarning
from ctxbench_server.contract import aliases
from ctxbench_server.errors import NotFound, ValidationFailed, field_error
from ctxbench_server.models import Kernel, LatestResult, Machine, Result, Run

__all__ = [
    "CompareQuery",
    "UnknownMachine",
    "clear_caches",
    "compare",
    "param_sort_key",
    "render",
    "split_list",
]

render = records.render
MAX_MACHINES = 20
MAX_LIST = 1000  # kernels or runs named in one request


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


def split_list(value: str | Sequence[str] | None) -> list[str]:
    """A comma list (or a list of them) without blanks and repeats, in order."""
    if value is None:
        return []
    parts = value.split(",") if isinstance(value, str) else [p for v in value for p in str(v).split(",")]
    return list(dict.fromkeys(p.strip() for p in parts if p.strip()))  # ordered, O(n)


def _resolve_kernels(
    wanted: list[str], specs: Mapping[str, Mapping[str, Any]], loc: list[str | int]
) -> list[str] | None:
    """Kernel ids the filter names (None: no filter). Unknown ids and prefixes are 422s."""
    if not wanted:
        return None
    out: set[str] = set()
    errors = []
    for i, k in enumerate(wanted):
        if k.endswith(".*"):  # an id prefix, which is also a family (`sched.*`), or an old id's (`go.*`)
            prefix = k[:-1]
            hits = [kid for kid in specs if aliases.matches_prefix(kid, prefix)]
            if not hits:
                errors.append(
                    field_error(
                        [*loc, "kernels", i], f"no kernel id starts with {prefix!r}", "unknown_kernel"
                    )
                )
            out.update(hits)
        elif aliases.canonical(k) in specs:
            out.add(aliases.canonical(k))
        else:
            errors.append(field_error([*loc, "kernels", i], f"unknown kernel {k!r}", "unknown_kernel"))
    if errors:
        raise ValidationFailed(errors)
    return sorted(out)


def _too_many(loc: list[str | int], machine_ids: list[str], kernels: list[str], run_ids: list[str]) -> None:
    if len(machine_ids) > MAX_MACHINES:
        raise ValidationFailed(
            [field_error([*loc, "machines"], f"at most {MAX_MACHINES} machines", "too_many_machines")]
        )
    if len(kernels) > MAX_LIST or len(run_ids) > MAX_LIST:
        field_name = "kernels" if len(kernels) > MAX_LIST else "runs"
        raise ValidationFailed([field_error([*loc, field_name], f"at most {MAX_LIST} entries", "too_long")])


async def compare(
    session: AsyncSession,
    q: CompareQuery,
    online: Container[str],
    loc: Sequence[str | int] = ("query",),
    fragments: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The compare answer. With `fragments`, each cell is a placeholder string and `fragments` gets the
    cell's JSON by placeholder: `render` puts them together (GET /compare; shares store the plain dict)."""
    loc = list(loc)
    machine_ids = split_list(q.machines)
    wanted_kernels = split_list(q.kernels)
    run_ids = split_list(q.runs)
    _too_many(loc, machine_ids, wanted_kernels, run_ids)
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

    warnings: list[CompareWarning] = []
    restricted: dict[str, set[str]] = {}  # machine -> its runs to use
    if run_ids or q.batch:
        restricted = await _named_runs(session, run_ids, q.batch, machine_ids, warnings, loc)
    if not machine_ids:
        raise ValidationFailed([field_error([*loc, "machines"], "name at least one machine", "missing")])
    _too_many(loc, machine_ids, [], [])  # a batch of more machines, named by `batch` alone
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
    specs = await _specs(session)
    kernel_filter = _resolve_kernels(wanted_kernels, specs, loc)

    conn = await session.connection()  # Core rows: no ORM processing for hundreds of cells
    ids = await _result_ids(conn, [m for m in machine_ids if m not in restricted], restricted, kernel_filter)
    results = await records.load(conn, ids)
    spreads = await sig.spreads(conn, [r.id for r in results])
    machine_facts, facts_run = await _facts(session, machine_ids, machines, results)
    return assemble(
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


async def _specs(session: AsyncSession) -> dict[str, dict[str, Any]]:
    return {kid: spec for kid, spec in (await session.execute(select(Kernel.id, Kernel.spec))).all()}


async def _named_runs(
    session: AsyncSession,
    run_ids: list[str],
    batch: str | None,
    machine_ids: list[str],
    warnings: list[CompareWarning],
    loc: list[str | int],
) -> dict[str, set[str]]:
    """The runs named by `runs` or `batch` (one statement for both), by machine. A batch alone names its
    machines (appended to `machine_ids`); runs of machines not compared are ignored with a warning."""
    conds: list[ColumnElement[bool]] = []
    if run_ids:
        conds.append(Run.id.in_(run_ids))
    if batch:
        conds.append(Run.batch_id == batch)
    found = (
        await session.execute(
            select(Run.id, Run.machine_id, Run.batch_id).where(or_(*conds)).order_by(Run.created_at, Run.id)
        )
    ).all()
    known = {run.id for run in found}
    bad = [
        field_error([*loc, "runs", i], f"unknown run {rid!r}", "unknown_run")
        for i, rid in enumerate(run_ids)
        if rid not in known
    ]
    if batch and not any(run.batch_id == batch for run in found):
        bad.append(field_error([*loc, "batch"], f"unknown batch {batch!r}", "unknown_batch"))
    if bad:
        raise ValidationFailed(bad)
    if not machine_ids and batch:  # a batch names its machines
        for run in found:
            if run.batch_id == batch and run.machine_id not in machine_ids:
                machine_ids.append(run.machine_id)
    restricted: dict[str, set[str]] = {}
    for run in found:
        if run.id in run_ids or run.batch_id == batch:
            restricted.setdefault(run.machine_id, set()).add(run.id)
    for m in sorted(set(restricted) - set(machine_ids)):
        warnings.append({"message": f"runs of machine {m!r} are ignored: it is not compared"})
        del restricted[m]
    if batch:
        for m in machine_ids:
            if m not in restricted:
                warnings.append(
                    {"message": f"machine {m!r} has no run in batch {batch!r}: its latest results are used"}
                )
    return restricted


async def _result_ids(
    conn: AsyncConnection, free: list[str], restricted: dict[str, set[str]], kernel_filter: list[str] | None
) -> list[str]:
    """Latest pointers for unrestricted machines, the newest per point of the named runs for the others."""
    ids: list[str] = []
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
    return ids


async def _facts(
    session: AsyncSession,
    machine_ids: list[str],
    machines: Mapping[str, Machine],
    results: list[records.Record],
) -> tuple[dict[str, dict[str, Any]], dict[str, str | None]]:
    """Per machine, the facts snapshot of the run its newest result came from (else its current facts),
    and that run's id (None when the current facts were used)."""
    newest: dict[str, records.Record] = {}
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
    return machine_facts, facts_run


async def _compare_sides(
    session: AsyncSession,
    side_list: list[sides.Side],
    q: CompareQuery,
    wanted_kernels: list[str],
    online: Container[str],
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
    specs = await _specs(session)
    got = await sides.gather(session, side_list, _resolve_kernels(wanted_kernels, specs, loc), loc)
    results = sides.relabel(await records.load(await session.connection(), list(got.chosen)), got.chosen)
    return assemble(
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


def clear_caches() -> None:
    """Forget cached results and ratios (benchmarks and tests measure the cold path with it)."""
    records.clear_cache()
    ratios.clear_cache()
    sig.clear_cache()
