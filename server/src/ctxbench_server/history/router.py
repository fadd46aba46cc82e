from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from ctxbench_server.compare.service import split_list
from ctxbench_server.contract.aliases import canonical
from ctxbench_server.db import SessionDep
from ctxbench_server.history import service
from ctxbench_server.history.schemas import ChangesOut, HistoryOut, PointKey

router = APIRouter(tags=["history"])


@router.get(
    "/history",
    response_model=HistoryOut,
    responses={404: {"description": "unknown machine"}, 422: {"description": "no such point; params needed"}},
)
async def history(
    session: SessionDep,
    machine: Annotated[str, Query(max_length=64)],
    kernel: Annotated[str, Query(max_length=200)],
    params: Annotated[
        str | None, Query(max_length=4096, description='canonical params key "a=1&b=x"')
    ] = None,
) -> dict[str, Any]:
    """One kernel point on one machine over time (the newest 200 runs): each run's median and CI, the
    machine's fact changes between runs, and the steps in the series, each tested with Compare's rule
    (the ratio's CI must clear the run-to-run noise)."""
    return await service.series(session, machine, canonical(kernel), params)


@router.get(
    "/history/points", response_model=list[PointKey], responses={404: {"description": "unknown machine"}}
)
async def history_points(
    session: SessionDep,
    machine: Annotated[str, Query(max_length=64)],
    kernel: Annotated[str, Query(max_length=200)],
) -> list[dict[str, Any]]:
    """The parameter points of a kernel that have results on a machine, with how many runs each."""
    await service.machine_or_404(session, machine)
    return await service.points_of(session, machine, canonical(kernel))


@router.get("/changes", response_model=ChangesOut)
async def fleet_changes(
    session: SessionDep,
    machines: Annotated[
        str | None, Query(max_length=20_000, description="comma-separated machine ids")
    ] = None,
    since: datetime | None = None,
    include_all: Annotated[
        bool, Query(alias="all", description="also the steps that are not significant")
    ] = False,
    limit: Annotated[int, Query(ge=1, le=service.MAX_CHANGES)] = 100,
) -> dict[str, Any]:
    """Steps detected across the fleet (every machine, kernel and point), newest first."""
    return await service.fleet_changes(session, split_list(machines), since, include_all, limit)
