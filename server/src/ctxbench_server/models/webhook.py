from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ctxbench_server.models.base import Base, UTCDateTime, new_id, utcnow


class Webhook(Base):
    """A URL that gets events POSTed as JSON, signed with its secret (migration 0015; webhooks/ owns
    the rules). The secret is stored as given, not hashed: the server needs it to sign every delivery."""

    __tablename__ = "webhooks"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    url: Mapped[str] = mapped_column(String(2048))
    secret: Mapped[str] = mapped_column(String(128))
    format: Mapped[str] = mapped_column(String(16), default="json")  # json | slack
    events: Mapped[list[str]] = mapped_column(JSON, default=list)  # e.g. ["alert.opened"]
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_by: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class WebhookDelivery(Base):
    """One event for one webhook: its body, and every attempt to POST it. Unique per (webhook, event,
    subject), so an event stored twice is delivered once. A sender claims an attempt by moving
    next_attempt_at on from the value it read (one sender per attempt, however many servers)."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint("webhook_id", "event", "subject_id"),
        # The senders' query: pending deliveries whose next attempt is due.
        Index("ix_webhook_deliveries_status_next", "status", "next_attempt_at"),
        # The delivery log of one webhook, newest first.
        Index("ix_webhook_deliveries_webhook_created", "webhook_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    webhook_id: Mapped[str] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"))
    event: Mapped[str] = mapped_column(String(64))
    subject_id: Mapped[str] = mapped_column(String(64))  # the alert's id, for "alert.opened"
    body: Mapped[dict[str, Any]] = mapped_column(JSON)  # the event's JSON document
    summary: Mapped[str] = mapped_column(Text, default="")  # one line, the Slack format's text
    status: Mapped[str] = mapped_column(String(16), default="pending")  # pending | delivered | failed
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    last_status_code: Mapped[int | None] = mapped_column(Integer, default=None)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    # [{at, status_code, error, ms}], one per attempt (at most the attempts allowed)
    log: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
