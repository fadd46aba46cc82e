"""Machines and their catalogs: upserted from Hello, read by REST."""

from __future__ import annotations

import logging
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.contract import aliases
from ctxbench_server.errors import Conflict, NotFound
from ctxbench_server.machines import labels as labelling
from ctxbench_server.machines.schemas import MachineOut, PreflightOut
from ctxbench_server.models import (
    Batch,
    Kernel,
    Machine,
    MachineKernel,
    MachineStatus,
    Result,
    RetiredMachine,
    Run,
    RunStatus,
)
from ctxbench_server.models.base import utcnow
from ctxbench_server.sql.text import column_length, storable

log = logging.getLogger(__name__)
# Who renamed or deleted what: one INFO line each, for whoever keeps the server's log.
audit = logging.getLogger("ctxbench.audit")

MAX_MACHINE_ID = 64
MAX_KERNEL_ID = column_length(Kernel.id) or 200


def describe(machine: Machine, name: str, hostname: str, agent_version: str) -> None:
    """What the agent says about its host, as its columns hold it (see sql.text). A display name someone
    gave the machine stays its name."""
    machine.agent_name = storable(name or hostname or machine.id, column_length(Machine.name))
    machine.name = machine.display_name or machine.agent_name
    machine.hostname = storable(hostname, column_length(Machine.hostname))
    machine.agent_version = storable(agent_version, column_length(Machine.agent_version))


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


@dataclass(frozen=True, slots=True)
class AgentHello:
    """What an agent's Hello says about its machine (agents/wire.py reads it off the wire)."""

    agent_id: str
    name: str
    hostname: str
    agent_version: str
    facts: dict[str, Any]
    kernels: list[dict[str, Any]]  # typed JSON specs (contract.params), in the agent's order
    labels: dict[str, str] = field(default_factory=dict)  # its --label flags, unchecked


async def upsert_from_hello(session: AsyncSession, hello: AgentHello) -> Machine:
    """Creates or refreshes the machine and replaces its catalog. Commits. The caller holds the
    machine's lock (two Hellos of one machine would both replace its catalog); kernels are shared
    between machines, so they are upserted in one statement, in id order, never read then inserted."""
    specs: dict[str, dict[str, Any]] = {}
    listed: dict[str, str] = {}  # new id -> the old id an older agent listed it under
    for spec in hello.kernels:
        raw = spec["id"]
        if not raw or len(raw) > MAX_KERNEL_ID or "\x00" in raw:
            log.warning("machine %s lists a kernel id that cannot be stored: %.80r", hello.agent_id, raw)
            continue
        kid = aliases.canonical(raw)
        if kid not in specs:  # first listing wins, like the agent's own rule
            specs[kid] = spec
            if kid != raw:  # stored under its new id and family; dispatch sends the old one back
                specs[kid] = {**spec, "id": kid, "family": aliases.family_of(kid)}
                listed[kid] = raw
    stored = {
        kid: s if kid not in listed else {**s, aliases.LISTED_AS: listed[kid]} for kid, s in specs.items()
    }
    # Read before anything is written: a session with changes would take the SQLite write gate first.
    unchanged = await _catalog(session, hello.agent_id) == stored
    now = utcnow()
    machine = await session.get(Machine, hello.agent_id)
    if machine is None:
        machine = Machine(id=hello.agent_id, first_seen=now)
        session.add(machine)
    describe(machine, hello.name, hello.hostname, hello.agent_version)
    machine.facts = hello.facts
    kept, dropped = labelling.agent_labels(hello.labels)
    if dropped:
        log.warning(
            "machine %s: dropped %d of its agent's labels: %s",
            hello.agent_id,
            len(dropped),
            "; ".join(dropped),
        )
    if machine.agent_labels != kept:  # the row is written anyway; this keeps an unchanged column out of it
        machine.agent_labels = kept
    machine.last_seen = now
    if machine.enroll_key_hash is not None:
        # Its agent has connected with its credential: the enrollment key mints no more credentials.
        # Cleared here, in the row every Hello writes anyway, not by an extra write on Connect.
        machine.enroll_key_hash = None

    await session.flush()
    if unchanged:
        # The catalog it had (every reconnect of an agent that was not upgraded): only the machine's row
        # is written, so a fleet reconnecting after a restart costs a row per agent, not a catalog.
        await session.commit()
        return machine
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
    session.add_all(MachineKernel(machine_id=machine.id, kernel_id=kid, spec=s) for kid, s in stored.items())
    await session.commit()
    return machine


async def _catalog(session: AsyncSession, machine_id: str) -> dict[str, dict[str, Any]]:
    """The machine's stored catalog, kernel id -> spec as stored."""
    rows = await session.execute(
        select(MachineKernel.kernel_id, MachineKernel.spec).where(MachineKernel.machine_id == machine_id)
    )
    return {kid: spec for kid, spec in rows}


async def touch(session: AsyncSession, machine_id: str) -> None:
    await session.execute(update(Machine).where(Machine.id == machine_id).values(last_seen=utcnow()))
    await session.commit()


async def touch_many(session: AsyncSession, machine_ids: Iterable[str]) -> None:
    """last_seen = now for these machines, in one statement per 500."""
    ids, now = sorted(machine_ids), utcnow()
    for i in range(0, len(ids), 500):
        await session.execute(update(Machine).where(Machine.id.in_(ids[i : i + 500])).values(last_seen=now))
    await session.commit()


def _out(
    m: Machine, kernels: list[str], online: Container[str], heard: Mapping[str, datetime] | None = None
) -> MachineOut:
    # last_seen: the stored one lags (written in bulk, agents/liveness.py); an online agent's last
    # message on this process is fresher (`heard`: AgentHub.last_heard)
    seen = heard.get(m.id) if heard and m.id in online else None
    return MachineOut(
        id=m.id,
        name=m.name,
        hostname=m.hostname,
        agent_version=m.agent_version,
        online=m.id in online,
        status=MachineStatus(m.status),
        display_name=m.display_name,
        agent_name=m.agent_name or m.name,
        first_seen=m.first_seen,
        last_seen=max(m.last_seen, seen) if seen is not None else m.last_seen,
        facts=m.facts,
        preflight=preflight(m.facts),
        kernels=kernels,
        labels=labelling.effective(m.labels or {}, m.agent_labels or {}),
        admin_labels=dict(sorted((m.labels or {}).items())),
        agent_labels=dict(sorted((m.agent_labels or {}).items())),
        hardware_class=labelling.hardware_class(m.facts or {}),
    )


async def list_machines(
    session: AsyncSession,
    online: Container[str],
    selector: labelling.Selector | None = None,
    heard: Mapping[str, datetime] | None = None,
) -> list[MachineOut]:
    """Every machine, by name; with a selector, those whose effective labels it matches. `heard`: when
    online agents last spoke, fresher than the stored last_seen."""
    rows = await session.scalars(select(Machine).order_by(Machine.name))
    kernels = await _kernel_ids(session, None)
    out = (_out(m, kernels.get(m.id, []), online, heard) for m in rows)
    return [m for m in out if selector is None or selector.matches(m.labels)]


async def _kernel_ids(session: AsyncSession, machine_id: str | None) -> dict[str, list[str]]:
    """machine id -> the ids of its kernels, sorted; of one machine, or of all. Two columns, not the
    catalog rows with their specs (a fleet's catalogs are thousands of JSON specs to decode)."""
    q = select(MachineKernel.machine_id, MachineKernel.kernel_id).order_by(MachineKernel.kernel_id)
    if machine_id is not None:
        q = q.where(MachineKernel.machine_id == machine_id)
    out: dict[str, list[str]] = {}
    for mid, kid in await session.execute(q):
        out.setdefault(mid, []).append(kid)
    return out


async def get_machine(
    session: AsyncSession,
    machine_id: str,
    online: Container[str],
    heard: Mapping[str, datetime] | None = None,
) -> MachineOut:
    m = await session.get(Machine, machine_id, populate_existing=True)
    if m is None:
        raise NotFound(f"machine {machine_id!r} not found")
    kernels = await _kernel_ids(session, machine_id)
    return _out(m, kernels.get(machine_id, []), online, heard)


async def must_exist(session: AsyncSession, machine_id: str) -> None:
    if await session.scalar(select(Machine.id).where(Machine.id == machine_id)) is None:
        raise NotFound(f"machine {machine_id!r} not found")


async def catalog(session: AsyncSession, machine_id: str) -> dict[str, dict[str, Any]]:
    """kernel id -> that machine's spec of it."""
    rows = await session.scalars(select(MachineKernel).where(MachineKernel.machine_id == machine_id))
    return {mk.kernel_id: mk.spec for mk in rows}


async def rename(session: AsyncSession, machine_id: str, name: str | None, who: str) -> None:
    """Sets the display name (None or "": the agent's own name again). The id never changes."""
    m = await session.get(Machine, machine_id, populate_existing=True)
    if m is None:
        raise NotFound(f"machine {machine_id!r} not found")
    if m.agent_name is None:  # a machine from before 0007: its name so far is the agent's
        m.agent_name = m.name
    old = m.name
    m.display_name = name or None
    m.name = m.display_name or m.agent_name
    await session.commit()
    audit.info("machine %s renamed from %r to %r by %s", machine_id, old, m.name, who)


async def set_labels(
    session: AsyncSession, machine_id: str, patch: dict[str, str | None] | None, who: str
) -> None:
    """Applies a JSON merge patch to the admin's labels (labels.merge_patch; a 422 names a bad one)."""
    m = await session.get(Machine, machine_id, populate_existing=True)
    if m is None:
        raise NotFound(f"machine {machine_id!r} not found")
    old = dict(m.labels or {})
    new = labelling.merge_patch(old, patch, ["body", "labels"])
    if new != old:
        m.labels = new
        await session.commit()
        audit.info("machine %s labels set from %r to %r by %s", machine_id, old, new, who)


async def delete_machine(session: AsyncSession, machine_id: str, online: bool, who: str) -> None:
    """Deletes the machine with its runs, results and catalog (the database cascades), and the names
    of batches left without runs. Its credential goes with it: its agent must enroll again to come back,
    unless the machine was revoked: then its id is retired for good (a retired_machines row).

    Refused (409) while its agent is connected (it would come straight back; stop or revoke it first)
    and while one of its runs is queued or running (cancel it first). The caller holds the machine's
    lock, so no Hello or dispatch interleaves."""
    m = await session.get(Machine, machine_id, populate_existing=True)
    if m is None:
        raise NotFound(f"machine {machine_id!r} not found")
    if online:
        raise Conflict(
            f"machine {machine_id!r} is online: stop its agent or revoke the machine first "
            "(a connected agent would come straight back)"
        )
    busy = await session.scalar(
        select(func.count())
        .select_from(Run)
        .where(Run.machine_id == machine_id, Run.status.in_([RunStatus.QUEUED, RunStatus.RUNNING]))
    )
    if busy:
        raise Conflict(f"machine {machine_id!r} has {busy} queued or running runs: cancel them first")
    name = m.name
    runs = await session.scalar(select(func.count()).select_from(Run).where(Run.machine_id == machine_id))
    results = await session.scalar(
        select(func.count()).select_from(Result).where(Result.machine_id == machine_id)
    )
    batch_ids = list(
        await session.scalars(select(Run.batch_id).where(Run.machine_id == machine_id).distinct())
    )
    retired = m.status == MachineStatus.REVOKED
    if retired:  # a revoked id stays refused after its row is gone, across restarts
        session.add(RetiredMachine(machine_id=machine_id, name=name, retired_at=utcnow(), retired_by=who))
    await session.execute(delete(Machine).where(Machine.id == machine_id))
    await drop_empty_batches(session, batch_ids)
    await session.commit()
    audit.info(
        "machine %s (%r) deleted by %s with %d runs and %d results%s",
        machine_id,
        name,
        who,
        runs,
        results,
        "; its id is retired" if retired else "",
    )


async def drop_empty_batches(session: AsyncSession, batch_ids: list[str]) -> None:
    """Deletes the names of these batches that have no run left. Does not commit."""
    if not batch_ids:
        return
    left = set(await session.scalars(select(Run.batch_id).where(Run.batch_id.in_(batch_ids)).distinct()))
    gone = [b for b in batch_ids if b not in left]
    if gone:
        await session.execute(delete(Batch).where(Batch.id.in_(gone)))


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
