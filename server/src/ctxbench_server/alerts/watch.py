"""The watcher: the series that results land on are checked for steps, off the ingest path.

Ingest's "result stored" event (stored.py), after its commit, adds each measured result's series to
a set (at most MAX_PENDING; past that the series waits for the next start's look-back, and a WARNING
says so) and wakes the watcher; it waits CTXBENCH_ALERT_SETTLE_S for the rest of the run to land. A
series is checked once the CI filler (ingest/ci.py) has written the CIs of its new results (its
"updated" listener, `cis_filled`), so the step test reads stored CIs and computes no bootstrap of its
own beside ingest (the filler computes each once, when ingest is quiet); a series whose CIs have not come
within AWAIT_CI_MAX_S is checked anyway (history/run_cis.py computes the missing ones). Then it checks
each series once (alerts/service.check_series) in its own transaction, which also queues the
webhook deliveries of every alert it opened; then, in one more, those of the fleet changes the opened
alerts' steps belong to (fleetchanges/notify.py). Each server checks what its own agents reported; at start
it looks back over the series whose newest result is recent (latest_results), so a crash between a
result and its check loses nothing."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server.alerts import service
from ctxbench_server.config import Settings
from ctxbench_server.fleetchanges import notify
from ctxbench_server.models import Alert, LatestResult
from ctxbench_server.models.base import utcnow
from ctxbench_server.stored import ResultStored
from ctxbench_server.webhooks import service as webhooks

log = logging.getLogger(__name__)
MAX_PENDING = 10_000
# How long a series waits for the CI filler before it is checked with CIs computed for the check (the
# filler works when ingest is quiet, or after its own MAX_WAIT_S at the latest).
AWAIT_CI_MAX_S = 120.0
LOOK_BACK = timedelta(days=1)
ALERT_OPENED = "alert.opened"


class AlertWatcher:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        settings: Settings,
        on_queued: Callable[[], None] | None = None,
        clock: Callable[[], datetime] = utcnow,
        on_opened: Callable[[str], None] | None = None,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.settings = settings
        self.on_queued = on_queued  # webhook deliveries were queued (the sender looks at once)
        self.on_opened = on_opened  # an alert was opened (committed): browsers are told
        self.clock = clock
        self.checks = 0  # series checked (tests)
        self._pending: set[service.SeriesKey] = set()
        # result id -> its series and when it was stored (monotonic: the dict's order is the oldest first),
        # until the filler wrote its CI; and how many results of each series wait so (a look at what is
        # due then costs the pending series, not every result waiting)
        self._awaiting: dict[str, tuple[service.SeriesKey, float]] = {}
        self._waiting: Counter[service.SeriesKey] = Counter()
        self._wake = asyncio.Event()
        self._overflowed = False

    def results_stored(self, results: Sequence[ResultStored]) -> None:
        """The "result stored" listener, after ingest's commit: never waits, never raises."""
        for r in results:
            if r.status != "ok":
                continue
            if len(self._pending) >= MAX_PENDING:
                if not self._overflowed:
                    log.warning(
                        "alerts: %d series waiting to be checked; more wait for a restart", MAX_PENDING
                    )
                    self._overflowed = True
                break
            key = (r.machine_id, r.kernel_id, r.params_key)
            self._pending.add(key)
            if len(self._awaiting) < MAX_PENDING and r.result_id not in self._awaiting:
                self._awaiting[r.result_id] = (key, time.monotonic())
                self._waiting[key] += 1
        self._wake.set()

    def cis_filled(self, run_id: str, result_ids: Sequence[str]) -> None:
        """The CI filler's "updated" listener: these results' CIs are stored (never waits, never raises)."""
        for rid in result_ids:
            self._done(rid)
        if self._pending:
            self._wake.set()

    def _done(self, result_id: str) -> None:
        """The result waits for its CI no more."""
        got = self._awaiting.pop(result_id, None)
        if got is not None:
            key = got[0]
            if self._waiting[key] > 1:
                self._waiting[key] -= 1
            else:
                del self._waiting[key]

    def _take_due(self) -> set[service.SeriesKey]:
        """The pending series none of whose results still waits for its CI (or waited AWAIT_CI_MAX_S)."""
        now = time.monotonic()
        while self._awaiting:  # the oldest first: stop at the first that may wait on
            rid, (_, at) = next(iter(self._awaiting.items()))
            if now - at < AWAIT_CI_MAX_S:
                break
            self._done(rid)
        due = {key for key in self._pending if key not in self._waiting}
        self._pending -= due
        return due

    def _next_look(self) -> float | None:
        """Seconds until the oldest result waiting for its CI is due anyway (None: nothing waits)."""
        if not self._pending or not self._awaiting:
            return None
        _, oldest = next(iter(self._awaiting.values()))
        return max(0.0, oldest + AWAIT_CI_MAX_S - time.monotonic())

    async def run(self) -> None:
        try:
            await self.look_back()
        except Exception:
            log.exception("alerts: the look-back at start failed")
        while True:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a cancel that comes as the
            # event is set, and the server's stop then waits for this task forever.
            try:
                async with asyncio.timeout(self._next_look()):
                    await self._wake.wait()
            except TimeoutError:
                pass
            await asyncio.sleep(self.settings.alert_settle_s)
            self._wake.clear()
            keys = self._take_due()
            if not self._pending:
                self._overflowed = False
            if not keys:
                continue
            try:
                await self.check(keys)
            except Exception:
                log.exception("alerts: checking %d series failed", len(keys))

    async def look_back(self) -> None:
        since = self.clock() - LOOK_BACK
        async with self.sessionmaker() as session:
            rows = await session.execute(
                select(LatestResult.machine_id, LatestResult.kernel_id, LatestResult.params_key)
                .where(LatestResult.created_at >= since)
                .limit(MAX_PENDING)
            )
            keys = {(m, k, p) for m, k, p in rows}
        if keys:
            await self.check(keys)

    async def check(self, keys: Iterable[service.SeriesKey], now: datetime | None = None) -> list[Alert]:
        """Checks each series (its own transaction: one failing does not stop the rest); returns the
        alerts this process opened."""
        now = now or self.clock()
        max_age = timedelta(seconds=self.settings.alert_max_age_s) if self.settings.alert_max_age_s else None
        opened: list[Alert] = []
        queued = 0
        for key in sorted(keys):
            try:
                async with self.sessionmaker() as session:
                    got = await service.check_series(session, key, now, max_age)
                    self.checks += 1
                    if got:
                        names = await service.names(session, [key[0]])
                        for a in got:
                            doc = service.out(a, names.get(a.machine_id, a.machine_id))
                            queued += await webhooks.enqueue(
                                session,
                                ALERT_OPENED,
                                a.id,
                                doc.model_dump(mode="json"),
                                doc.summary,
                                now,
                            )
                        await session.commit()
                        opened.extend(got)
                        if self.on_opened is not None:
                            for a in got:
                                self.on_opened(a.id)
                        for a in got:
                            log.info(
                                "alerts: opened %s: %s", a.id, service.summary(a, names.get(a.machine_id, ""))
                            )
            except Exception:
                log.exception("alerts: checking series %s failed", key)
        if opened:
            queued += await self._fleet_changes(opened, now)
        if queued and self.on_queued is not None:
            self.on_queued()
        return opened

    async def _fleet_changes(self, opened: Sequence[Alert], now: datetime) -> int:
        """Queues fleet_change.opened for the changes the opened alerts belong to, in a transaction of
        its own: the alerts stay opened (and their deliveries queued) if this fails."""
        try:
            async with self.sessionmaker() as session:
                queued = await notify.queue_opened(session, opened, now)
                await session.commit()
                return queued
        except Exception:
            log.exception("alerts: queuing the fleet changes of %d alerts failed", len(opened))
            return 0
