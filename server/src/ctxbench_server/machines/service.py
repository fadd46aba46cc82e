"""Machines and their catalogs: upserted from Hello, read by REST."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from google.protobuf.json_format import MessageToDict
from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.kit.errors import NotFound
from ctxbench_server.kit.params import spec_from_proto
from ctxbench_server.kit.text import column_length, storable
from ctxbench_server.machines.schemas import MachineOut, PreflightOut
from ctxbench_server.models import Kernel, Machine, MachineKernel
from ctxbench_server.models.base import utcnow

log = logging.getLogger(__name__)

MAX_MACHINE_ID = 64
MAX_KERNEL_ID = column_length(Kernel.id) or 200


def describe(machine: Machine, name: str, hostname: str, agent_version: str) -> None:
    """What the agent says about its host, as its columns hold it (see kit.text)."""
    machine.name = storable(name or hostname or machine.id, column_length(Machine.name))
    machine.hostname = storable(hostname, column_length(Machine.hostname))
    machine.agent_version = storable(agent_version, column_length(Machine.agent_version))


def facts_to_dict(facts: pb.MachineFacts) -> dict[str, Any]:
    d = MessageToDict(facts, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    d["memory_bytes"] = int(d.get("memory_bytes", 0))  # proto3 JSON spells 64-bit ints as strings
    return d


def preflight(facts: dict[str, Any] | None) -> list[PreflightOut]:
    """The preflight checks in stored facts; malformed or unknown-status entries are left out."""
    out = []
    for c in (facts or {}).get("preflight") or []:
        if isinstance(c, dict) and c.get("status") in ("ok", "warn"):
            out.append(
                PreflightOut(
                    check=str(c.get("check", "")),
                    status=c["status"],
                    detail=str(c.get("detail", "")),
                    fix=str(c.get("fix", "")),
                )
            )
    return out


async def upsert_from_hello(session: AsyncSession, hello: pb.Hello) -> Machine:
    """Creates or refreshes the machine and replaces its catalog. Commits. The caller holds the
    machine's lock (two Hellos of one machine would both replace its catalog); kernels are shared
    between machines, so they are upserted in one statement, in id order, never read then inserted."""
    now = utcnow()
    facts = facts_to_dict(hello.facts)
    machine = await session.get(Machine, hello.agent_id)
    if machine is None:
        machine = Machine(id=hello.agent_id, first_seen=now)
        session.add(machine)
    describe(machine, hello.name, hello.facts.hostname, hello.agent_version)
    machine.facts = facts
    machine.last_seen = now

    specs: dict[str, dict[str, Any]] = {}
    for k in hello.kernels:
        if not k.id or len(k.id) > MAX_KERNEL_ID or "\x00" in k.id:
            log.warning("machine %s lists a kernel id that cannot be stored: %.80r", hello.agent_id, k.id)
            continue
        if k.id not in specs:  # first listing wins, like the agent's own rule
            specs[k.id] = spec_from_proto(k)
    await session.flush()
    if specs:
        # One statement, not a read then an insert: on PostgreSQL a fleet's first Hellos, all naming the
        # same new kernels at once, would otherwise race to insert them (IntegrityError, Hello refused).
        # In id order, so that concurrent upserts lock the rows in one order.
        dialect = session.get_bind().dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        rows = [{"id": kid, "spec": specs[kid], "updated_at": now} for kid in sorted(specs)]
        stmt = insert(Kernel).values(rows)
        await session.execute(
            stmt.on_conflict_do_update(
                index_elements=[Kernel.id],
                set_={"spec": stmt.excluded.spec, "updated_at": stmt.excluded.updated_at},
            )
        )
    await session.execute(delete(MachineKernel).where(MachineKernel.machine_id == machine.id))
    session.add_all(MachineKernel(machine_id=machine.id, kernel_id=kid, spec=s) for kid, s in specs.items())
    await session.commit()
    return machine


async def touch(session: AsyncSession, machine_id: str) -> None:
    await session.execute(update(Machine).where(Machine.id == machine_id).values(last_seen=utcnow()))
    await session.commit()


async def touch_many(session: AsyncSession, machine_ids: Iterable[str]) -> None:
    """last_seen = now for these machines, in one statement per 500."""
    ids, now = sorted(machine_ids), utcnow()
    for i in range(0, len(ids), 500):
        await session.execute(update(Machine).where(Machine.id.in_(ids[i : i + 500])).values(last_seen=now))
    await session.commit()


def _out(m: Machine, online: Iterable[str]) -> MachineOut:
    return MachineOut(
        id=m.id,
        name=m.name,
        hostname=m.hostname,
        agent_version=m.agent_version,
        online=m.id in online,
        status=m.status,
        first_seen=m.first_seen,
        last_seen=m.last_seen,
        facts=m.facts,
        preflight=preflight(m.facts),
        kernels=sorted(k.kernel_id for k in m.kernels),
    )


async def list_machines(session: AsyncSession, online: set[str]) -> list[MachineOut]:
    rows = await session.scalars(
        select(Machine).options(selectinload(Machine.kernels)).order_by(Machine.name)
    )
    return [_out(m, online) for m in rows]


async def get_machine(session: AsyncSession, machine_id: str, online: set[str]) -> MachineOut:
    m = await session.get(Machine, machine_id, options=[selectinload(Machine.kernels)])
    if m is None:
        raise NotFound(f"machine {machine_id!r} not found")
    return _out(m, online)


async def catalog(session: AsyncSession, machine_id: str) -> dict[str, dict[str, Any]]:
    """kernel id -> that machine's spec of it."""
    rows = await session.scalars(select(MachineKernel).where(MachineKernel.machine_id == machine_id))
    return {mk.kernel_id: mk.spec for mk in rows}


async def catalogs(session: AsyncSession, machine_ids: Iterable[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """catalog() of many machines in one query: machine id -> kernel id -> spec (empty: no kernels)."""
    ids = list(machine_ids)
    out: dict[str, dict[str, dict[str, Any]]] = {mid: {} for mid in ids}
    if ids:
        q = select(MachineKernel.machine_id, MachineKernel.kernel_id, MachineKernel.spec).where(
            MachineKernel.machine_id.in_(ids)
        )
        for mid, kid, spec in await session.execute(q):
            out[mid][kid] = spec
    return out
