"""A migrated database with machines and their catalogs, and schedulers on it, for the schedule tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from ctxbench_server.config import Settings
from ctxbench_server.db import create_engine, create_sessionmaker, migrate
from ctxbench_server.dispatch.dispatcher import Dispatcher
from ctxbench_server.dispatch.hub import AgentHub
from ctxbench_server.models import Kernel, Machine, MachineKernel, MachineStatus, Run
from ctxbench_server.push.budget import StreamBudget
from ctxbench_server.push.changes import Changes
from ctxbench_server.schedules import service
from ctxbench_server.schedules.firing import Scheduler
from ctxbench_server.schedules.schemas import ScheduleCreate

from .conftest import RolledBack, test_settings
from .test_db import fresh_engine

T0 = datetime(2026, 11, 27, 10, 0, 0, tzinfo=UTC)
PIPE = {"id": "ctxsw.pipe", "title": "pipe", "family": "ctxsw", "unit": "ns/op", "params": []}
GETPPID = {
    "id": "syscall.getppid",
    "title": "getppid",
    "family": "syscall",
    "unit": "ns/op",
    "params": [{"name": "threads", "type": "int", "default": 1, "min": 1, "max": 64, "sweep": [1, 2]}],
}


class Db:
    """One database, and engines on it as separate server processes would have; or, given `rolled_back`,
    the test's rolled-back sessions (conftest.py), where one process is all there is."""

    def __init__(self, tmp_path: Path, engine: AsyncEngine, rolled_back: RolledBack | None = None) -> None:
        self.tmp_path = tmp_path
        self.engines = [] if rolled_back else [engine]
        self.sessionmaker = rolled_back.sessionmaker if rolled_back else create_sessionmaker(engine)
        self.settings = test_settings(tmp_path, schedule_tick_s=1.0)

    def process(self) -> async_sessionmaker[AsyncSession]:
        """The sessions of another server process: its own engine (and, on SQLite, its own write gate)."""
        assert self.engines, "other processes cannot see a rolled-back transaction: use migrated()"
        engine = create_engine(self.engines[0].url.render_as_string(hide_password=False))
        self.engines.append(engine)
        return create_sessionmaker(engine)

    def scheduler(self, sessionmaker: async_sessionmaker[AsyncSession] | None = None) -> Scheduler:
        sm = sessionmaker or self.sessionmaker
        return Scheduler(sm, self.settings, Dispatcher(AgentHub(), sm, None), Changes(StreamBudget(), sm))

    async def machine(
        self,
        mid: str,
        kernels: list[dict[str, Any]] | None = None,
        labels: dict[str, str] | None = None,
        status: str = MachineStatus.ACTIVE,
    ) -> str:
        kernels = [PIPE, GETPPID] if kernels is None else kernels
        async with self.sessionmaker() as s:
            s.add(
                Machine(id=mid, name=mid, hostname=mid, status=status, labels=labels or {}, agent_labels={})
            )
            for k in kernels:
                if await s.get(Kernel, k["id"]) is None:
                    s.add(Kernel(id=k["id"], spec=k))
                await s.flush()
                s.add(MachineKernel(machine_id=mid, kernel_id=k["id"], spec=k))
            await s.commit()
        return mid

    async def create(self, now: datetime = T0, settings: Settings | None = None, **body: Any) -> str:
        body.setdefault("name", "nightly")
        body.setdefault("run", {"items": [{"kernel": "ctxsw.pipe"}], "profile": "quick"})
        if "cron" not in body:
            body.setdefault("interval_s", 60)
        async with self.sessionmaker() as s:
            row = await service.create(
                s, ScheduleCreate.model_validate(body), settings or self.settings, "t", now
            )
            return row.id

    async def finish_runs(self, schedule_id: str) -> None:
        async with self.sessionmaker() as s:
            await s.execute(update(Run).where(Run.schedule_id == schedule_id).values(status="succeeded"))
            await s.commit()

    async def close(self) -> None:
        for e in self.engines:
            await e.dispose()


async def migrated(tmp_path: Path) -> AsyncIterator[Db]:
    engine = await fresh_engine(tmp_path)
    await migrate(engine)
    db = Db(tmp_path, engine)
    try:
        yield db
    finally:
        await db.close()
