from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ctxbench_server.auth.deps import WriteDep
from ctxbench_server.compare.schemas import ShareCreate, ShareCreated, ShareOut
from ctxbench_server.db import SessionDep
from ctxbench_server.dispatch.deps import HubDep
from ctxbench_server.shares import service

router = APIRouter(prefix="/shares", tags=["shares"])


@router.post(
    "",
    status_code=201,
    response_model=ShareCreated,
    responses={
        422: {"description": "a view field does not validate (unknown machine included), or an unknown fact"}
    },
)
async def create_share(
    body: ShareCreate, request: Request, session: SessionDep, hub: HubDep, _who: WriteDep
) -> ShareCreated:
    """Computes the comparison the view describes now and freezes it: its result ids and its answer,
    with only the machine facts `facts` names (by default what a comparison needs: no hostname, kernel
    command line or vulnerabilities); the stored view lists them as `facts`. `url`: absolute under
    CTXBENCH_PUBLIC_URL when set, else relative to this server."""
    share = await service.create(session, body.view, await hub.online(), body.facts)
    public_url = request.app.state.settings.public_url or ""
    return ShareCreated(slug=share.slug, url=f"{public_url}/s/{share.slug}")


@router.get("/{slug}", response_model=ShareOut, responses={404: {"description": "unknown or malformed slug"}})
async def get_share(slug: str, session: SessionDep) -> JSONResponse:
    """Open without a credential: whoever has the link. The frozen comparison, identical forever
    whatever results come later (as GET /compare answered when it was shared, byte for byte in
    content), with only the machine facts its view's `facts` names (a share made before sharers chose:
    the default ones)."""
    share = await service.get(session, slug)
    return JSONResponse(
        {
            "view": share.view,
            "result_ids": share.result_ids,
            "created_at": share.created_at.isoformat().replace("+00:00", "Z"),
            "compare": service.shown(share),
        }
    )
