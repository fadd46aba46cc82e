"""Who may do what, as FastAPI dependencies.

`PrincipalDep`: any valid credential, else 401. `ReadDep`: the same unless CTXBENCH_PUBLIC_READ=true
(then None for anonymous readers). `WriteDep`: scope write or admin. `AdminDep`: scope admin.
Credentials: `authorization: Bearer <admin or API token>`, else the `ctxbench_session` cookie. A Bearer
header wins over a cookie; a wrong Bearer token is refused even where anonymous reads are allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.auth import service
from ctxbench_server.auth.service import Principal
from ctxbench_server.config import Settings
from ctxbench_server.db import SessionDep
from ctxbench_server.errors import Forbidden, Unauthenticated

__all__ = ["SESSION_COOKIE", "AdminDep", "Principal", "PrincipalDep", "ReadDep", "WriteDep"]

SESSION_COOKIE = "ctxbench_session"
MISSING = "no credential: send authorization: Bearer <token>, or sign in"

# In OpenAPI as the `bearer` scheme: /docs gets an Authorize button that sends the header.
bearer = HTTPBearer(
    auto_error=False,
    scheme_name="bearer",
    description="The admin token (<data dir>/admin-token or CTXBENCH_ADMIN_TOKEN) or an API token.",
)


def admin_token_digest(request: Request) -> str:
    """The SHA-256 of this server's admin token (app.state, set once at start)."""
    digest: str = request.app.state.admin_token_digest
    return digest


@dataclass(frozen=True)
class Credential:
    """What the request carried: a principal, or why there is none (refusal), and a session's expiry."""

    principal: Principal | None
    refusal: str
    from_cookie: bool = False
    expires_at: datetime | None = None


async def credential(
    request: Request,
    session: SessionDep,
    auth: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Credential:
    try:
        return await _credential(request, session, auth)
    finally:
        # The lookup's transaction ends here, giving its pooled connection back: a request that goes on
        # (an event stream lives for hours) must not hold one while it waits for something else. The
        # request's session begins a new transaction if the endpoint uses it.
        await session.rollback()


async def _credential(
    request: Request, session: AsyncSession, auth: HTTPAuthorizationCredentials | None
) -> Credential:
    admin_digest = admin_token_digest(request)
    if auth is not None:
        return Credential(await service.authenticate_token(session, auth.credentials, admin_digest), "")
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        try:
            who, expires = await service.authenticate_session(session, cookie, admin_digest)
        except Unauthenticated as e:
            return Credential(None, str(e.detail), from_cookie=True)
        return Credential(who, "", from_cookie=True, expires_at=expires)
    if request.headers.get("authorization"):
        raise Unauthenticated("malformed authorization header: want Bearer <token>")
    return Credential(None, MISSING)


CredentialDep = Annotated[Credential, Depends(credential)]


def require_principal(cred: CredentialDep) -> Principal:
    if cred.principal is None:
        raise Unauthenticated(cred.refusal)
    return cred.principal


def require_read(request: Request, cred: CredentialDep) -> Principal | None:
    settings: Settings = request.app.state.settings
    if cred.principal is None and settings.public_read:
        return None
    return require_principal(cred)


def require_write(who: Annotated[Principal, Depends(require_principal)]) -> Principal:
    if who.scope not in ("write", "admin"):
        raise Forbidden(f"scope {who.scope} cannot write")
    return who


def require_admin(who: Annotated[Principal, Depends(require_principal)]) -> Principal:
    if who.scope != "admin":
        raise Forbidden(f"scope {who.scope}: admin only")
    return who


PrincipalDep = Annotated[Principal, Depends(require_principal)]
ReadDep = Annotated[Principal | None, Depends(require_read)]
WriteDep = Annotated[Principal, Depends(require_write)]
AdminDep = Annotated[Principal, Depends(require_admin)]
