"""Enrollment: join tokens, machine credentials (stored as SHA-256), revoke and approve."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from datetime import timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.errors import (
    Conflict,
    CtxbenchError,
    NotFound,
    PermissionDenied,
    Unauthenticated,
)
from ctxbench_server.machines.service import MAX_MACHINE_ID, describe
from ctxbench_server.models import JoinToken, Machine, MachineStatus, RetiredMachine
from ctxbench_server.models.base import utcnow

JOIN_PREFIX = "cxj_"
CREDENTIAL_PREFIX = "cxm_"
# EnrollRequest.enrollment_key: the agent sends 64 hex characters; checked before it is hashed.
MAX_ENROLLMENT_KEY = 128
ACTIVE, PENDING, REVOKED = MachineStatus.ACTIVE, MachineStatus.PENDING, MachineStatus.REVOKED


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret(prefix: str) -> str:
    """32 random bytes, URL-safe, with a prefix that says what it is (as GitHub's ghp_ tokens do)."""
    return prefix + secrets.token_urlsafe(32)


async def create_join_token(
    session: AsyncSession, uses: int, ttl_s: int, created_by: str
) -> tuple[JoinToken, str]:
    token = new_secret(JOIN_PREFIX)
    jt = JoinToken(
        token_hash=hash_secret(token),
        created_by=created_by,
        created_at=utcnow(),
        expires_at=utcnow() + timedelta(seconds=ttl_s),
        uses_left=uses,
        uses=0,
        revoked=False,
    )
    session.add(jt)
    await session.commit()
    return jt, token


async def list_join_tokens(session: AsyncSession) -> list[JoinToken]:
    return list(await session.scalars(select(JoinToken).order_by(JoinToken.created_at.desc())))


async def revoke_join_token(session: AsyncSession, token_id: str) -> None:
    jt = await session.get(JoinToken, token_id)
    if jt is None:
        raise NotFound(f"join token {token_id!r} not found")
    jt.revoked = True
    await session.commit()


async def _spend_join_token(session: AsyncSession, token: str) -> None:
    """Takes one use of a join token or raises Unauthenticated saying why not. Does not commit."""
    jt = await session.scalar(select(JoinToken).where(JoinToken.token_hash == hash_secret(token)))
    if jt is None:
        raise Unauthenticated("unknown join token")
    if jt.revoked:
        raise Unauthenticated("join token revoked")
    if jt.expires_at <= utcnow():
        raise Unauthenticated("join token expired")
    # Conditional decrement: two hosts racing for the last use cannot both win it.
    res = await session.execute(
        update(JoinToken)
        .where(JoinToken.id == jt.id, JoinToken.uses_left > 0)
        .values(uses_left=JoinToken.uses_left - 1, uses=JoinToken.uses + 1)
    )
    if res.rowcount != 1:  # type: ignore[attr-defined]
        raise Unauthenticated("join token already used")


async def enroll(
    session: AsyncSession,
    *,
    token: str,
    agent_token: str,
    machine_id: str,
    name: str,
    hostname: str,
    agent_version: str,
    approve_new_hosts: bool,
    enrollment_key: str = "",
) -> tuple[str, str, bool]:
    """Returns (machine id, credential, pending). The credential is never stored, only its hash, and so
    is the agent's enrollment key."""
    if not token:
        raise Unauthenticated("missing join token")
    machine_id = machine_id or str(uuid.uuid4())
    if len(machine_id) > MAX_MACHINE_ID or "\x00" in machine_id:
        raise CtxbenchError(f"proposed machine id must be 1..{MAX_MACHINE_ID} characters, without NUL")
    if len(enrollment_key) > MAX_ENROLLMENT_KEY:
        raise CtxbenchError(f"EnrollRequest.enrollment_key must be at most {MAX_ENROLLMENT_KEY} characters")
    key_hash = hash_secret(enrollment_key) if enrollment_key else None
    retried = await _retried(session, machine_id, key_hash) if key_hash else None
    if retried is not None:
        # This agent's own earlier Enroll stored the machine and spent the token; its answer was lost.
        return await _issue(session, retried, name, hostname, agent_version, key_hash)
    if not hmac.compare_digest(token.encode(), agent_token.encode()):
        await _spend_join_token(session, token)
    if await session.get(RetiredMachine, machine_id) is not None:
        # Revoked, then deleted: the row is gone but the refusal stays (no token brings the id back).
        await session.rollback()
        raise PermissionDenied(
            f"machine {machine_id} has been revoked and deleted: its id is retired"
            " (enroll the host with a fresh state dir)"
        )
    machine = await session.get(Machine, machine_id)
    if machine is not None and (machine.token_hash is not None or machine.status == REVOKED):
        # No takeover: an id that has a credential stays with whoever holds it.
        await session.rollback()
        raise PermissionDenied(
            f"machine {machine_id} is already enrolled; an agent cannot take over another machine's id"
            " (revoke it and enroll the host with a fresh state dir)"
        )
    if machine is None:  # a machine from before enrollment is claimed once, keeping its results
        now = utcnow()
        machine = Machine(
            id=machine_id,
            first_seen=now,
            last_seen=now,
            facts={},
            status=PENDING if approve_new_hosts else ACTIVE,
        )
        session.add(machine)
    return await _issue(session, machine, name, hostname, agent_version, key_hash)


async def _retried(session: AsyncSession, machine_id: str, key_hash: str) -> Machine | None:
    """The machine when this Enroll repeats one that enrolled it with the same key and whose credential
    has not been used yet (its first Hello clears the key's hash); else None, and the usual checks
    decide."""
    machine = await session.get(Machine, machine_id)
    if (
        machine is None
        or machine.token_hash is None
        or machine.status == REVOKED
        or machine.enroll_key_hash is None
        or not hmac.compare_digest(machine.enroll_key_hash, key_hash)
    ):
        return None
    return machine


async def _issue(
    session: AsyncSession,
    machine: Machine,
    name: str,
    hostname: str,
    agent_version: str,
    key_hash: str | None,
) -> tuple[str, str, bool]:
    """Mints the machine's credential (replacing any earlier one's hash) and commits."""
    credential = new_secret(CREDENTIAL_PREFIX)
    describe(machine, name, hostname, agent_version)
    machine.token_hash = hash_secret(credential)
    machine.enroll_key_hash = key_hash
    await session.commit()
    return machine.id, credential, machine.status == PENDING


async def machine_for_credential(session: AsyncSession, credential: str) -> Machine:
    """The machine a Connect credential belongs to, or Unauthenticated / PermissionDenied."""
    if not credential:
        raise Unauthenticated("missing machine credential (authorization: Bearer <credential>): enroll first")
    h = hash_secret(credential)
    machine = await session.scalar(select(Machine).where(Machine.token_hash == h))
    if machine is None or machine.token_hash is None or not hmac.compare_digest(machine.token_hash, h):
        raise Unauthenticated("unknown machine credential: enroll this host with a join token")
    if machine.status == REVOKED:
        raise PermissionDenied(f"machine {machine.id} has been revoked")
    return machine


async def set_status(session: AsyncSession, machine_id: str, status: str) -> Machine:
    machine = await session.get(Machine, machine_id)
    if machine is None:
        raise NotFound(f"machine {machine_id!r} not found")
    if status == ACTIVE and machine.status == REVOKED:
        raise Conflict(f"machine {machine_id!r} is revoked: enroll the host again instead")
    machine.status = status
    await session.commit()
    return machine
