from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from ctxbench_server.contract.aliases import canonical
from ctxbench_server.db import SessionDep
from ctxbench_server.kernels import service
from ctxbench_server.kernels.schemas import KernelOut, RankedPoint

router = APIRouter(prefix="/kernels", tags=["kernels"])


@router.get("", response_model=list[KernelOut])
async def list_kernels(session: SessionDep) -> list[KernelOut]:
    """The union of every machine's catalog (each kernel as last listed), with the machines having it
    and the old ids it is still read under (`aliases`)."""
    return await service.list_kernels(session)


@router.get("/{kernel_id}/latest", response_model=list[RankedPoint])
async def ranked_latest(kernel_id: str, session: SessionDep) -> list[dict[str, Any]]:
    """Per parameter point of the kernel, every machine's latest successful result, best first (empty
    when no machine has measured it)."""
    return await service.ranked_latest(session, canonical(kernel_id))  # an old id: its new one's
