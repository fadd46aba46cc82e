from __future__ import annotations

from fastapi import APIRouter, Request, Response

from ctxbench_server.auth.deps import AdminDep
from ctxbench_server.config import Settings
from ctxbench_server.db import SessionDep
from ctxbench_server.models.base import new_id, utcnow
from ctxbench_server.web.openapi import errors
from ctxbench_server.webhooks import service
from ctxbench_server.webhooks.schemas import (
    DeliveryOut,
    WebhookCreate,
    WebhookCreated,
    WebhookOut,
    WebhookPatch,
)

# Every route needs an admin: a webhook's URL and its deliveries say where the fleet's news goes.
router = APIRouter(prefix="/webhooks", tags=["webhooks"])
UNKNOWN = "unknown webhook"


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _wake(request: Request) -> None:
    sender = getattr(request.app.state, "webhook_sender", None)
    if sender is not None:
        sender.wake()


@router.post(
    "",
    status_code=201,
    response_model=WebhookCreated,
    responses=errors({409: "CTXBENCH_MAX_WEBHOOKS reached", 422: "a field does not validate"}),
)
async def create_webhook(
    body: WebhookCreate, request: Request, session: SessionDep, who: AdminDep
) -> WebhookCreated:
    """A URL that gets the events it subscribes to POSTed as JSON (or Slack's `{"text": ...}`), signed
    with HMAC-SHA256 (`X-Ctxbench-Signature`, over `X-Ctxbench-Timestamp` "." body). The secret is in
    this answer only."""
    return await service.create(session, body, _settings(request), who.name, utcnow())


@router.get("", response_model=list[WebhookOut])
async def list_webhooks(session: SessionDep, _who: AdminDep) -> list[WebhookOut]:
    return await service.list_webhooks(session)


@router.get("/{webhook_id}", response_model=WebhookOut, responses=errors({404: UNKNOWN}))
async def get_webhook(webhook_id: str, session: SessionDep, _who: AdminDep) -> WebhookOut:
    return await service.out(session, await service.get(session, webhook_id))


@router.patch("/{webhook_id}", response_model=WebhookOut, responses=errors({404: UNKNOWN}))
async def patch_webhook(
    webhook_id: str, body: WebhookPatch, session: SessionDep, _who: AdminDep
) -> WebhookOut:
    """The fields given change (the secret only by rotating it)."""
    return await service.out(session, await service.patch(session, webhook_id, body, utcnow()))


@router.delete("/{webhook_id}", status_code=204, responses=errors({404: UNKNOWN}))
async def delete_webhook(webhook_id: str, session: SessionDep, _who: AdminDep) -> Response:
    """The webhook and its delivery log; deliveries not yet made are not made."""
    await service.remove(session, webhook_id)
    return Response(status_code=204)


@router.post("/{webhook_id}/rotate-secret", response_model=WebhookCreated, responses=errors({404: UNKNOWN}))
async def rotate_secret(webhook_id: str, session: SessionDep, _who: AdminDep) -> WebhookCreated:
    """A new secret, in this answer only; deliveries from now on are signed with it."""
    return await service.rotate(session, webhook_id, utcnow())


@router.post(
    "/{webhook_id}/test", response_model=DeliveryOut, status_code=202, responses=errors({404: UNKNOWN})
)
async def test_webhook(webhook_id: str, request: Request, session: SessionDep, _who: AdminDep) -> DeliveryOut:
    """Queues a `ping` event to this webhook (enabled or not), delivered like any other."""
    await service.get(session, webhook_id)
    subject = new_id()
    now = utcnow()
    await service.enqueue(
        session, "ping", subject, {"webhook_id": webhook_id}, "ctxbench: test delivery", now, [webhook_id]
    )
    await session.commit()
    _wake(request)
    [d] = [d for d in await service.deliveries(session, webhook_id, 10) if d.subject_id == subject]
    return d


@router.get("/{webhook_id}/deliveries", response_model=list[DeliveryOut], responses=errors({404: UNKNOWN}))
async def list_deliveries(webhook_id: str, session: SessionDep, _who: AdminDep) -> list[DeliveryOut]:
    """The newest 100 deliveries: each attempt's status or error, and what is still to come."""
    return await service.deliveries(session, webhook_id)
