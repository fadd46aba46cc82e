"""A browser session lasts while the credential it was made from does (issue 26, items 1 and 2 of "Trust
that holds"): the admin token it recorded (rotated with a restart), or its API token (revoked, expired),
and never past that token's expiry."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import httpx
from alembic import command
from sqlalchemy import inspect, select, text, update
from sqlalchemy.engine import Connection

from ctxbench_server.auth import service
from ctxbench_server.db import alembic_config, migrate
from ctxbench_server.main import CtxbenchServer
from ctxbench_server.models import ApiToken, AuthSession
from ctxbench_server.models.base import utcnow

from .compare_helpers import Seeder
from .conftest import ADMIN_TOKEN, running_server, test_settings
from .test_db import fresh_engine, upgrade

ROTATED = "rotated-admin-token-fedcba9876543210"


def cookie_of(r: httpx.Response) -> str:
    m = re.search(r"ctxbench_session=([^;]+)", r.headers["set-cookie"])
    assert m, r.headers
    return m.group(1)


def browser(server: CtxbenchServer, cookie: str) -> httpx.AsyncClient:
    """A client that carries a session cookie and this server's Origin, as the explorer does."""
    base = f"http://127.0.0.1:{server.http_port}"
    headers = {"cookie": f"ctxbench_session={cookie}", "origin": base}
    return httpx.AsyncClient(base_url=base, headers=headers, timeout=10)


def anon(server: CtxbenchServer) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.http_port}", timeout=10)


async def test_rotating_the_admin_token_ends_its_sessions_and_codes(tmp_path: Path) -> None:
    async with running_server(test_settings(tmp_path)) as first, anon(first) as c:
        by_token = cookie_of(await c.post("/api/v1/session", json={"token": ADMIN_TOKEN}))
        c.cookies.clear()
        by_link = cookie_of(
            await c.get(first.sign_in_url.removeprefix(f"http://127.0.0.1:{first.http_port}"))
        )
        async with first.sessionmaker() as s:
            unused_code = await service.create_login_code(s, service.digest(ADMIN_TOKEN))
            stored = list((await s.execute(select(AuthSession))).scalars())
        # What the sessions keep of the admin token: a fingerprint, neither the token nor its digest.
        assert {r.source for r in stored} == {"admin", "login_link"}
        for r in stored:
            assert r.admin_fp and r.admin_fp not in (ADMIN_TOKEN, service.digest(ADMIN_TOKEN))
            assert ADMIN_TOKEN not in r.admin_fp

    # The same database and data dir, a new admin token: the restart an operator rotates with.
    second = CtxbenchServer(test_settings(tmp_path, admin_token=ROTATED))
    await second.start()
    try:
        async with anon(second) as c:
            r = await c.get("/api/v1/machines", headers={"authorization": f"Bearer {ADMIN_TOKEN}"})
            assert (r.status_code, r.json()) == (401, {"detail": "unknown token"})
            for cookie in (by_token, by_link):
                async with browser(second, cookie) as b:
                    r = await b.get("/api/v1/machines")
                    assert r.status_code == 401, r.text
                    assert r.json() == {"detail": "the session's admin token was replaced: sign in again"}
                    r = await b.post("/api/v1/tokens", json={"name": "backdoor", "scope": "admin"})
                    assert r.status_code == 401, r.text
                    assert (await b.get("/api/v1/session")).json()["authenticated"] is False
            r = await c.post("/api/v1/session", json={"login_code": unused_code})
            assert (r.status_code, r.json()) == (401, {"detail": "login code from a replaced admin token"})

            fresh = cookie_of(await c.post("/api/v1/session", json={"token": ROTATED}))
            async with browser(second, fresh) as b:
                assert (await b.post("/api/v1/tokens", json={"name": "ok"})).status_code == 201
            async with second.sessionmaker() as s:  # the old sessions went when the new one started
                assert [r.source for r in (await s.execute(select(AuthSession))).scalars()] == ["admin"]
    finally:
        await second.stop()


async def test_a_printed_sign_in_link_is_refused_after_rotation(tmp_path: Path) -> None:
    """The link a server prints at start, never used, does not sign in once the admin token changes."""
    async with running_server(test_settings(tmp_path)) as first:
        printed = first.sign_in_url.removeprefix(f"http://127.0.0.1:{first.http_port}")
        code = printed.removeprefix("/?login=")
        assert code != printed
        async with first.sessionmaker() as s:
            assert (await s.execute(select(AuthSession))).first() is None  # unused

    second = CtxbenchServer(test_settings(tmp_path, admin_token=ROTATED))
    await second.start()
    try:
        async with anon(second) as c:
            r = await c.get(printed)
            assert r.status_code == 303, r.text
            assert "set-cookie" not in r.headers
            assert r.headers["location"] == "/signin?error=login%20code%20from%20a%20replaced%20admin%20token"
            r = await c.post("/api/v1/session", json={"login_code": code})
            assert (r.status_code, r.json()) == (401, {"detail": "login code from a replaced admin token"})
        async with second.sessionmaker() as s:
            assert (await s.execute(select(AuthSession))).first() is None
    finally:
        await second.stop()


async def test_a_session_never_outlives_its_api_token(
    server: CtxbenchServer, http: httpx.AsyncClient
) -> None:
    machine = await Seeder(server.sessionmaker).machine("m1")
    created = (
        await http.post("/api/v1/tokens", json={"name": "short", "scope": "write", "ttl_s": 60})
    ).json()
    token_expires = datetime.fromisoformat(created["expires_at"])
    async with anon(server) as c:
        r = await c.post("/api/v1/session", json={"token": created["token"]})
    assert r.status_code == 200, r.text
    assert datetime.fromisoformat(r.json()["expires_at"]) <= token_expires
    max_age = int(re.search(r"max-age=(\d+)", r.headers["set-cookie"], re.I).group(1))  # type: ignore[union-attr]
    assert 0 < max_age <= 60
    async with server.sessionmaker() as s:
        row = (await s.execute(select(AuthSession))).scalar_one()
        assert row.source == "token" and row.token_id == created["id"] and row.admin_fp is None
        assert row.expires_at <= token_expires

    async with browser(server, cookie_of(r)) as b:
        assert (await b.patch(f"/api/v1/machines/{machine}", json={"name": "fast"})).status_code == 200
        # The token's minute is up (moved into the past rather than waited for).
        async with server.sessionmaker() as s:
            past = utcnow() - timedelta(seconds=1)
            await s.execute(update(ApiToken).where(ApiToken.id == created["id"]).values(expires_at=past))
            await s.commit()
        bearer = {"authorization": f"Bearer {created['token']}"}
        async with anon(server) as c:
            r = await c.get("/api/v1/machines", headers=bearer)
            assert (r.status_code, r.json()) == (401, {"detail": "token expired"})
        r = await b.patch(f"/api/v1/machines/{machine}", json={"name": "still me"})
        assert (r.status_code, r.json()) == (401, {"detail": "the session's token expired: sign in again"})
    assert (await http.get(f"/api/v1/machines/{machine}")).json()["name"] == "fast"


async def test_0010_ends_stored_sessions_and_keeps_codes(tmp_path: Path) -> None:
    """Sessions stored before 0010 cannot say which admin token made them: they end. Login codes stay
    (good with any admin token until they expire); downgrading gives 0009's tables back."""
    engine = await fresh_engine(tmp_path)
    at = "2026-11-22 01:00:00.000000"
    try:
        async with engine.begin() as conn:
            await conn.run_sync(upgrade, "0009")
            await conn.execute(
                text(
                    "INSERT INTO auth_sessions (id_hash, scope, name, created_at, expires_at)"
                    f" VALUES ('{'a' * 64}', 'admin', 'admin', '{at}', '2099-01-01 00:00:00')"
                )
            )
            await conn.execute(
                text(
                    "INSERT INTO login_codes (code_hash, created_at, expires_at)"
                    f" VALUES ('{'c' * 64}', '{at}', '2099-01-01 00:00:00')"
                )
            )
        await migrate(engine)
        async with engine.connect() as conn:
            assert (await conn.execute(text("SELECT count(*) FROM auth_sessions"))).scalar() == 0
            q = "SELECT code_hash, admin_fp FROM login_codes"
            assert tuple((await conn.execute(text(q))).one()) == ("c" * 64, None)
        async with engine.begin() as conn:
            await conn.run_sync(downgrade, "0009")
            cols = await conn.run_sync(lambda c: {x["name"] for x in inspect(c).get_columns("auth_sessions")})
            assert cols == {"id_hash", "scope", "name", "token_id", "created_at", "expires_at"}
    finally:
        await engine.dispose()


def downgrade(conn: Connection, rev: str) -> None:
    cfg = alembic_config()
    cfg.attributes["connection"] = conn
    command.downgrade(cfg, rev)
