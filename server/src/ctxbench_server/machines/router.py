from __future__ import annotations

from fastapi import APIRouter

from ctxbench_server.agents.deps import HubDep
from ctxbench_server.db import SessionDep
from ctxbench_server.machines import service
from ctxbench_server.machines.schemas import MachineOut

router = APIRouter(prefix="/machines", tags=["machines"])


@router.get("", response_model=list[MachineOut])
async def list_machines(session: SessionDep, hub: HubDep) -> list[MachineOut]:
    return await service.list_machines(session, await hub.online())


@router.get("/{machine_id}", response_model=MachineOut, responses={404: {"description": "unknown machine"}})
async def get_machine(machine_id: str, session: SessionDep, hub: HubDep) -> MachineOut:
    return await service.get_machine(session, machine_id, await hub.online())
