"""/api/v1/session (sign in and out, always open), /api/v1/tokens and /api/v1/sessions (admin), the
sign-in link /?login=."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, FastAPI, Request, Response
from fastapi.responses import RedirectResponse

from ctxbench_server.auth import service
from ctxbench_server.auth.deps import SESSION_COOKIE, AdminDep, CredentialDep, admin_token_digest
from ctxbench_server.auth.limiter import SignInLimiter, TooManySignIns, client_address, sign_in_limiter
from ctxbench_server.auth.schemas import (
    SessionCreate,
    SessionCreated,
    SessionInfo,
    SessionOut,
    SessionsEnded,
    TokenCreate,
    TokenCreated,
    TokenOut,
)
from ctxbench_server.config import Settings
from ctxbench_server.db import SessionDep
from ctxbench_server.errors import Unauthenticated
from ctxbench_server.models.base import utcnow
from ctxbench_server.web.openapi import errors

session_router = APIRouter(prefix="/session", tags=["session"])
# The admin's view of credentials: /tokens and /sessions (one router: app.py includes it behind ReadDep,
# each route adds AdminDep).
tokens_router = APIRouter()
LimiterDep = Annotated[SignInLimiter, Depends(sign_in_limiter)]
UNKNOWN_SESSION = "unknown session id"


def _set_cookie(request: Request, response: Response, secret: str, expires: datetime) -> None:
    settings: Settings = request.app.state.settings
    secure = request.url.scheme == "https" or (settings.public_url or "").startswith("https:")
    response.set_cookie(
        SESSION_COOKIE,
        secret,
        max_age=max(0, int((expires - utcnow()).total_seconds())),
        expires=expires,
        path="/",
        httponly=True,
        samesite="strict",
        secure=secure,
    )


def _clear_cookie(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")


@session_router.get("", response_model=SessionOut)
async def get_session(request: Request, cred: CredentialDep) -> SessionOut:
    """Who the request is signed in as; never 401 (a stale cookie reads as not authenticated)."""
    who = cred.principal
    return SessionOut(
        authenticated=who is not None,
        scope=who.scope if who else None,
        public_read=request.app.state.settings.public_read,
        expires_at=cred.expires_at,
    )


@session_router.post(
    "",
    response_model=SessionCreated,
    responses=errors(
        {
            401: "`token` or `login_code` unknown, revoked or expired",
            429: "too many failed sign-ins from this address (Retry-After)",
        }
    ),
)
async def sign_in(
    body: SessionCreate, request: Request, response: Response, session: SessionDep, limiter: LimiterDep
) -> SessionCreated:
    """Trades a token or a one-time login code for an HttpOnly session cookie (`ctxbench_session`). The
    session lasts as long as that credential does, CTXBENCH_SESSION_TTL_S at most. Failed sign-ins are
    limited per client address (CTXBENCH_SIGN_IN_BURST, CTXBENCH_SIGN_IN_REFILL_S)."""
    admin_digest = admin_token_digest(request)
    with limiter.attempt(client_address(request)):  # 429 before anything is looked up
        if body.token is not None:
            who = await service.authenticate_token(session, body.token, admin_digest)
        else:
            assert body.login_code is not None
            who = await service.redeem_login_code(session, body.login_code, admin_digest)
    ttl = request.app.state.settings.session_ttl_s
    secret, expires = await service.create_session(
        session, who, ttl, admin_digest, via_link=body.login_code is not None
    )
    _set_cookie(request, response, secret, expires)
    return SessionCreated(scope=who.scope, expires_at=expires)


@session_router.delete("", status_code=204)
async def sign_out(request: Request, session: SessionDep) -> Response:
    """Ends this browser's session (server-side too) and clears the cookie."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        await service.delete_session(session, cookie)
    response = Response(status_code=204)
    _clear_cookie(response)
    return response


@tokens_router.post("/tokens", status_code=201, response_model=TokenCreated, tags=["tokens"])
async def create_token(body: TokenCreate, session: SessionDep, _admin: AdminDep) -> TokenCreated:
    """A new API token; its secret is in this answer only."""
    token, secret = await service.create_token(session, body.name, body.scope, body.ttl_s)
    return TokenCreated(**TokenOut.model_validate(token).model_dump(), token=secret)


@tokens_router.get("/tokens", response_model=list[TokenOut], tags=["tokens"])
async def list_tokens(session: SessionDep, _admin: AdminDep) -> list[TokenOut]:
    """Every API token, newest first, revoked ones included (never their secrets)."""
    return [TokenOut.model_validate(t) for t in await service.list_tokens(session)]


@tokens_router.delete(
    "/tokens/{token_id}",
    response_model=TokenOut,
    responses=errors({404: "token not found"}),
    tags=["tokens"],
)
async def revoke_token(token_id: str, session: SessionDep, _admin: AdminDep) -> TokenOut:
    """Revokes the token at once, and ends the browser sessions signed in with it."""
    return TokenOut.model_validate(await service.revoke_token(session, token_id))


@tokens_router.get("/sessions", response_model=list[SessionInfo], tags=["sessions"])
async def list_sessions(request: Request, session: SessionDep, who: AdminDep) -> list[SessionInfo]:
    """Every browser session that still lets a browser in, newest first (never a cookie or its hash)."""
    rows = await service.list_sessions(session, admin_token_digest(request))
    return [_info(row, who) for row in rows]


@tokens_router.delete(
    "/sessions/{session_id}",
    response_model=SessionInfo,
    responses=errors({404: UNKNOWN_SESSION}),
    tags=["sessions"],
)
async def end_session(session_id: str, response: Response, session: SessionDep, who: AdminDep) -> SessionInfo:
    """Ends one browser session at once (its next request gets 401); its cookie is cleared when it is
    the caller's own."""
    info = _info(await service.end_session(session, session_id), who)
    if info.current:
        _clear_cookie(response)
    return info


@tokens_router.delete("/sessions", response_model=SessionsEnded, tags=["sessions"])
async def end_all_sessions(
    response: Response, session: SessionDep, who: AdminDep, keep_current: bool = False
) -> SessionsEnded:
    """Signs out everywhere: ends every browser session, the caller's own too unless `keep_current`.
    Tokens stay (revoke them with DELETE /tokens/{id}); the admin token changes only with a restart."""
    keep = who.session_id if keep_current else None
    ended = await service.end_all_sessions(session, keep)
    if who.session_id is not None and keep is None:
        _clear_cookie(response)
    return SessionsEnded(ended=ended)


def _info(row: object, who: service.Principal) -> SessionInfo:
    info = SessionInfo.model_validate(row)
    info.current = who.session_id is not None and info.id == who.session_id
    return info


def install_login_link(app: FastAPI, index: Callable[[], Response]) -> None:
    """GET / serves the explorer; GET /?login=<code> first trades the code for a session cookie. A code
    refused (or too many failed sign-ins from this address) goes to the sign-in page with the reason."""

    @app.get("/", include_in_schema=False, response_model=None)
    async def root(
        request: Request, session: SessionDep, limiter: LimiterDep, login: str | None = None
    ) -> Response:
        if login is None:
            return index()
        admin_digest = admin_token_digest(request)
        try:
            with limiter.attempt(client_address(request)):
                who = await service.redeem_login_code(session, login, admin_digest)
        except (Unauthenticated, TooManySignIns) as e:
            return RedirectResponse(f"/signin?error={quote(str(e.detail))}", status_code=303)
        ttl = request.app.state.settings.session_ttl_s
        secret, expires = await service.create_session(session, who, ttl, admin_digest, via_link=True)
        response = RedirectResponse("/", status_code=303)
        _set_cookie(request, response, secret, expires)
        return response
