"""fleet_change.opened: the fleet changes that the alerts a check just opened belong to, queued for the
webhooks subscribed to that event (webhooks/service.enqueue: signed, retried, once per webhook and
change id by webhook_deliveries' unique (webhook, event, subject)).

A fleet change is not stored (docs/architecture.md "Fleet changes and peers"): what makes one "new" is
an alert opening on one of its steps, so the alert watcher calls this after each check that opened
some. The changes are read as GET /fleet-changes shows them with its defaults (the 14 days up to now, a
24 h window, 2 hosts), so the id a receiver gets is the one the API and the explorer show; a change
that a later host joins keeps its id and is not sent again."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.fleetchanges import service
from ctxbench_server.history.series_steps import chunks
from ctxbench_server.models import Alert
from ctxbench_server.webhooks import service as webhooks

FLEET_CHANGE_OPENED = "fleet_change.opened"
PAGE = 200


async def queue_opened(session: AsyncSession, opened: Sequence[Alert], now: datetime) -> int:
    """Queues, in the caller's transaction, each fleet change holding the step of one of these alerts;
    returns how many deliveries were queued. Reads nothing when no enabled webhook subscribes."""
    if not opened or not await webhooks.subscribed(session, FLEET_CHANGE_OPENED):
        return 0
    steps = {(a.machine_id, a.run_id) for a in opened}
    points = {(a.kernel_id, a.params_key) for a in opened}
    oldest = min(a.at for a in opened)  # a change holding a step ends at or after it (newest first)
    queued = 0
    for kernels in chunks(sorted({k for k, _ in points}), service.MAX_KERNELS):
        cursor = None
        while True:
            q = service.FleetQuery(
                since=now - service.DEFAULT_RANGE,
                until=now,
                window=timedelta(hours=service.DEFAULT_WINDOW_HOURS),
                kernels=kernels,
                min_hosts=service.DEFAULT_MIN_HOSTS,
                limit=PAGE,
                cursor=cursor,
            )
            got = await service.fleet_changes(session, q)
            for c in got.fleet_changes:
                if (c.kernel, c.params_key) in points and any(
                    (h.machine_id, h.run_id) in steps for h in c.hosts
                ):
                    doc = c.model_dump(mode="json")
                    queued += await webhooks.enqueue(session, FLEET_CHANGE_OPENED, c.id, doc, c.summary, now)
            if got.next_cursor is None or got.fleet_changes[-1].last_at < oldest:
                break
            cursor = (got.fleet_changes[-1].last_at, got.fleet_changes[-1].id)
    return queued
