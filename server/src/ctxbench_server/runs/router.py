from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from ctxbench_server.agents.deps import DispatcherDep
from ctxbench_server.db import SessionDep
from ctxbench_server.models import RunStatus
from ctxbench_server.runs import events, service
from ctxbench_server.runs.schemas import ResultOut, RunCreate, RunOut

router = APIRouter(prefix="/runs", tags=["runs"])


@router.post(
    "",
    status_code=201,
    response_model=RunOut,
    responses={404: {"description": "unknown machine"}, 422: {"description": "a field does not validate"}},
)
async def create_run(
    body: RunCreate, request: Request, session: SessionDep, dispatcher: DispatcherDep
) -> RunOut:
    """Validates against the machine's catalog, stores the run, and starts it at once if the agent is idle."""
    run = await service.create_run(session, body, request.app.state.settings.item_timeout_s)
    await dispatcher.kick(run.machine_id)
    return service.run_out(await service.load_run(session, run.id))


@router.get("", response_model=list[RunOut])
async def list_runs(
    session: SessionDep,
    machine_id: str | None = None,
    status: RunStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[RunOut]:
    """Newest first."""
    return await service.list_runs(session, machine_id, limit, status)


@router.get("/{run_id}", response_model=RunOut, responses={404: {"description": "unknown run"}})
async def get_run(run_id: str, session: SessionDep) -> RunOut:
    return service.run_out(await service.load_run(session, run_id))


@router.post("/{run_id}/cancel", response_model=RunOut, responses={409: {"description": "already finished"}})
async def cancel_run(run_id: str, session: SessionDep, dispatcher: DispatcherDep) -> RunOut:
    await dispatcher.cancel(run_id)
    return service.run_out(await service.load_run(session, run_id))


@router.get(
    "/{run_id}/results", response_model=list[ResultOut], responses={404: {"description": "unknown run"}}
)
async def list_results(run_id: str, session: SessionDep) -> list[ResultOut]:
    """Measured items only; failed items carry their error on the run's items."""
    return await service.list_results(session, run_id)


@router.get(
    "/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, 404: {"description": "unknown run"}},
)
async def run_events(
    run_id: str, request: Request, session: SessionDep, dispatcher: DispatcherDep
) -> StreamingResponse:
    """Server-Sent Events: `progress` (the Run) on every change, `result` per measured result, `end` last."""
    await service.load_run(session, run_id)  # 404 before the stream starts
    await session.close()
    return StreamingResponse(
        events.stream(dispatcher.events, request.app.state.sessionmaker, run_id),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
