from __future__ import annotations

import contextlib
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from ctxbench_server.auth.deps import Principal, ReadDep, WriteDep
from ctxbench_server.db import SessionDep
from ctxbench_server.dispatch.deps import DispatcherDep, HubDep
from ctxbench_server.models import RunStatus
from ctxbench_server.push.deps import ChangesDep
from ctxbench_server.runs import edits, service
from ctxbench_server.runs.schemas import BatchInfo, BatchOut, ResultOut, RunCreate, RunOut, TitleNotePatch
from ctxbench_server.web.openapi import errors

router = APIRouter(prefix="/runs", tags=["runs"])
batches_router = APIRouter(prefix="/batches", tags=["runs"])
UNKNOWN_RUN, UNKNOWN_BATCH = "unknown run", "no such batch"
TOO_LONG = "`name` or `note` too long"


@router.post(
    "",
    status_code=201,
    response_model=RunOut | BatchOut,
    responses={
        201: {"description": "`machine_id`: the Run; `machine_ids`: {batch_id, runs}"},
        404: {"description": "unknown machine_id"},
        422: {"description": "a field does not validate (an unknown id in machine_ids included)"},
    },
)
async def create_run(
    body: RunCreate,
    request: Request,
    session: SessionDep,
    dispatcher: DispatcherDep,
    changes: ChangesDep,
    _who: WriteDep,
    items: Annotated[
        bool,
        Query(
            description="false: each run of the answer without its items (`items` empty, `progress` and "
            "`kernels` exact), as GET /runs?items=false"
        ),
    ] = True,
) -> Response:
    """Validates against every machine's catalog, stores one run per machine, and starts each at once
    if its agent is idle (else it waits in that machine's queue)."""
    created = await service.create_runs(session, body, request.app.state.settings)
    changes.runs(created.run_ids.values(), "created")
    started = await dispatcher.start(created.run_ids, from_rest=True)
    out = service.created_out(created, started, with_items=items)
    sent = out[0] if body.machine_ids is None else BatchOut(batch_id=created.batch_id, runs=out)
    # Sent as built: response_model only documents it (FastAPI would dump it, validate it again and
    # dump it once more).
    return Response(sent.model_dump_json(by_alias=True), 201, media_type="application/json")


@router.get(
    "",
    response_model=list[RunOut],
    responses={
        200: {
            "description": "a page of runs; when more follow, `X-Next-Cursor` holds the cursor of the next "
            'page and `Link` its URL (rel="next")'
        },
        422: {"description": "a cursor this server did not give"},
    },
)
async def list_runs(
    response: Response,
    request: Request,
    session: SessionDep,
    machine_id: str | None = None,
    status: RunStatus | None = None,
    batch_id: str | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: Annotated[
        str | None, Query(max_length=512, description="X-Next-Cursor of the page before")
    ] = None,
    items: Annotated[
        bool,
        Query(
            description="false: each run without its items (`items` empty, `progress` and `kernels` exact)"
        ),
    ] = True,
) -> list[RunOut]:
    """Newest first."""
    page = await service.list_runs(session, machine_id, limit, status, batch_id, cursor, items)
    if page.next_cursor:
        url = request.url.include_query_params(cursor=page.next_cursor)
        response.headers["X-Next-Cursor"] = page.next_cursor
        response.headers["Link"] = f'<{url.path}?{url.query}>; rel="next"'
    return page.runs


@router.get("/{run_id}", response_model=RunOut, responses=errors({404: UNKNOWN_RUN}))
async def get_run(run_id: str, session: SessionDep) -> RunOut:
    return service.run_out(await service.load_run(session, run_id))


@router.patch("/{run_id}", response_model=RunOut, responses=errors({404: UNKNOWN_RUN, 422: TOO_LONG}))
async def patch_run(
    run_id: str, body: TitleNotePatch, session: SessionDep, changes: ChangesDep, who: WriteDep
) -> RunOut:
    """A title (`name`, one line, at most 200 characters) and a free-text `note` (at most 4000); fields
    left out stay as they are, `null` or `""` clears one."""
    await edits.patch_run(session, run_id, body, who.name)
    changes.run(run_id)
    return service.run_out(await service.load_run(session, run_id))


@router.delete(
    "/{run_id}",
    status_code=204,
    responses=errors({404: UNKNOWN_RUN, 409: "queued or running: cancel it first"}),
)
async def delete_run(
    run_id: str, session: SessionDep, hub: HubDep, changes: ChangesDep, who: WriteDep
) -> Response:
    """Deletes a finished run with its items and results; compare falls back to the newest result left."""
    run = await service.load_run(session, run_id)
    async with hub.locks[run.machine_id]:  # not while a retry queues it again
        await edits.delete_run(session, run_id, who.name)
    changes.run(run_id, "deleted")
    return Response(status_code=204)


@router.post("/{run_id}/cancel", response_model=RunOut, responses=errors({409: "already finished"}))
async def cancel_run(run_id: str, session: SessionDep, dispatcher: DispatcherDep, _who: WriteDep) -> RunOut:
    await dispatcher.cancel(run_id)
    return service.run_out(await service.load_run(session, run_id))


@router.post(
    "/{run_id}/retry",
    response_model=RunOut,
    responses=errors({404: UNKNOWN_RUN, 409: "not finished, or nothing to retry"}),
)
async def retry_run(run_id: str, session: SessionDep, dispatcher: DispatcherDep, _who: WriteDep) -> RunOut:
    """Queues a finished run's unfinished items (failed, cancelled, never run) again, attempt + 1."""
    await dispatcher.retry(run_id)
    return service.run_out(await service.load_run(session, run_id))


@router.get("/{run_id}/results", response_model=list[ResultOut], responses=errors({404: UNKNOWN_RUN}))
async def list_results(run_id: str, session: SessionDep, history: bool = False) -> list[ResultOut]:
    """Each item's current result, measured ones only (failed items carry their error on the run's
    items); `history=true`: every result of every attempt, failed ones included."""
    return await service.list_results(session, run_id, history)


@router.get(
    "/{run_id}/events",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/event-stream": {}}},
        404: {"description": UNKNOWN_RUN},
        429: {"description": "this client has CTXBENCH_MAX_SSE_PER_CLIENT streams open"},
        503: {"description": "the server has CTXBENCH_MAX_SSE_TOTAL streams open"},
    },
)
async def run_events(
    run_id: str, request: Request, dispatcher: DispatcherDep, who: ReadDep
) -> StreamingResponse:
    """Server-Sent Events: `run` (the Run) at once and on every change, `result` per measured result,
    `end` (the final Run) last; `: keepalive` every 15 s. One reader per run serves all its streams."""
    sub = await dispatcher.events.subscribe(run_id, client_key(request, who))  # 404/429/503 before the stream
    return StreamingResponse(
        dispatcher.events.stream(sub),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        # The stream gives its budget back when it ends; this covers one whose client left before it began.
        background=BackgroundTask(dispatcher.events.release, sub),
    )


def client_key(request: Request, who: Principal | None) -> str:
    """Whose budget a stream counts against: its credential (the admin token, an API token, the browser
    sessions signed in with one), else (public reads) its address."""
    if who is not None:
        return f"{who.kind}:{who.token_id or who.name}"
    return f"addr:{request.client.host if request.client else '?'}"


@batches_router.get("/{batch_id}", response_model=BatchInfo, responses=errors({404: UNKNOWN_BATCH}))
async def get_batch(batch_id: str, session: SessionDep) -> BatchInfo:
    """A batch (the runs posted together, or one run alone): its title, note, runs and machines."""
    return await edits.batch_info(session, batch_id)


@batches_router.patch(
    "/{batch_id}", response_model=BatchInfo, responses=errors({404: UNKNOWN_BATCH, 422: TOO_LONG})
)
async def patch_batch(
    batch_id: str, body: TitleNotePatch, session: SessionDep, changes: ChangesDep, who: WriteDep
) -> BatchInfo:
    """A title and a note for the batch, as PATCH /runs/{id} gives one run."""
    await edits.patch_batch(session, batch_id, body, who.name)
    changes.batch(batch_id)
    return await edits.batch_info(session, batch_id)


@batches_router.delete(
    "/{batch_id}",
    status_code=204,
    responses=errors({404: UNKNOWN_BATCH, 409: "one of its runs is queued or running: cancel it first"}),
)
async def delete_batch(
    batch_id: str, session: SessionDep, hub: HubDep, changes: ChangesDep, who: WriteDep
) -> Response:
    """Deletes every run of the batch with their results: all of them, or none when one is unfinished."""
    info = await edits.batch_info(session, batch_id)
    async with contextlib.AsyncExitStack() as stack:
        for machine_id in sorted(info.machine_ids):  # one order everywhere: no deadlock
            await stack.enter_async_context(hub.locks[machine_id])
        await edits.delete_batch(session, batch_id, who.name)
    changes.batch(batch_id, "deleted")
    changes.runs(info.run_ids, "deleted")
    return Response(status_code=204)
