from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ctxbench_server.alerts import service
from ctxbench_server.alerts.schemas import MAX_LIST, AlertCounts, AlertOut, AlertPatch, AlertState
from ctxbench_server.auth.deps import WriteDep
from ctxbench_server.compare.service import split_list
from ctxbench_server.contract.aliases import canonical
from ctxbench_server.db import SessionDep
from ctxbench_server.models.base import utcnow
from ctxbench_server.push.deps import ChangesDep
from ctxbench_server.web.openapi import errors

router = APIRouter(prefix="/alerts", tags=["alerts"])
UNKNOWN = "unknown alert"
BACKWARDS = "the alert is past that state (resolved cannot be acknowledged; nothing reopens)"


@router.get("", response_model=list[AlertOut])
async def list_alerts(
    session: SessionDep,
    state: Annotated[
        list[AlertState] | None, Query(description="repeat for several; none: every state")
    ] = None,
    machine: Annotated[
        str | None, Query(max_length=20_000, description="comma-separated machine ids")
    ] = None,
    kernel: Annotated[str | None, Query(max_length=20_000, description="comma-separated kernel ids")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIST)] = 100,
) -> list[AlertOut]:
    """Alerts newest first: each a significant step in one series (History's rule), with the host's fact
    changes around it."""
    kernels = [canonical(k) for k in split_list(kernel)]
    return await service.list_alerts(session, state or [], split_list(machine), kernels, limit)


@router.get("/counts", response_model=AlertCounts)
async def alert_counts(session: SessionDep) -> AlertCounts:
    """How many alerts are in each state (the explorer's header shows the open ones)."""
    return await service.counts(session)


@router.get("/{alert_id}", response_model=AlertOut, responses=errors({404: UNKNOWN}))
async def get_alert(alert_id: str, session: SessionDep) -> AlertOut:
    return await service.one(session, alert_id)


@router.patch("/{alert_id}", response_model=AlertOut, responses=errors({404: UNKNOWN, 409: BACKWARDS}))
async def patch_alert(
    alert_id: str, body: AlertPatch, session: SessionDep, who: WriteDep, changes: ChangesDep
) -> AlertOut:
    """Acknowledge or resolve it (who and when are kept), and/or set its note."""
    await service.patch(session, alert_id, body, who.name, utcnow())
    changes.alert(alert_id, "changed")
    return await service.one(session, alert_id)


@router.post("/{alert_id}/ack", response_model=AlertOut, responses=errors({404: UNKNOWN, 409: BACKWARDS}))
async def ack_alert(alert_id: str, session: SessionDep, who: WriteDep, changes: ChangesDep) -> AlertOut:
    """Someone is looking at it. Acknowledging an acknowledged alert changes nothing."""
    await service.patch(session, alert_id, AlertPatch(state=AlertState.ACKNOWLEDGED), who.name, utcnow())
    changes.alert(alert_id, "changed")
    return await service.one(session, alert_id)


@router.post("/{alert_id}/resolve", response_model=AlertOut, responses=errors({404: UNKNOWN}))
async def resolve_alert(alert_id: str, session: SessionDep, who: WriteDep, changes: ChangesDep) -> AlertOut:
    """Done with it (explained, fixed, or accepted). The same step never opens again."""
    await service.patch(session, alert_id, AlertPatch(state=AlertState.RESOLVED), who.name, utcnow())
    changes.alert(alert_id, "changed")
    return await service.one(session, alert_id)
