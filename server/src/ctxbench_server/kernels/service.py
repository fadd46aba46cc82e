from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from ctxbench_server.compare.ratios import higher_is_better
from ctxbench_server.compare.service import param_sort_key
from ctxbench_server.contract.aliases import aliases_of
from ctxbench_server.kernels.schemas import KernelOut
from ctxbench_server.models import Kernel, LatestResult, Machine, Result
from ctxbench_server.stats import figure
from ctxbench_server.stats import summary as stats


async def list_kernels(session: AsyncSession) -> list[KernelOut]:
    rows = await session.scalars(select(Kernel).options(selectinload(Kernel.machines)).order_by(Kernel.id))
    out = []
    for k in rows:
        spec = dict(k.spec)
        spec["machines"] = sorted(mk.machine_id for mk in k.machines)
        spec["aliases"] = aliases_of(k.id)
        out.append(KernelOut.model_validate(spec))
    return out


MAX_RANKED = 5000  # latest results one kernel page lists (machines x points)


async def ranked_latest(session: AsyncSession, kernel_id: str) -> list[dict[str, Any]]:
    """Per parameter point of the kernel, every machine's latest successful result, best first (lowest
    cost, or highest throughput), with the point's CI and where it came from."""
    rows = (
        await session.execute(
            select(Result, Machine.name)
            .join(LatestResult, LatestResult.result_id == Result.id)
            .join(Machine, Machine.id == Result.machine_id)
            .where(LatestResult.kernel_id == kernel_id)
            .limit(MAX_RANKED)
        )
    ).all()
    await stats.prefill_cis([r for r, _ in rows])
    points: dict[str, dict[str, Any]] = {}
    for r, name in rows:
        low, high, _ = stats.stored_ci(
            r.id, r.samples, r.sample_launches, (r.ci_low, r.ci_high, r.ci_method), r.estimator
        )
        p = points.setdefault(
            r.params_key,
            {"params_key": r.params_key, "params": r.params, "unit": r.unit, "results": []},
        )
        p["results"].append(
            {
                "machine_id": r.machine_id,
                "machine_name": name,
                "result_id": r.id,
                "run_id": r.run_id,
                "at": r.created_at,
                "median": r.median,
                "figure": r.figure if r.figure is not None else r.median,
                "figure_stat": figure.stat_of(r.estimator),
                "ci_low": low,
                "ci_high": high,
                "unit": r.unit,
                "n": r.n,
            }
        )
    out = []
    for p in sorted(points.values(), key=lambda p: (param_sort_key(p["params"]), p["params_key"])):
        higher = higher_is_better(p["unit"])
        p["higher_is_better"] = higher
        p["results"].sort(
            key=lambda x: (-(x["figure"] or 0.0) if higher else (x["figure"] or 0.0), x["machine_name"])
        )
        out.append(p)
    return out
