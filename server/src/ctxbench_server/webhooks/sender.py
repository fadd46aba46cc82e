"""The sender: each server process looks for due deliveries every CTXBENCH_WEBHOOK_TICK_S (and at once
when this process queued one) and POSTs them, a few at a time, off the request and ingest paths.

An attempt is claimed in the database before it is made:

    UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = :lease
     WHERE id = :id AND status = 'pending' AND attempts = :attempts

One row changed: this process makes the attempt (the lease, the timeout and a margin, puts it out of
the other senders' reach meanwhile; a process that dies mid-attempt leaves it to the next tick after
the lease). A 2xx answer delivers it; a 5xx, 408, 429 or no answer retries after webhook_backoff_s,
doubling each time up to webhook_backoff_cap_s, until webhook_max_attempts; any other 4xx fails it at
once (the receiver refuses it: trying again would not change that)."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import anyio
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server import __version__
from ctxbench_server.config import Settings
from ctxbench_server.models import Webhook, WebhookDelivery
from ctxbench_server.models.base import utcnow
from ctxbench_server.webhooks import signing
from ctxbench_server.webhooks.schemas import DeliveryStatus, WebhookFormat

log = logging.getLogger(__name__)
DUE_PER_TICK = 50
CONCURRENCY = 4  # POSTs in flight per process
MAX_ERROR = 500  # characters of an error kept
RETRY_STATUS = {408, 429}


def payload(hook_format: str, d: WebhookDelivery) -> bytes:
    """The body POSTed: the signed event document, or Slack's {"text": ...}."""
    if hook_format == WebhookFormat.SLACK:
        doc: dict[str, Any] = {"text": d.summary}
    else:
        doc = {
            "event": d.event,
            "delivery_id": d.id,
            "created_at": d.created_at.isoformat(),
            "summary": d.summary,
            "data": d.body,
        }
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def post(url: str, body: bytes, headers: dict[str, str], timeout_s: float) -> int:
    """One POST (no redirects followed); the answer's status. Raises OSError on no answer."""
    u = urlsplit(url)
    conn_cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
    conn = conn_cls(u.hostname or "", u.port, timeout=timeout_s)
    try:
        path = (u.path or "/") + (f"?{u.query}" if u.query else "")
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        resp.read(64 * 1024)  # a receiver's answer is not kept; read a little so the connection ends cleanly
        return resp.status
    finally:
        conn.close()


def backoff(settings: Settings, attempts: int) -> float:
    """Seconds before attempt `attempts + 1`."""
    return float(min(settings.webhook_backoff_cap_s, settings.webhook_backoff_s * 2 ** (attempts - 1)))


class Sender:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        settings: Settings,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.settings = settings
        self.clock = clock
        self._wake = asyncio.Event()
        self._slots = asyncio.Semaphore(CONCURRENCY)

    def wake(self) -> None:
        """Deliveries were queued by this process: look now, not at the next tick."""
        self._wake.set()

    async def run(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception:
                log.exception("webhooks: a tick failed")
            try:
                async with asyncio.timeout(self.settings.webhook_tick_s):
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()

    async def tick(self, now: datetime | None = None) -> int:
        """Attempts every due delivery this process claims; returns how many it attempted."""
        now = now or self.clock()
        async with self.sessionmaker() as session:
            due = (
                await session.execute(
                    select(WebhookDelivery.id, WebhookDelivery.attempts)
                    .where(
                        WebhookDelivery.status == DeliveryStatus.PENDING.value,
                        WebhookDelivery.next_attempt_at <= now,
                    )
                    .order_by(WebhookDelivery.next_attempt_at)
                    .limit(DUE_PER_TICK)
                )
            ).all()
        done = await asyncio.gather(*(self._attempt(d_id, attempts, now) for d_id, attempts in due))
        return sum(done)

    async def _attempt(self, delivery_id: str, attempts: int, now: datetime) -> bool:
        s = self.settings
        lease = now + timedelta(seconds=s.webhook_timeout_s + 30)
        async with self.sessionmaker() as session:
            claim = await session.execute(
                update(WebhookDelivery)
                .where(
                    WebhookDelivery.id == delivery_id,
                    WebhookDelivery.status == DeliveryStatus.PENDING.value,
                    WebhookDelivery.attempts == attempts,
                )
                .values(attempts=attempts + 1, next_attempt_at=lease)
            )
            await session.commit()
            if claim.rowcount != 1:  # type: ignore[attr-defined]
                return False
            d = await session.get(WebhookDelivery, delivery_id)
            hook = await session.get(Webhook, d.webhook_id) if d is not None else None
            if d is None or hook is None:
                return False
            body = payload(hook.format, d)
            url, secret = hook.url, hook.secret
        async with self._slots:
            started = time.monotonic()
            ts = int(time.time())
            headers = {
                "Content-Type": "application/json",
                "User-Agent": f"ctxbench/{__version__}",
                signing.EVENT: d.event,
                signing.DELIVERY: d.id,
                signing.TIMESTAMP: str(ts),
                signing.SIGNATURE: signing.sign(secret, ts, body),
            }
            status: int | None = None
            error: str | None = None
            try:
                status = await anyio.to_thread.run_sync(post, url, body, headers, s.webhook_timeout_s)
            except Exception as e:  # no answer: refused, reset, timed out, TLS
                error = f"{type(e).__name__}: {e}"[:MAX_ERROR] or type(e).__name__
            ms = int((time.monotonic() - started) * 1000)
        await self._record(delivery_id, attempts + 1, status, error, ms)
        return True

    async def _record(
        self, delivery_id: str, attempt: int, status: int | None, error: str | None, ms: int
    ) -> None:
        s = self.settings
        now = self.clock()
        ok = status is not None and 200 <= status < 300
        if status is not None and not ok:
            error = f"HTTP {status}"
        retry = not ok and (status is None or status >= 500 or status in RETRY_STATUS)
        async with self.sessionmaker() as session:
            d = await session.get(WebhookDelivery, delivery_id)
            if d is None:
                return  # its webhook was deleted meanwhile
            d.log = [*d.log, {"at": now.isoformat(), "status_code": status, "error": error, "ms": ms}]
            d.last_status_code, d.last_error = status, error
            if ok:
                d.status, d.delivered_at, d.next_attempt_at = DeliveryStatus.DELIVERED.value, now, None
            elif retry and attempt < s.webhook_max_attempts:
                d.next_attempt_at = now + timedelta(seconds=backoff(s, attempt))
            else:
                d.status, d.next_attempt_at = DeliveryStatus.FAILED.value, None
                log.warning("webhooks: delivery %s failed after %d attempt(s): %s", d.id, attempt, error)
            await session.commit()
