"""GET /metrics (outside /api/v1, where Prometheus looks by default); a read credential like every read."""

from __future__ import annotations

from fastapi import APIRouter, Response

from ctxbench_server.db import SessionDep
from ctxbench_server.dispatch.deps import HubDep
from ctxbench_server.metrics import service
from ctxbench_server.metrics.exposition import CONTENT_TYPE
from ctxbench_server.web.openapi import errors

router = APIRouter(tags=["metrics"])


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE: {"schema": {"type": "string"}}}, "description": "OpenMetrics text"},
        **errors({401: "no credential (unless CTXBENCH_PUBLIC_READ=true)"}),
    },
)
async def metrics(session: SessionDep, hub: HubDep) -> Response:
    """Agents online, machines and runs by status, and the median of each machine's newest result per
    kernel and parameter point (at most 10 000 points; `ctxbench_result_points_dropped` counts the rest),
    in the OpenMetrics text format. Scrape it with `authorization: Bearer <read token>`."""
    return Response(await service.exposition(session, await hub.online()), media_type=CONTENT_TYPE)
