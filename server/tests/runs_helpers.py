"""Helpers shared by the orchestration tests (runs over REST, a fake agent over gRPC)."""

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server.agents import wire
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.machines import service as machines
from ctxbench_server.models import Machine, Run, RunItem

from .fake_agent import FakeAgent, fake_catalog

MakeAgent = Callable[..., FakeAgent]
PIPE = {"kernel": "ctxsw.pipe"}


async def post(http: httpx.AsyncClient, body: dict[str, Any], status: int = 201) -> Any:
    r = await http.post("/api/v1/runs", json=body)
    assert r.status_code == status, r.text
    return r.json()


async def get_run(http: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    r = await http.get(f"/api/v1/runs/{run_id}")
    assert r.status_code == 200
    return dict(r.json())


async def agents(make_agent: MakeAgent, n: int, **kw: Any) -> list[FakeAgent]:
    out = [make_agent(**kw) for _ in range(n)]
    for a in out:
        await a.connect()
    return out


async def hello_machine(sessionmaker: async_sessionmaker[AsyncSession], name: str = "fake-host") -> str:
    """The machine and catalog a fake agent's Hello makes (the servicer's translation, then
    machines.service), for tests that need a machine but no stream. Returns its id."""
    hello = pb.Hello(
        agent_id=str(uuid.uuid4()),
        agent_version="test",
        name=name,
        facts=pb.MachineFacts(hostname=name, cpu_model="Test CPU", logical_cpus=4, memory_bytes=2**34),
        kernels=fake_catalog(),
    )
    async with sessionmaker() as session:
        await machines.upsert_from_hello(session, wire.agent_hello(hello))
    return hello.agent_id


async def started(
    make_agent: MakeAgent, http: httpx.AsyncClient, items: list[dict[str, Any]] | None = None
) -> tuple[FakeAgent, dict[str, Any], pb.StartRun]:
    """A connected fake agent, a run of `items` (one ctxsw.pipe) posted to its machine, and the StartRun
    the agent got for it."""
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": items or [PIPE]})
    return agent, run, (await agent.expect("start_run")).start_run


async def finish(agent: FakeAgent, start: pb.StartRun) -> None:
    for item in start.items:
        await agent.report(start.run_id, item)


async def fill_runs(
    sessionmaker: async_sessionmaker[AsyncSession], machines: int, items_per_run: int
) -> list[str]:
    """One finished run per machine with `items_per_run` measured items, written with bulk INSERTs
    (the ORM would take minutes for 100k items). Returns the run ids, newest first."""
    now = datetime.now(UTC)
    facts = {"cpu_model": "Test CPU", "logical_cpus": 4, "kernel": "6.1.0", "flags": "x" * 1500}
    machine_rows, run_rows, item_rows = [], [], []
    for m in range(machines):
        mid, rid = f"m{m:04d}-{uuid.uuid4()}", str(uuid.uuid4())
        created = now - timedelta(seconds=machines - m)
        machine_rows.append({"id": mid, "name": mid, "hostname": mid, "facts": facts})
        run_rows.append(
            {
                "id": rid,
                "machine_id": mid,
                "batch_id": rid,
                "status": "succeeded",
                "profile": "default",
                "spec": {"items": [{"kernel": "ctxsw.pipe", "sweep": {"threads": "default"}}]},
                "facts": facts,
                "repetitions": 5,
                "created_at": created,
                "queued_at": created,
                "started_at": created,
                "finished_at": created,
            }
        )
        for i in range(items_per_run):
            item_rows.append(
                {
                    "id": uuid.uuid4().hex,
                    "run_id": rid,
                    "index": i,
                    "kernel_id": ("ctxsw.pipe", "syscall.getppid")[i % 2],
                    "params": {"threads": i % 64 + 1, "placement": "same_core"},
                    "state": "succeeded",
                    "result_id": str(uuid.uuid4()),
                    "timeout_s": 120.0,
                    "attempt": 1,
                }
            )
    async with sessionmaker() as session:
        await session.execute(insert(Machine), machine_rows)
        await session.execute(insert(Run), run_rows)
        for i in range(0, len(item_rows), 10_000):
            await session.execute(insert(RunItem), item_rows[i : i + 10_000])
        await session.commit()
    return [r["id"] for r in reversed(run_rows)]
