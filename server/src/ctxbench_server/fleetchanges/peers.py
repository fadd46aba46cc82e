"""Peers: a machine whose latest figure for a point is an outlier among the machines of its hardware class
(machines/labels.hardware_class), with the facts where it differs from the majority of that class.

Robust, in log space: the class's median and MAD of the latest run medians; a machine is an outlier
when |log(x / median)| exceeds THRESHOLD robust spreads, the spread being 1.4826 MAD but never less
than log(1 + the kernel's default noise floor) (compare/significance.py), so that a class whose
machines agree to a fraction of a per cent does not call a normal run-to-run wobble an outlier. A point
is judged in a class only when at least MIN_PEERS other machines of the class have a figure for it."""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.compare import facts as facts_mod
from ctxbench_server.compare import significance as sig
from ctxbench_server.fleetchanges.schemas import FactDiffers, PeerOutlier, PeersOut
from ctxbench_server.history.service import watched
from ctxbench_server.machines.labels import hardware_class
from ctxbench_server.models import Kernel, LatestResult, Machine, MachineStatus, Result, Run

MIN_PEERS = 3
THRESHOLD = 3.0
MAX_FIGURES = 100_000  # latest figures one read looks at
MAX_KERNELS = 50
MAX_CLASS_CHARS = 400


def scores(figures: Sequence[float], noise: float) -> tuple[float, list[float]]:
    """The median of the figures and each one's |log(x / median)| in robust spreads."""
    logs = [math.log(x) for x in figures]
    mid = statistics.median(logs)
    mad = statistics.median(abs(v - mid) for v in logs)
    scale = max(1.4826 * mad, math.log1p(noise))
    return math.exp(mid), [abs(v - mid) / scale for v in logs]


def differs(mine: dict[str, Any], others: Sequence[dict[str, Any]]) -> list[FactDiffers]:
    """The facts where `mine` is not what most of the class (`others` and mine) has."""
    out = []
    for fact in sorted(mine, key=facts_mod._order):
        values = [o[fact] for o in (mine, *others) if fact in o]
        counts = Counter(repr(v) for v in values)
        top, n = counts.most_common(1)[0]
        if n * 2 > len(values) and repr(mine[fact]) != top:
            majority = next(v for v in values if repr(v) == top)
            out.append(
                FactDiffers(
                    fact=fact,
                    value=mine[fact],
                    majority=majority,
                    majority_count=n,
                    reporting=len(values),
                    hint=facts_mod.hint(fact),
                )
            )
    return out


def summary(o: PeerOutlier) -> str:
    point = f" [{o.params_key}]" if o.params_key else ""
    head = (
        f"{o.kernel}{point} on {o.machine_name}: {(o.ratio - 1) * 100:+.1f} % against the median of its "
        f"{o.peers} peers ({o.hardware_class})"
    )
    if not o.facts_differ:
        return f"{head}; no watched fact differs from its class"
    parts = [
        f"{f.fact} {f.value} ({f.majority_count} of {f.reporting}: {f.majority})" for f in o.facts_differ[:3]
    ]
    more = f" (+{len(o.facts_differ) - 3} more)" if len(o.facts_differ) > 3 else ""
    return f"{head}; differs in {', '.join(parts)}{more}"


async def outliers(session: AsyncSession, klass: str | None, kernels: Sequence[str], limit: int) -> PeersOut:
    active = await session.execute(
        select(Machine.id, Machine.name, Machine.facts).where(Machine.status == MachineStatus.ACTIVE)
    )
    machines = {mid: (name, hardware_class(f or {})) for mid, name, f in active}
    machines = {m: v for m, v in machines.items() if v[1] and (klass is None or v[1] == klass)}
    q = (
        select(
            LatestResult.machine_id,
            LatestResult.kernel_id,
            LatestResult.params_key,
            Result.figure,
            Result.unit,
            Result.params,
            Result.run_id,
            Result.created_at,
            Result.agent_version,
        )
        .join(Result, Result.id == LatestResult.result_id)
        .where(LatestResult.machine_id.in_(machines), Result.figure > 0)
        .order_by(LatestResult.kernel_id, LatestResult.params_key, LatestResult.machine_id)
        .limit(MAX_FIGURES + 1)
    )
    if kernels:
        q = q.where(LatestResult.kernel_id.in_(kernels))
    rows = (await session.execute(q)).all()
    truncated = len(rows) > MAX_FIGURES
    groups: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    for r in rows[:MAX_FIGURES]:
        groups[(machines[r.machine_id][1], r.kernel_id, r.params_key)].append(r)
    families = {
        k: str((spec or {}).get("family") or k.partition(".")[0])
        for k, spec in await session.execute(select(Kernel.id, Kernel.spec))
    }
    judged = 0
    found: list[tuple[list[Any], Any, float, float]] = []  # the group, the outlier, its score, class median
    for (_, kernel, _), rs in groups.items():
        if len(rs) < MIN_PEERS + 1:
            continue
        judged += 1
        noise = sig.default_noise(kernel, families.get(kernel, kernel.partition(".")[0]))
        mid, got = scores([float(r.figure) for r in rs], noise)
        found.extend((rs, r, s, mid) for r, s in zip(rs, got, strict=True) if s > THRESHOLD)
    found.sort(key=lambda f: (-f[2], f[1].kernel_id, f[1].params_key, f[1].machine_id))
    found = found[:limit]
    run_ids = {r.run_id for rs, _, _, _ in found for r in rs}
    got_facts = await session.execute(select(Run.id, Run.facts).where(Run.id.in_(run_ids)))
    run_facts: dict[str, Any] = {rid: f for rid, f in got_facts}
    # Each figure's watched facts once, not once for each outlier of its group.
    seen = {(x.run_id, x.agent_version) for rs, _, _, _ in found for x in rs}
    flat = {k: watched(run_facts.get(k[0]), k[1]) for k in seen}
    out = []
    for rs, r, score, mid in found:
        facts = {x.machine_id: flat[(x.run_id, x.agent_version)] for x in rs}
        name, klass_of = machines[r.machine_id]
        o = PeerOutlier(
            summary="",
            machine_id=r.machine_id,
            machine_name=name,
            hardware_class=klass_of,
            kernel=r.kernel_id,
            params_key=r.params_key,
            params=r.params or {},
            unit=r.unit,
            run_id=r.run_id,
            at=r.created_at,
            median=float(r.figure),
            class_median=mid,
            ratio=float(r.figure) / mid,
            score=score,
            peers=len(rs) - 1,
            facts_differ=differs(facts[r.machine_id], [f for m, f in facts.items() if m != r.machine_id]),
        )
        o.summary = summary(o)
        out.append(o)
    return PeersOut(outliers=out, points=judged, truncated=truncated)
