from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Query

from ctxbench_server.compare.service import split_list
from ctxbench_server.contract.aliases import canonical_list
from ctxbench_server.db import SessionDep
from ctxbench_server.errors import ValidationFailed, field_error
from ctxbench_server.fleetchanges import peers, service
from ctxbench_server.fleetchanges.schemas import FleetChangesOut, PeersOut
from ctxbench_server.models.base import utcnow
from ctxbench_server.web.openapi import errors

router = APIRouter(tags=["fleet"])
BAD = "a parameter out of its budget (named): range, kernels, cursor"
MAX_KERNEL_CHARS = 4000


def kernel_list(kernel: str | None, most: int) -> list[str]:
    kernels = canonical_list(split_list(kernel))
    if len(kernels) > most:
        raise ValidationFailed(
            [field_error(["query", "kernel"], f"at most {most} kernel ids (got {len(kernels)})")]
        )
    return kernels


@router.get("/fleet-changes", response_model=FleetChangesOut, responses=errors({422: BAD}))
async def fleet_changes(
    session: SessionDep,
    since: Annotated[datetime | None, Query(description="default: 14 days before `until`")] = None,
    until: Annotated[datetime | None, Query(description="default: now")] = None,
    window_hours: Annotated[
        int, Query(ge=1, le=168, description="steps at most this far after a group's first are one change")
    ] = service.DEFAULT_WINDOW_HOURS,
    kernel: Annotated[
        str | None, Query(max_length=MAX_KERNEL_CHARS, description="comma-separated kernel ids (at most 50)")
    ] = None,
    min_hosts: Annotated[
        int, Query(ge=2, le=1000, description="hosts that must step together")
    ] = service.DEFAULT_MIN_HOSTS,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=service.MAX_CURSOR, description="next_cursor")] = None,
) -> FleetChangesOut:
    """Steps (History's rule, as alerts find them) of one kernel point on several hosts within a window,
    grouped: what the stepping hosts' facts changed alike, and whether the hosts that measured the point
    then without a step made that change too. Newest first; computed on read over at most 90 days."""
    hi = service.utc(until) if until is not None else utcnow()
    lo = service.utc(since) if since is not None else hi - service.DEFAULT_RANGE
    if hi < lo:
        raise ValidationFailed([field_error(["query", "until"], "until is before since")])
    if hi - lo > service.MAX_RANGE:
        raise ValidationFailed(
            [field_error(["query", "since"], f"at most {service.MAX_RANGE.days} days from since to until")]
        )
    q = service.FleetQuery(
        since=lo,
        until=hi,
        window=timedelta(hours=window_hours),
        kernels=kernel_list(kernel, service.MAX_KERNELS),
        min_hosts=min_hosts,
        limit=limit,
        cursor=service.decode_cursor(cursor) if cursor else None,
    )
    return await service.fleet_changes(session, q)


@router.get("/peers", response_model=PeersOut, responses=errors({422: BAD}))
async def peer_outliers(
    session: SessionDep,
    klass: Annotated[
        str | None,
        Query(
            alias="class", max_length=peers.MAX_CLASS_CHARS, description="a hardware class, as machines show"
        ),
    ] = None,
    kernel: Annotated[
        str | None, Query(max_length=MAX_KERNEL_CHARS, description="comma-separated kernel ids (at most 50)")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> PeersOut:
    """Machines whose latest figure for a point is an outlier among the machines of their hardware class
    (median and MAD of the class, at least 3 peers), with the facts where each differs from most of its
    class."""
    return await peers.outliers(session, klass or None, kernel_list(kernel, peers.MAX_KERNELS), limit)
