from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from ctxbench_server.auth.deps import ReadDep
from ctxbench_server.push.deps import ChangesDep
from ctxbench_server.runs.router import client_key

router = APIRouter(tags=["events"])


@router.get(
    "/events",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/event-stream": {}}},
        429: {"description": "this client has CTXBENCH_MAX_SSE_PER_CLIENT streams open"},
        503: {"description": "the server has CTXBENCH_MAX_SSE_TOTAL streams open"},
    },
)
async def events(
    request: Request,
    changes: ChangesDep,
    who: ReadDep,
    last_event_id: Annotated[str | None, Header(max_length=64)] = None,
) -> StreamingResponse:
    """Server-Sent Events for the whole explorer: `machine` {id, what: online|offline|renamed|changed|
    deleted}, `run` {id, what: created|changed|deleted, status, machine_id, batch_id}, `batch` {id, what:
    changed|deleted}, each with an `id:`; `resync` (refetch everything) when a reconnect's
    `Last-Event-ID` is too old or from another server process; `retry: 3000`; `: keepalive` every 15 s.
    Changes are coalesced (at most one event per thing every 0.25 s)."""
    stream = changes.subscribe(client_key(request, who), last_event_id)  # 429/503 before the stream
    return StreamingResponse(
        changes.stream(stream),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        background=BackgroundTask(changes.release, stream),
    )
