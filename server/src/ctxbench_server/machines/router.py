from __future__ import annotations

from fastapi import APIRouter, Response

from ctxbench_server.auth.deps import AdminDep, WriteDep
from ctxbench_server.db import SessionDep
from ctxbench_server.dispatch.deps import HubDep
from ctxbench_server.kit.openapi import errors
from ctxbench_server.machines import service
from ctxbench_server.machines.schemas import MachineOut, MachinePatch
from ctxbench_server.push.deps import ChangesDep

router = APIRouter(prefix="/machines", tags=["machines"])
UNKNOWN_MACHINE = "unknown machine"


@router.get("", response_model=list[MachineOut])
async def list_machines(session: SessionDep, hub: HubDep) -> list[MachineOut]:
    return await service.list_machines(session, await hub.online())


@router.get("/{machine_id}", response_model=MachineOut, responses=errors({404: UNKNOWN_MACHINE}))
async def get_machine(machine_id: str, session: SessionDep, hub: HubDep) -> MachineOut:
    return await service.get_machine(session, machine_id, await hub.online())


@router.patch(
    "/{machine_id}",
    response_model=MachineOut,
    responses=errors({404: UNKNOWN_MACHINE, 422: "`name` too long or not one line"}),
)
async def rename_machine(
    machine_id: str, body: MachinePatch, session: SessionDep, hub: HubDep, changes: ChangesDep, who: WriteDep
) -> MachineOut:
    """Gives the machine a display name (its id stays); `null` or `""` gives the agent's own name back.
    The agent's later Hellos keep it."""
    await service.must_exist(session, machine_id)  # 404 before a lock is made for the id
    async with hub.locks[machine_id]:  # a Hello in flight would otherwise write the agent's name back
        await service.rename(session, machine_id, body.name, who.name)
    changes.machine(machine_id, "renamed")
    return await service.get_machine(session, machine_id, await hub.online())


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
