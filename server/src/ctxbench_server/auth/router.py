"""/api/v1/session (sign in and out, always open), /api/v1/tokens (admin), the sign-in link /?login=."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from urllib.parse import quote

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import RedirectResponse

from ctxbench_server.auth import service
from ctxbench_server.auth.deps import SESSION_COOKIE, AdminDep, CredentialDep
from ctxbench_server.auth.schemas import (
    SessionCreate,
    SessionCreated,
    SessionOut,
    TokenCreate,
    TokenCreated,
    TokenOut,
)
from ctxbench_server.config import Settings
from ctxbench_server.db import SessionDep
from ctxbench_server.kit.errors import Unauthenticated

session_router = APIRouter(prefix="/session", tags=["session"])
tokens_router = APIRouter(prefix="/tokens", tags=["tokens"])


def _set_cookie(request: Request, response: Response, secret: str, expires: datetime) -> None:
    settings: Settings = request.app.state.settings
    secure = request.url.scheme == "https" or (settings.public_url or "").startswith("https:")
    response.set_cookie(
        SESSION_COOKIE,
        secret,
        max_age=settings.session_ttl_s,
        expires=expires,
        path="/",
        httponly=True,
        samesite="strict",
        secure=secure,
    )


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
    "", response_model=SessionCreated, responses={401: {"description": "unknown, revoked or expired"}}
)
async def sign_in(
    body: SessionCreate, request: Request, response: Response, session: SessionDep
) -> SessionCreated:
    """Trades a token or a one-time login code for an HttpOnly session cookie (`ctxbench_session`)."""
    if body.token is not None:
        who = await service.authenticate_token(session, body.token, request.app.state.admin_token_digest)
    else:
        assert body.login_code is not None
        who = await service.redeem_login_code(session, body.login_code)
    ttl = request.app.state.settings.session_ttl_s
    secret, expires = await service.create_session(session, who, ttl)
    _set_cookie(request, response, secret, expires)
    return SessionCreated(scope=who.scope, expires_at=expires)


@session_router.delete("", status_code=204)
async def sign_out(request: Request, session: SessionDep) -> Response:
    """Ends this browser's session (server-side too) and clears the cookie."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        await service.delete_session(session, cookie)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response


@tokens_router.post("", status_code=201, response_model=TokenCreated)
async def create_token(body: TokenCreate, session: SessionDep, _admin: AdminDep) -> TokenCreated:
    """A new API token; its secret is in this answer only."""
    token, secret = await service.create_token(session, body.name, body.scope, body.ttl_s)
    return TokenCreated(**TokenOut.model_validate(token).model_dump(), token=secret)


@tokens_router.get("", response_model=list[TokenOut])
async def list_tokens(session: SessionDep, _admin: AdminDep) -> list[TokenOut]:
    """Every API token, newest first, revoked ones included (never their secrets)."""
    return [TokenOut.model_validate(t) for t in await service.list_tokens(session)]


@tokens_router.delete("/{token_id}", response_model=TokenOut, responses={404: {"description": "unknown"}})
async def revoke_token(token_id: str, session: SessionDep, _admin: AdminDep) -> TokenOut:
    """Revokes the token at once, and ends the browser sessions signed in with it."""
    return TokenOut.model_validate(await service.revoke_token(session, token_id))


def install_login_link(app: FastAPI, index: Callable[[], Response]) -> None:
    """GET / serves the explorer; GET /?login=<code> first trades the code for a session cookie."""

    @app.get("/", include_in_schema=False, response_model=None)
    async def root(request: Request, session: SessionDep, login: str | None = None) -> Response:
        if login is None:
            return index()
        try:
            who = await service.redeem_login_code(session, login)
        except Unauthenticated as e:
            return RedirectResponse(f"/signin?error={quote(str(e.detail))}", status_code=303)
        secret, expires = await service.create_session(session, who, request.app.state.settings.session_ttl_s)
        response = RedirectResponse("/", status_code=303)
        _set_cookie(request, response, secret, expires)
        return response
