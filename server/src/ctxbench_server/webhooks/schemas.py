"""Webhooks as the API takes and gives them, for OpenAPI."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ctxbench_server.sql.text import Title

MAX_URL = 2048
MIN_SECRET, MAX_SECRET = 16, 128
DELIVERIES_SHOWN = 100  # GET /webhooks/{id}/deliveries: at most this many, newest first
# What a webhook may subscribe to; "ping" is sent by POST /{id}/test. Left out, `events` is
# DEFAULT_EVENTS: a receiver written for alerts is not sent a second document shape it did not ask for.
EVENTS = ("alert.opened", "fleet_change.opened")
DEFAULT_EVENTS = ("alert.opened",)


class WebhookFormat(StrEnum):
    JSON = "json"  # the event document, signed
    SLACK = "slack"  # {"text": one line}: what a Slack (or Mattermost, Discord /slack) incoming webhook takes


class DeliveryStatus(StrEnum):
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


def _http_url(v: str) -> str:
    u = urlsplit(v)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError("an http:// or https:// URL with a host")
    if any(c.isspace() or ord(c) < 32 for c in v):
        raise ValueError("no spaces or control characters in the URL")
    try:
        u.port  # noqa: B018  # a port out of range raises here
    except ValueError as e:
        raise ValueError(f"bad port: {e}") from None
    return v


Url = Annotated[str, Field(min_length=1, max_length=MAX_URL), AfterValidator(_http_url)]
Secret = Annotated[str, Field(min_length=MIN_SECRET, max_length=MAX_SECRET, pattern=r"^[\x21-\x7e]+$")]
Event = Annotated[str, Field(pattern="^(" + "|".join(e.replace(".", r"\.") for e in EVENTS) + ")$")]


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Title = Field(min_length=1, description="one line, at most 200 characters")
    url: Url = Field(description="where events are POSTed: http:// or https://, at most 2048 characters")
    format: WebhookFormat = WebhookFormat.JSON
    events: list[Event] = Field(
        default_factory=lambda: list(DEFAULT_EVENTS),
        min_length=1,
        max_length=len(EVENTS),
        description="alert.opened (the default), fleet_change.opened",
    )
    secret: Secret | None = Field(
        default=None,
        description="the HMAC key (16-128 printable ASCII characters); left out, the server makes one. "
        "Shown only in this answer",
    )
    enabled: bool = True


class WebhookPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Title | None = Field(default=None, min_length=1)
    url: Url | None = None
    format: WebhookFormat | None = None
    events: list[Event] | None = Field(default=None, min_length=1, max_length=len(EVENTS))
    enabled: bool | None = None


class WebhookOut(BaseModel):
    id: str
    name: str
    url: str
    format: WebhookFormat
    events: list[str]
    enabled: bool
    created_by: str | None
    created_at: datetime
    updated_at: datetime
    pending: int = Field(description="deliveries waiting for an attempt")
    last_delivery: DeliveryOut | None


class WebhookCreated(WebhookOut):
    secret: str = Field(description="the HMAC key: shown here once, never again (rotate for a new one)")


class AttemptOut(BaseModel):
    at: datetime
    status_code: int | None = Field(description="the receiver's HTTP status; null when none came")
    error: str | None
    ms: int = Field(description="how long the attempt took")


class DeliveryOut(BaseModel):
    id: str
    webhook_id: str
    event: str
    subject_id: str
    summary: str
    status: DeliveryStatus
    attempts: int
    next_attempt_at: datetime | None
    last_status_code: int | None
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None
    log: list[AttemptOut]
    body: dict[str, Any] = Field(description="the event's data (the JSON format sends it under `data`)")


WebhookOut.model_rebuild()
WebhookCreated.model_rebuild()
