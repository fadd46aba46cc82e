"""Webhooks: the configured URLs, and the outbox of deliveries the sender works through
(webhooks/sender.py). Producers (alerts) call `enqueue` inside the transaction that makes the event,
so an event is queued exactly when it is stored, by the one process that stored it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.config import Settings
from ctxbench_server.errors import Conflict, NotFound
from ctxbench_server.models import Webhook, WebhookDelivery
from ctxbench_server.models.base import new_id
from ctxbench_server.webhooks import signing
from ctxbench_server.webhooks.schemas import (
    DELIVERIES_SHOWN,
    DeliveryOut,
    DeliveryStatus,
    WebhookCreate,
    WebhookCreated,
    WebhookOut,
    WebhookPatch,
)

MAX_PENDING = 1000  # per webhook: a receiver down for long holds at most this many; later ones are dropped
KEEP = 500  # deliveries kept per webhook (the newest; older finished ones are deleted)
PRUNE_EVERY = 50  # ... checked when this many more have been stored


async def get(session: AsyncSession, webhook_id: str) -> Webhook:
    hook = await session.get(Webhook, webhook_id)
    if hook is None:
        raise NotFound(f"unknown webhook {webhook_id!r}")
    return hook


def delivery_out(d: WebhookDelivery) -> DeliveryOut:
    return DeliveryOut.model_validate(
        {c: getattr(d, c) for c in DeliveryOut.model_fields if c != "status"} | {"status": d.status}
    )


async def out(session: AsyncSession, hook: Webhook) -> WebhookOut:
    pending = await session.scalar(
        select(func.count()).where(
            WebhookDelivery.webhook_id == hook.id, WebhookDelivery.status == DeliveryStatus.PENDING.value
        )
    )
    last = await session.scalar(
        select(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == hook.id)
        .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
        .limit(1)
    )
    return WebhookOut(
        id=hook.id,
        name=hook.name,
        url=hook.url,
        format=hook.format,  # type: ignore[arg-type]
        events=hook.events,
        enabled=hook.enabled,
        created_by=hook.created_by,
        created_at=hook.created_at,
        updated_at=hook.updated_at,
        pending=int(pending or 0),
        last_delivery=delivery_out(last) if last is not None else None,
    )


async def create(
    session: AsyncSession, body: WebhookCreate, settings: Settings, who: str, now: datetime
) -> WebhookCreated:
    count = await session.scalar(select(func.count()).select_from(Webhook))
    if (count or 0) >= settings.max_webhooks:
        raise Conflict(f"at most {settings.max_webhooks} webhooks (CTXBENCH_MAX_WEBHOOKS): delete one first")
    hook = Webhook(
        id=new_id(),
        name=body.name,
        url=body.url,
        secret=body.secret or signing.new_secret(),
        format=body.format.value,
        events=list(dict.fromkeys(body.events)),
        enabled=body.enabled,
        created_by=who,
        created_at=now,
        updated_at=now,
    )
    session.add(hook)
    await session.commit()
    return WebhookCreated(**(await out(session, hook)).model_dump(), secret=hook.secret)


async def rotate(session: AsyncSession, webhook_id: str, now: datetime) -> WebhookCreated:
    hook = await get(session, webhook_id)
    hook.secret, hook.updated_at = signing.new_secret(), now
    await session.commit()
    return WebhookCreated(**(await out(session, hook)).model_dump(), secret=hook.secret)


async def patch(session: AsyncSession, webhook_id: str, body: WebhookPatch, now: datetime) -> Webhook:
    hook = await get(session, webhook_id)
    for field in body.model_fields_set:
        value = getattr(body, field)
        if value is None:
            continue  # none of these fields may be cleared
        if field == "format":
            value = value.value
        if field == "events":
            value = list(dict.fromkeys(value))
        setattr(hook, field, value)
    hook.updated_at = now
    await session.commit()
    return hook


async def remove(session: AsyncSession, webhook_id: str) -> None:
    hook = await get(session, webhook_id)
    await session.delete(hook)
    await session.commit()


async def list_webhooks(session: AsyncSession) -> list[WebhookOut]:
    hooks = await session.scalars(select(Webhook).order_by(Webhook.name, Webhook.id))
    return [await out(session, h) for h in hooks]


async def deliveries(
    session: AsyncSession, webhook_id: str, limit: int = DELIVERIES_SHOWN
) -> list[DeliveryOut]:
    await get(session, webhook_id)
    rows = await session.scalars(
        select(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == webhook_id)
        .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
        .limit(limit)
    )
    return [delivery_out(d) for d in rows]


async def subscribed(session: AsyncSession, event: str) -> bool:
    """Whether an enabled webhook subscribes to the event (a producer skips the work of making one
    nobody receives)."""
    rows = await session.execute(select(Webhook.events).where(Webhook.enabled.is_(True)))
    return any(event in events for (events,) in rows)


def _insert(dialect: str, rows: list[dict[str, Any]]) -> Any:
    ins = (postgresql if dialect == "postgresql" else sqlite).insert(WebhookDelivery).values(rows)
    return ins.on_conflict_do_nothing(index_elements=["webhook_id", "event", "subject_id"])


async def enqueue(
    session: AsyncSession,
    event: str,
    subject_id: str,
    body: Mapping[str, Any],
    summary: str,
    now: datetime,
    webhook_ids: list[str] | None = None,
) -> int:
    """Queues the event for every enabled webhook subscribed to it (or the ones named), in the
    caller's transaction; returns how many deliveries were queued. A webhook already holding
    MAX_PENDING deliveries gets this one as failed ("dropped"): the log shows what it missed."""
    q = select(Webhook.id, Webhook.events, Webhook.enabled)
    if webhook_ids is not None:
        q = q.where(Webhook.id.in_(webhook_ids))
    hooks = [
        h
        for h, events, enabled in await session.execute(q)
        if webhook_ids is not None or (enabled and event in events)
    ]
    if not hooks:
        return 0
    counted = await session.execute(
        select(WebhookDelivery.webhook_id, func.count())
        .where(WebhookDelivery.webhook_id.in_(hooks), WebhookDelivery.status == DeliveryStatus.PENDING.value)
        .group_by(WebhookDelivery.webhook_id)
    )
    pending: dict[str, int] = {h: n for h, n in counted}
    rows = []
    for h in hooks:
        full = pending.get(h, 0) >= MAX_PENDING
        rows.append(
            {
                "id": new_id(),
                "webhook_id": h,
                "event": event,
                "subject_id": subject_id,
                "body": dict(body),
                "summary": summary,
                "status": (DeliveryStatus.FAILED if full else DeliveryStatus.PENDING).value,
                "attempts": 0,
                "next_attempt_at": None if full else now,
                "last_status_code": None,
                "last_error": f"dropped: {MAX_PENDING} deliveries already pending" if full else None,
                "log": [],
                "created_at": now,
                "delivered_at": None,
            }
        )
    await session.execute(_insert(session.get_bind().dialect.name, rows))
    for h in hooks:
        await _prune(session, h)
    return sum(1 for r in rows if r["status"] == DeliveryStatus.PENDING.value)


async def _prune(session: AsyncSession, webhook_id: str) -> None:
    """Keeps the newest KEEP deliveries of a webhook (and every pending one)."""
    n = await session.scalar(select(func.count()).where(WebhookDelivery.webhook_id == webhook_id))
    if (n or 0) <= KEEP + PRUNE_EVERY:
        return
    cutoff = await session.scalar(
        select(WebhookDelivery.created_at)
        .where(WebhookDelivery.webhook_id == webhook_id)
        .order_by(WebhookDelivery.created_at.desc())
        .offset(KEEP)
        .limit(1)
    )
    if cutoff is not None:
        await session.execute(
            delete(WebhookDelivery).where(
                WebhookDelivery.webhook_id == webhook_id,
                WebhookDelivery.created_at <= cutoff,
                WebhookDelivery.status != DeliveryStatus.PENDING.value,
            )
        )
