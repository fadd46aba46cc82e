from __future__ import annotations

from fastapi import APIRouter

from ctxbench_server.db import SessionDep
from ctxbench_server.kernels import service
from ctxbench_server.kernels.schemas import KernelOut

router = APIRouter(prefix="/kernels", tags=["kernels"])


@router.get("", response_model=list[KernelOut])
async def list_kernels(session: SessionDep) -> list[KernelOut]:
    """The union of every machine's catalog (each kernel as last listed), with the machines having it."""
    return await service.list_kernels(session)
