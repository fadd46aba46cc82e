"""The steps of one series with their fact changes, as /changes gives them, for a reader that checks
one series at a time (alerts/: each time results land on it). The same rule, cache and fact changes as
service.fleet_changes; only the columns the rule needs are read (not the samples)."""

from __future__ import annotations

from typing import Any

import anyio
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.history import changes
from ctxbench_server.history.service import (
    MAX_POINTS,
    _family,
    _steps,
    fact_changes,
    series_filter,
    step_out,
    watched,
)
from ctxbench_server.models import Result, Run


async def series_steps(
    session: AsyncSession, machine_id: str, kernel_id: str, params_key: str
) -> tuple[list[str], list[dict[str, Any]]]:
    """The run ids of one series (the newest MAX_POINTS, oldest first) and its steps as /changes gives
    them: each tested with Compare's rule, with the fact changes between its two runs, plus the series'
    params and unit. Reads only the columns the rule needs (alerts check a series whenever a result
    lands on it)."""
    rows = (
        await session.execute(
            select(
                Result.id,
                Result.run_id,
                Result.params,
                Result.unit,
                Result.median,
                Result.created_at,
                Result.agent_version,
            )
            .where(*series_filter(machine_id, kernel_id, params_key))
            .order_by(Result.created_at.desc(), Result.id.desc())
            .limit(MAX_POINTS)
        )
    ).all()
    rs = list(reversed(rows))
    if len(rs) < 2 * changes.MIN_SEGMENT:
        return [r.run_id for r in rs], []
    ck = (machine_id, kernel_id, params_key, rs[-1].id, len(rs))
    steps = _steps.get(ck)
    if steps is None:
        family = await _family(session, kernel_id)
        steps = await anyio.to_thread.run_sync(
            lambda: changes.detect([float(r.median) for r in rs], kernel_id, family, [r.run_id for r in rs])
        )
        _steps.put(ck, steps)
    run_ids = {rs[i].run_id for s in steps for i in (s.index - 1, s.index)}
    facts: dict[str, Any] = {
        rid: f for rid, f in await session.execute(select(Run.id, Run.facts).where(Run.id.in_(run_ids)))
    }
    out = []
    for s in steps:
        a, b = rs[s.index - 1], rs[s.index]
        moved = fact_changes(
            watched(facts.get(a.run_id), a.agent_version),
            watched(facts.get(b.run_id), b.agent_version),
            b.run_id,
            b.created_at,
        )
        entry = step_out(s, b.created_at, b.run_id, a.run_id, moved)
        entry.update(params=b.params or {}, unit=b.unit)
        out.append(entry)
    return [r.run_id for r in rs], out
