from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from ctxbench_server.kernels.schemas import KernelOut
from ctxbench_server.models import Kernel


async def list_kernels(session: AsyncSession) -> list[KernelOut]:
    rows = await session.scalars(select(Kernel).options(selectinload(Kernel.machines)).order_by(Kernel.id))
    out = []
    for k in rows:
        spec = dict(k.spec)
        spec["machines"] = sorted(mk.machine_id for mk in k.machines)
        out.append(KernelOut.model_validate(spec))
    return out
