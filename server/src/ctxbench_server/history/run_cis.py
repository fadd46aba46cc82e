"""Each run's CI of its median for the step test (history/changes.py): the stored one, or, for a result
the CI filler (ingest/ci.py) has not reached yet, the same values computed now from its samples, so a
check made as a run lands sees that run like every other."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import anyio
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.history import changes
from ctxbench_server.models import Result
from ctxbench_server.stats import summary as stats

CI_IDS_PER_STATEMENT = 500  # results whose samples one statement reads


async def run_cis(session: AsyncSession, rows: Iterable[Any]) -> dict[str, changes.RunCI]:
    """Each result's CI of its figure (rows with id, ci_low, ci_high, ci_method), by result id: as stored,
    or, where the filler has not written it yet, computed from its samples (one statement per
    CI_IDS_PER_STATEMENT of them, the bootstrap off the event loop): the values the filler will store.
    A result of more samples than stats.summary.INLINE_SAMPLES stays unknown (None, None) until then."""
    out: dict[str, changes.RunCI] = {}
    missing: list[str] = []
    for r in rows:
        if r.ci_method is None:
            missing.append(r.id)
        else:
            out[r.id] = (r.ci_low, r.ci_high)
    for start in range(0, len(missing), CI_IDS_PER_STATEMENT):
        part = missing[start : start + CI_IDS_PER_STATEMENT]
        got = (
            await session.execute(
                select(Result.id, Result.samples, Result.sample_launches, Result.estimator).where(
                    Result.id.in_(part)
                )
            )
        ).all()

        def compute(got: Sequence[Any] = got) -> list[tuple[str, changes.RunCI]]:
            return [(i, stats.stored_ci(i, sm, sl, (None, None, None), e)[:2]) for i, sm, sl, e in got]

        out.update(await anyio.to_thread.run_sync(compute))
    return out
