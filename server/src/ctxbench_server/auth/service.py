"""Credentials: the admin token, API tokens, browser sessions and one-time login codes.

Secrets are random, stored only as SHA-256 hex digests, and looked up by digest (no secret-dependent
string comparison); the admin token's digest is compared with hmac.compare_digest. Nothing here logs.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import ColumnElement, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.errors import NotFound, Unauthenticated
from ctxbench_server.models import ApiToken, AuthSession, LoginCode
from ctxbench_server.models.base import utcnow

Scope = Literal["admin", "write", "read"]
Kind = Literal["admin", "token", "session"]
SessionSource = Literal["admin", "token", "login_link"]
TOKEN_PREFIX = "ctxb_"
LOGIN_CODE_TTL = timedelta(hours=24)
# What new_secret() makes (32 random bytes, URL-safe base64): anything else is refused unread.
LOGIN_CODE_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")
# last_used_at is written at most this often per token or session, so a busy script or page costs no
# write per request.
LAST_USED_RESOLUTION = timedelta(seconds=60)


@dataclass(frozen=True)
class Principal:
    """Who is asking: the admin token, an API token, or a browser session (signed in with one).
    `expires_at`: when the credential itself ends (None: until revoked or replaced); `session_id`: the
    session's public id when kind is "session"."""

    kind: Kind
    scope: Scope
    name: str
    token_id: str | None = None
    expires_at: datetime | None = None
    session_id: str | None = None


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret(prefix: str = "") -> str:
    return prefix + secrets.token_urlsafe(32)


def is_admin_token(given: str, admin_digest: str) -> bool:
    return hmac.compare_digest(digest(given).encode(), admin_digest.encode())


def admin_fingerprint(admin_digest: str) -> str:
    """What a session or a login code keeps of the admin token it came from: enough to tell a replaced
    token (128 bits), neither the token nor the digest a Bearer header is checked against."""
    return hashlib.sha256(f"ctxbench admin fingerprint:{admin_digest}".encode()).hexdigest()[:32]


async def authenticate_token(session: AsyncSession, given: str, admin_digest: str) -> Principal:
    """The admin token or an API token; else Unauthenticated saying which of unknown/revoked/expired.
    A wrong token costs one read, no write."""
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
    return Principal("token", token.scope, token.name, token.id, token.expires_at)  # type: ignore[arg-type]


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


async def create_session(
    session: AsyncSession, who: Principal, ttl_s: int, admin_digest: str, *, via_link: bool = False
) -> tuple[str, datetime]:
    """Returns (cookie value, expiry). The session keeps the scope of the credential it was made from and
    lasts no longer than it: `ttl_s` at most, never past an API token's expiry; one made from the admin
    token (or a sign-in link, `via_link`) records which admin token, and ends when the server's differs."""
    secret = new_secret()
    now = utcnow()
    expires = now + timedelta(seconds=ttl_s)
    if who.expires_at is not None:
        expires = min(expires, who.expires_at)
    fp = admin_fingerprint(admin_digest)
    source: SessionSource = "token" if who.token_id is not None else "login_link" if via_link else "admin"
    session.add(
        AuthSession(
            id_hash=digest(secret),
            scope=who.scope,
            name=who.name,
            source=source,
            admin_fp=fp if who.token_id is None else None,
            token_id=who.token_id,
            expires_at=expires,
        )
    )
    # Sessions that can only be refused (expired, or from an admin token this server no longer has) are
    # dropped whenever a new one starts.
    await session.execute(delete(AuthSession).where(~_live(now, fp)))
    await session.commit()
    return secret, expires


def _live(now: datetime, fp: str) -> ColumnElement[bool]:
    """Sessions not expired whose admin token is the server's (an API token's are checked by a join)."""
    return (AuthSession.expires_at > now) & (AuthSession.admin_fp.is_(None) | (AuthSession.admin_fp == fp))


async def authenticate_session(
    session: AsyncSession, cookie: str, admin_digest: str
) -> tuple[Principal, datetime]:
    """The session of a cookie while it and its source credential last; else Unauthenticated saying why."""
    found = (
        await session.execute(
            select(AuthSession, ApiToken)
            .outerjoin(ApiToken, AuthSession.token_id == ApiToken.id)
            .where(AuthSession.id_hash == digest(cookie))
        )
    ).first()
    if found is None:
        raise Unauthenticated("unknown session: sign in again")
    row, token = found
    now = utcnow()
    if row.expires_at <= now:
        raise Unauthenticated("session expired: sign in again")
    if row.token_id is not None:
        if token is None:
            raise Unauthenticated("unknown session: sign in again")
        if token.revoked_at is not None:
            raise Unauthenticated("the session's token was revoked: sign in again")
        if token.expires_at is not None and token.expires_at <= now:
            raise Unauthenticated("the session's token expired: sign in again")
    elif row.admin_fp != admin_fingerprint(admin_digest):
        raise Unauthenticated("the session's admin token was replaced: sign in again")
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_RESOLUTION:
        await session.execute(
            update(AuthSession).where(AuthSession.id_hash == row.id_hash).values(last_used_at=now)
        )
        await session.commit()
    who = Principal("session", row.scope, row.name, row.token_id, row.expires_at, row.id)  # type: ignore[arg-type]
    return who, row.expires_at


async def delete_session(session: AsyncSession, cookie: str) -> None:
    await session.execute(delete(AuthSession).where(AuthSession.id_hash == digest(cookie)))
    await session.commit()


async def list_sessions(session: AsyncSession, admin_digest: str) -> list[AuthSession]:
    """The sessions that still let a browser in, newest first (the refused ones are not listed)."""
    now = utcnow()
    query = (
        select(AuthSession)
        .outerjoin(ApiToken, AuthSession.token_id == ApiToken.id)
        .where(_live(now, admin_fingerprint(admin_digest)))
        .where(
            AuthSession.token_id.is_(None)
            | (ApiToken.revoked_at.is_(None) & (ApiToken.expires_at.is_(None) | (ApiToken.expires_at > now)))
        )
        .order_by(AuthSession.created_at.desc())
    )
    return list((await session.execute(query)).scalars())


async def end_session(session: AsyncSession, session_id: str) -> AuthSession:
    row = (await session.execute(select(AuthSession).where(AuthSession.id == session_id))).scalar()
    if row is None:
        raise NotFound("unknown session id")
    await session.delete(row)
    await session.commit()
    return row


async def end_all_sessions(session: AsyncSession, keep: str | None = None) -> int:
    """Ends every browser session but the one with public id `keep`; returns how many ended."""
    query = delete(AuthSession)
    if keep is not None:
        query = query.where(AuthSession.id != keep)
    ended = await session.execute(query)
    await session.commit()
    return int(ended.rowcount)  # type: ignore[attr-defined]


# ---------------------------------------------------------------- one-time login codes


async def create_login_code(session: AsyncSession, admin_digest: str | None = None) -> str:
    """A new code; given the server's admin token's digest, only a server with that token takes it."""
    code = new_secret()
    now = utcnow()
    # Each start makes one: drop the spent ones so the table stays small.
    await session.execute(
        delete(LoginCode).where((LoginCode.expires_at <= now) | LoginCode.used_at.is_not(None))
    )
    fp = admin_fingerprint(admin_digest) if admin_digest is not None else None
    session.add(LoginCode(code_hash=digest(code), expires_at=now + LOGIN_CODE_TTL, admin_fp=fp))
    await session.commit()
    return code


async def redeem_login_code(session: AsyncSession, code: str, admin_digest: str) -> Principal:
    """Marks the code used (atomically: of two concurrent redeems one wins) and returns the admin. A code
    that is not one (wrong shape, unknown, used, expired, another admin token's) is refused after one
    read at most: only a good code costs a write."""
    if not LOGIN_CODE_SHAPE.fullmatch(code):
        raise Unauthenticated("unknown login code")
    row = await session.get(LoginCode, digest(code))
    now = utcnow()
    if row is None:
        raise Unauthenticated("unknown login code")
    if row.used_at is not None:
        raise Unauthenticated("login code already used")
    if row.expires_at <= now:
        raise Unauthenticated("login code expired")
    if row.admin_fp is not None and row.admin_fp != admin_fingerprint(admin_digest):
        raise Unauthenticated("login code from a replaced admin token")
    used = await session.execute(
        update(LoginCode)
        .where(LoginCode.code_hash == row.code_hash, LoginCode.used_at.is_(None))
        .values(used_at=now)
    )
    await session.commit()
    if used.rowcount != 1:  # type: ignore[attr-defined]
        raise Unauthenticated("login code already used")
    return Principal("admin", "admin", "admin (sign-in link)")
