from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response

from ctxbench_server.auth.deps import AdminDep, WriteDep
from ctxbench_server.db import SessionDep
from ctxbench_server.dispatch.deps import HubDep
from ctxbench_server.errors import Forbidden
from ctxbench_server.fleet.offer import AgentOffer, read_offer
from ctxbench_server.fleet.router import public_url
from ctxbench_server.machines import labels, service
from ctxbench_server.machines.schemas import MachineOut, MachinePatch
from ctxbench_server.push.deps import ChangesDep
from ctxbench_server.web.openapi import errors

router = APIRouter(prefix="/machines", tags=["machines"])
UNKNOWN_MACHINE = "unknown machine"


def agent_offer(request: Request) -> AgentOffer:
    """The agent versions this server's dist dir offers (fleet/offer.py)."""
    return read_offer(request.app.state.settings.dist_dir, public_url(request))


OfferDep = Annotated[AgentOffer, Depends(agent_offer)]


SELECTOR_HELP = (
    "only machines whose labels match: comma-separated requirements, all of which must hold: "
    "`key=value`, `key!=value` (no such key matches too), `key` (has it), `!key` (has it not)"
)


@router.get("", response_model=list[MachineOut], responses=errors({422: "a malformed `selector`"}))
async def list_machines(
    session: SessionDep,
    hub: HubDep,
    offer: OfferDep,
    selector: Annotated[str | None, Query(description=SELECTOR_HELP, examples=["env=prod,rack"])] = None,
) -> list[MachineOut]:
    """Every machine, by name. `agent_outdated` marks those whose agent is older than the one this server
    offers, with the `upgrade_command` to run on them."""
    chosen = labels.parse_selector(selector, ["query", "selector"]) if selector else None
    out = await service.list_machines(session, await hub.online(), chosen, hub.last_heard())
    offer.apply(out)
    return out


@router.get("/{machine_id}", response_model=MachineOut, responses=errors({404: UNKNOWN_MACHINE}))
async def get_machine(machine_id: str, session: SessionDep, hub: HubDep, offer: OfferDep) -> MachineOut:
    out = await service.get_machine(session, machine_id, await hub.online(), hub.last_heard())
    offer.apply([out])
    return out


@router.patch(
    "/{machine_id}",
    response_model=MachineOut,
    responses=errors(
        {
            403: "`labels` given by a non-admin",
            404: UNKNOWN_MACHINE,
            422: "`name` too long or not one line; a bad label key or value, or too many",
        }
    ),
)
async def rename_machine(
    machine_id: str,
    body: MachinePatch,
    session: SessionDep,
    hub: HubDep,
    changes: ChangesDep,
    who: WriteDep,
    offer: OfferDep,
) -> MachineOut:
    """Gives the machine a display name (its id stays); `null` or `""` gives the agent's own name back.
    The agent's later Hellos keep it. `labels` (admin only) is a JSON merge patch of the admin's labels:
    a string sets a key, null removes it. A field left out is left as it is."""
    given = body.model_fields_set
    if "labels" in given and who.scope != "admin":
        raise Forbidden(f"scope {who.scope}: labels are admin only")
    await service.must_exist(session, machine_id)  # 404 before a lock is made for the id
    async with hub.locks[machine_id]:  # a Hello in flight would otherwise write the agent's name back
        if "labels" in given:
            await service.set_labels(session, machine_id, body.labels, who.name)
        if "name" in given:
            await service.rename(session, machine_id, body.name, who.name)
    if "name" in given:
        changes.machine(machine_id, "renamed")
    if "labels" in given:
        changes.machine(machine_id, "changed")
    out = await service.get_machine(session, machine_id, await hub.online(), hub.last_heard())
    offer.apply([out])
    return out


@router.delete(
    "/{machine_id}",
    status_code=204,
    responses=errors(
        {
            403: "not an admin",
            404: UNKNOWN_MACHINE,
            409: "its agent is connected, or one of its runs is queued or running",
        }
    ),
)
async def delete_machine(
    machine_id: str, session: SessionDep, hub: HubDep, changes: ChangesDep, who: AdminDep
) -> Response:
    """Deletes the machine with all its runs and results (admin only). Refused while its agent is
    connected (stop it or revoke the machine first) or while one of its runs is queued or running.
    Its credential goes too: the host comes back only by enrolling again, as a new, empty machine."""
    await service.must_exist(session, machine_id)  # 404 before a lock is made for the id
    async with hub.locks[machine_id]:
        await service.delete_machine(session, machine_id, machine_id in await hub.online(), who.name)
    changes.machine(machine_id, "deleted")
    return Response(status_code=204)
