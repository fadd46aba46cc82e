"""Credentials: the admin token, API tokens, browser sessions and one-time login codes.

Secrets are random, stored only as SHA-256 hex digests, and looked up by digest (no secret-dependent
string comparison); the admin token's digest is compared with hmac.compare_digest. Nothing here logs.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.kit.errors import NotFound, Unauthenticated
from ctxbench_server.models import ApiToken, AuthSession, LoginCode
from ctxbench_server.models.base import utcnow

Scope = Literal["admin", "write", "read"]
Kind = Literal["admin", "token", "session"]
TOKEN_PREFIX = "ctxb_"
LOGIN_CODE_TTL = timedelta(hours=24)
# last_used_at is written at most this often per token, so a busy script costs no write per request.
LAST_USED_RESOLUTION = timedelta(seconds=60)


@dataclass(frozen=True)
class Principal:
    """Who is asking: the admin token, an API token, or a browser session (signed in with one)."""

    kind: Kind
    scope: Scope
    name: str
    token_id: str | None = None


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret(prefix: str = "") -> str:
    return prefix + secrets.token_urlsafe(32)


def is_admin_token(given: str, admin_digest: str) -> bool:
    return hmac.compare_digest(digest(given).encode(), admin_digest.encode())


async def authenticate_token(session: AsyncSession, given: str, admin_digest: str) -> Principal:
    """The admin token or an API token; else Unauthenticated saying which of unknown/revoked/expired."""
    if is_admin_token(given, admin_digest):
        return Principal("admin", "admin", "admin")
    token = (await session.execute(select(ApiToken).where(ApiToken.token_hash == digest(given)))).scalar()
    if token is None:
        raise Unauthenticated("unknown token")
    if token.revoked_at is not None:
        raise Unauthenticated("token revoked")
    now = utcnow()
    if token.expires_at is not None and token.expires_at <= now:
        raise Unauthenticated("token expired")
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        token.last_used_at = now
        await session.commit()
    return Principal("token", token.scope, token.name, token.id)  # type: ignore[arg-type]


# ---------------------------------------------------------------- API tokens


async def create_token(
    session: AsyncSession, name: str, scope: Scope, ttl_s: int | None
) -> tuple[ApiToken, str]:
    secret = new_secret(TOKEN_PREFIX)
    expires = utcnow() + timedelta(seconds=ttl_s) if ttl_s else None
    token = ApiToken(name=name, scope=scope, token_hash=digest(secret), expires_at=expires)
    session.add(token)
    await session.commit()
    return token, secret


async def list_tokens(session: AsyncSession) -> list[ApiToken]:
    return list((await session.execute(select(ApiToken).order_by(ApiToken.created_at.desc()))).scalars())


async def revoke_token(session: AsyncSession, token_id: str) -> ApiToken:
    token = await session.get(ApiToken, token_id)
    if token is None:
        raise NotFound("token not found")
    if token.revoked_at is None:
        token.revoked_at = utcnow()
    await session.execute(delete(AuthSession).where(AuthSession.token_id == token_id))
    await session.commit()
    return token


# ---------------------------------------------------------------- browser sessions


async def create_session(session: AsyncSession, who: Principal, ttl_s: int) -> tuple[str, datetime]:
    """Returns (cookie value, expiry). The session keeps the scope of the credential it was made from."""
    secret = new_secret()
    expires = utcnow() + timedelta(seconds=ttl_s)
    session.add(
        AuthSession(
            id_hash=digest(secret), scope=who.scope, name=who.name, token_id=who.token_id, expires_at=expires
        )
    )
    # Sessions past their expiry are only ever refused: drop them whenever a new one starts.
    await session.execute(delete(AuthSession).where(AuthSession.expires_at <= utcnow()))
    await session.commit()
    return secret, expires


async def authenticate_session(session: AsyncSession, cookie: str) -> tuple[Principal, datetime]:
    row = await session.get(AuthSession, digest(cookie))
    if row is None:
        raise Unauthenticated("unknown session: sign in again")
    if row.expires_at <= utcnow():
        raise Unauthenticated("session expired: sign in again")
    return Principal("session", row.scope, row.name, row.token_id), row.expires_at  # type: ignore[arg-type]


async def delete_session(session: AsyncSession, cookie: str) -> None:
    await session.execute(delete(AuthSession).where(AuthSession.id_hash == digest(cookie)))
    await session.commit()


# ---------------------------------------------------------------- one-time login codes


async def create_login_code(session: AsyncSession) -> str:
    code = new_secret()
    now = utcnow()
    # Each start makes one: drop the spent ones so the table stays small.
    await session.execute(
        delete(LoginCode).where((LoginCode.expires_at <= now) | LoginCode.used_at.is_not(None))
    )
    session.add(LoginCode(code_hash=digest(code), expires_at=now + LOGIN_CODE_TTL))
    await session.commit()
    return code


async def redeem_login_code(session: AsyncSession, code: str) -> Principal:
    """Marks the code used (atomically: of two concurrent redeems one wins) and returns the admin."""
    now = utcnow()
    used = await session.execute(
        update(LoginCode)
        .where(LoginCode.code_hash == digest(code), LoginCode.used_at.is_(None), LoginCode.expires_at > now)
        .values(used_at=now)
    )
    await session.commit()
    if used.rowcount != 1:  # type: ignore[attr-defined]
        row = await session.get(LoginCode, digest(code))
        if row is None:
            raise Unauthenticated("unknown login code")
        if row.used_at is not None:
            raise Unauthenticated("login code already used")
        raise Unauthenticated("login code expired")
    return Principal("admin", "admin", "admin (sign-in link)")
