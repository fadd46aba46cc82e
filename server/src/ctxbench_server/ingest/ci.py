"""The CI of a result's figure (stats/figure.py), filled in after its ack (docs/architecture.md "Ingest").

The hierarchical bootstrap (stats/bootstrap.py) is most of the CPU a result costs the server, and
nothing on the agent's side waits for it: ingest stores a result with its samples and their summary
(median, spread) and acknowledges it; this filler computes the CI in the statistics worker processes
(stats/pool.py) and writes it beside. Until then a result reads with `ci_low`, `ci_high` and `ci_method`
null ("not yet"); compare computes its cells' CIs from the samples itself and does not wait.

Ingest comes first: the filler works when no result was stored for QUIET_S, or when its oldest result
has waited MAX_WAIT_S (so a fleet that never stops reporting still gets its CIs). Results a process
stored but did not fill (it stopped, or more waited than it keeps in memory) are found again by the
partial index on pending CIs when a server starts. The CI is seeded by the result id, so two servers
filling the same result write the same values (the UPDATE takes the first).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, cast

from sqlalchemy import Table, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server.models import Result
from ctxbench_server.stats import bootstrap, figure
from ctxbench_server.stats import pool as stats_pool
from ctxbench_server.stored import ResultStored

log = logging.getLogger(__name__)

QUIET_S = 0.5
MAX_WAIT_S = 30.0
BATCH = 256  # results a pass computes and writes together
MAX_PENDING = 100_000  # ids kept in memory; past it, the index finds the rest
NO_CI = "none (no usable samples)"

_RESULTS = cast(Table, Result.__table__)
_PENDING = (
    select(_RESULTS.c.id, _RESULTS.c.run_id)
    .where(_RESULTS.c.ci_method.is_(None), _RESULTS.c.status == "ok")
    .limit(BATCH)
)
_SAMPLES_OF = select(
    _RESULTS.c.id, _RESULTS.c.run_id, _RESULTS.c.samples, _RESULTS.c.sample_launches, _RESULTS.c.estimator
).where(_RESULTS.c.id.in_(bindparam("ids", expanding=True)), _RESULTS.c.ci_method.is_(None))
_SET_CI = (
    _RESULTS.update()
    .where(_RESULTS.c.id == bindparam("b_id"), _RESULTS.c.ci_method.is_(None))
    .values(ci_low=bindparam("b_low"), ci_high=bindparam("b_high"), ci_method=bindparam("b_method"))
)

# told which results of a run got their CI (the run's event streams send them again)
Updated = Callable[[str, Sequence[str]], None]


class CIFiller:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        updated: Updated | None = None,
        quiet_s: float = QUIET_S,
        max_wait_s: float = MAX_WAIT_S,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.updated = updated
        self.quiet_s = quiet_s
        self.max_wait_s = max_wait_s
        self._pending: dict[str, float] = {}  # result id -> when it was stored (monotonic)
        self._last_stored = 0.0
        self._overflow = True  # look in the database first: results a stopped server left without a CI
        self._wake = asyncio.Event()
        self.filled = 0  # CIs written by this process (tests and the ingest benchmark read it)

    def results_stored(self, results: Sequence[ResultStored]) -> None:
        """The "result stored" listener (stored.py), after ingest's commit."""
        now = time.monotonic()
        for r in results:
            if r.status != "ok":
                continue
            if len(self._pending) >= MAX_PENDING:
                self._overflow = True
                break
            self._pending[r.result_id] = now
        self._last_stored = now
        self._wake.set()

    def pending(self) -> int:
        return len(self._pending)

    async def run(self) -> None:
        """Fills CIs until cancelled (the server stops); a failed pass is logged and retried later."""
        while True:
            if not self._pending and not self._overflow:
                self._wake.clear()
                await self._wake.wait()
            await self._wait_turn()
            try:
                await self.fill_once()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("could not fill results' CIs; trying again shortly")
                self._overflow = True  # the ids of that pass are found again through the index
                await asyncio.sleep(1.0)

    async def _wait_turn(self) -> None:
        """Until ingest has been quiet for quiet_s, or the oldest pending result waited max_wait_s."""
        while self._pending:
            now = time.monotonic()
            oldest = next(iter(self._pending.values()))
            due = min(self._last_stored + self.quiet_s, oldest + self.max_wait_s)
            if now >= due:
                return
            await asyncio.sleep(due - now)

    async def fill_once(self) -> int:
        """One pass: up to BATCH results' CIs computed and written. Returns how many were written."""
        ids = list(itertools.islice(self._pending, BATCH))
        async with self.sessionmaker() as session:
            if not ids:
                ids = [rid for rid, _ in await session.execute(_PENDING)]
                self._overflow = len(ids) == BATCH
            rows: list[Any] = list(await session.execute(_SAMPLES_OF, {"ids": ids})) if ids else []
        for rid in ids:
            self._pending.pop(rid, None)
        if not rows:
            return 0
        jobs = [(r.id, r.samples or [], r.sample_launches, figure.quantile_for(r.estimator)) for r in rows]
        cis = await asyncio.to_thread(stats_pool.compute, jobs)
        values = []
        for r in rows:
            ci = cis.get(r.id)
            if isinstance(ci, bootstrap.MedianCI):
                values.append({"b_id": r.id, "b_low": ci.low, "b_high": ci.high, "b_method": ci.method})
            else:  # marked, so that it is not looked for again
                log.warning("result %s: no CI of its figure (%s)", r.id, ci)
                values.append({"b_id": r.id, "b_low": None, "b_high": None, "b_method": NO_CI})
        if values:
            async with self.sessionmaker() as session:
                await session.execute(_SET_CI, values)
                await session.commit()
            self.filled += len(values)
        if self.updated is not None:
            by_run: dict[str, list[str]] = {}
            for r in rows:
                by_run.setdefault(r.run_id, []).append(r.id)
            for run_id, changed in by_run.items():
                self.updated(run_id, changed)
        return len(values)
