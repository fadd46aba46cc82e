"""A fleet's first connect: new machines, all with the same catalog, say Hello at the same moment.

On PostgreSQL (transactions really run side by side) reading which kernels exist and then inserting the
missing ones let two Hellos insert the same kernel: one failed with an IntegrityError and its agent got
no Welcome. Runs on both backends (scripts/with-postgres.sh).
"""

from __future__ import annotations

import asyncio

import httpx

from .runs_helpers import MakeAgent


async def test_many_new_machines_say_hello_at_once(http: httpx.AsyncClient, make_agent: MakeAgent) -> None:
    agents = [make_agent(name=f"host-{i}") for i in range(12)]
    for a in agents:
        await a.enroll()
    welcomes = await asyncio.gather(*(a.connect() for a in agents), return_exceptions=True)
    assert [type(w).__name__ for w in welcomes] == ["Welcome"] * len(agents)
    machines = (await http.get("/api/v1/machines")).json()
    assert sorted(m["name"] for m in machines if m["online"]) == sorted(a.name for a in agents)
    kernels = (await http.get("/api/v1/kernels")).json()
    assert sorted(k["id"] for k in kernels) == ["ctxsw.pipe", "syscall.getppid"]
