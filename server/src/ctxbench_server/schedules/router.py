from __future__ import annotations

from fastapi import APIRouter, Request, Response

from ctxbench_server.auth.deps import WriteDep
from ctxbench_server.config import Settings
from ctxbench_server.db import SessionDep
from ctxbench_server.models.base import utcnow
from ctxbench_server.schedules import service
from ctxbench_server.schedules.schemas import ScheduleCreate, ScheduleDetail, ScheduleOut, SchedulePatch
from ctxbench_server.web.openapi import errors

router = APIRouter(prefix="/schedules", tags=["schedules"])
UNKNOWN = "unknown schedule"
INVALID = "a field does not validate: a bad cron line, an interval under the minimum, a jitter over it, an "
INVALID += "unknown machine, or a run spec a selected machine refuses (loc under body.run)"


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


@router.post(
    "",
    status_code=201,
    response_model=ScheduleDetail,
    responses=errors({409: "CTXBENCH_MAX_SCHEDULES reached", 422: INVALID}),
)
async def create_schedule(
    body: ScheduleCreate, request: Request, session: SessionDep, who: WriteDep
) -> ScheduleDetail:
    """A run spec fired on a machine selection every `interval_s` or on a `cron` line (UTC). The spec is
    checked now against every machine selected now, as POST /runs checks it."""
    row = await service.create(session, body, _settings(request), who.name, utcnow())
    return await service.detail(session, row.id)


@router.get("", response_model=list[ScheduleOut])
async def list_schedules(session: SessionDep) -> list[ScheduleOut]:
    """Every schedule by name, with its next firing and its newest one."""
    return await service.list_schedules(session)


@router.get("/{schedule_id}", response_model=ScheduleDetail, responses=errors({404: UNKNOWN}))
async def get_schedule(schedule_id: str, session: SessionDep) -> ScheduleDetail:
    """The schedule, its next firing and its newest firings (the runs each made, the machines skipped)."""
    return await service.detail(session, schedule_id)


@router.patch("/{schedule_id}", response_model=ScheduleDetail, responses=errors({404: UNKNOWN, 422: INVALID}))
async def patch_schedule(
    schedule_id: str, body: SchedulePatch, request: Request, session: SessionDep, _who: WriteDep
) -> ScheduleDetail:
    """The fields given change; a new timing counts its next slot from now."""
    await service.patch(session, schedule_id, body, _settings(request), utcnow())
    return await service.detail(session, schedule_id)


@router.delete("/{schedule_id}", status_code=204, responses=errors({404: UNKNOWN}))
async def delete_schedule(schedule_id: str, session: SessionDep, _who: WriteDep) -> Response:
    """The schedule and its firings; the runs it made stay."""
    await service.remove(session, schedule_id)
    return Response(status_code=204)


@router.post("/{schedule_id}/pause", response_model=ScheduleDetail, responses=errors({404: UNKNOWN}))
async def pause_schedule(
    schedule_id: str, request: Request, session: SessionDep, _who: WriteDep
) -> ScheduleDetail:
    """No firing until resumed (a firing already stored stays)."""
    await service.set_paused(session, schedule_id, True, _settings(request), utcnow())
    return await service.detail(session, schedule_id)


@router.post("/{schedule_id}/resume", response_model=ScheduleDetail, responses=errors({404: UNKNOWN}))
async def resume_schedule(
    schedule_id: str, request: Request, session: SessionDep, _who: WriteDep
) -> ScheduleDetail:
    """Fires again from the next slot after now: the slots missed while paused do not fire."""
    await service.set_paused(session, schedule_id, False, _settings(request), utcnow())
    return await service.detail(session, schedule_id)
