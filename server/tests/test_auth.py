"""Access control (issue 9) against the real server over real sockets: who may read and write, API
tokens, browser sessions, one-time sign-in links, and the Host / Origin / header checks in front."""

from __future__ import annotations

import logging
import re
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute
from sqlalchemy import func, select, update
from starlette.routing import Route

from ctxbench_server.auth.service import digest
from ctxbench_server.main import CtxbenchServer
from ctxbench_server.models import ApiToken, AuthSession, Run
from ctxbench_server.models.base import utcnow

from .compare_helpers import Seeder, spread
from .conftest import ADMIN, ADMIN_TOKEN

# Everything a stranger may reach. Any other (method, route) must answer 401 without a credential.
OPEN_ROUTES = {
    ("GET", "/api/v1/health"),
    ("GET", "/api/v1/session"),
    ("POST", "/api/v1/session"),
    ("DELETE", "/api/v1/session"),
    ("GET", "/api/v1/shares/{slug}"),
    ("GET", "/"),  # the explorer's shell, and the sign-in link /?login=
    ("GET", "/{path:path}"),  # the explorer's files: /s/<slug>, /signin, assets (no data in them)
    ("GET", "/openapi.json"),
    ("GET", "/docs"),  # Swagger UI, its start-up script and files (web/swagger.py)
    ("GET", "/docs/init.js"),
    ("GET", "/docs/{name}"),
    ("GET", "/install-agent.sh"),  # the agent installer and bundles hold no secret
    ("GET", "/dist/{name}"),
    # Unknown API paths: 404 for every method, nothing behind them.
    *((m, "/api/{path:path}") for m in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")),
}
BODY_METHODS = {"POST", "PUT", "PATCH"}
# Reads that stay admin-only even with CTXBENCH_PUBLIC_READ=true: credentials, enrollment, webhooks.
ADMIN_READS = ("/api/v1/tokens", "/api/v1/sessions", "/api/v1/join-tokens", "/api/v1/webhooks")


def flat_routes(server: CtxbenchServer) -> list[Any]:
    """The app's routes with included routers flattened (FastAPI >= 0.16x includes them lazily)."""
    try:
        from fastapi.routing import iter_route_contexts  # type: ignore[attr-defined]
    except ImportError:
        return list(server.app.routes)
    return list(iter_route_contexts(server.app.routes))


def every_route(server: CtxbenchServer) -> list[tuple[str, str]]:
    out = []
    for route in flat_routes(server):
        assert isinstance(getattr(route, "original_route", route), APIRoute | Route), route
        for method in sorted(route.methods or ()):
            if method != "HEAD" or route.path == "/api/{path:path}":
                out.append((method, route.path))
    return out


def concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x", path)


async def request(client: httpx.AsyncClient, method: str, path: str, **kw: Any) -> httpx.Response:
    if method in BODY_METHODS:
        kw.setdefault("json", {})
    async with client.stream(method, concrete(path), **kw) as r:
        if not r.headers.get("content-type", "").startswith("text/event-stream"):
            await r.aread()  # an event stream never ends (GET /events): its status is the answer
    return r


def base(server: CtxbenchServer) -> str:
    return f"http://127.0.0.1:{server.http_port}"


def cookie_of(r: httpx.Response) -> str:
    m = re.search(r"ctxbench_session=([^;]+)", r.headers["set-cookie"])
    assert m, r.headers
    return m.group(1)


async def test_every_route_needs_a_credential_except_the_open_ones(
    server: CtxbenchServer, anon: httpx.AsyncClient
) -> None:
    routes = every_route(server)
    assert OPEN_ROUTES <= set(routes), OPEN_ROUTES - set(routes)
    assert ("POST", "/api/v1/runs") in routes and ("GET", "/api/v1/runs/{run_id}/events") in routes
    assert ("GET", "/api/v1/compare") in routes
    for method, path in routes:
        r = await request(anon, method, path)
        if (method, path) in OPEN_ROUTES:
            assert r.status_code != 401, (method, path, r.text)
        else:
            assert r.status_code == 401, (method, path, r.status_code, r.text)
            assert r.headers["www-authenticate"] == "Bearer"
            assert r.json()["detail"].startswith("no credential")


@pytest.mark.parametrize("settings_overrides", [{"public_read": True}])
async def test_public_read_opens_reads_only(server: CtxbenchServer, anon: httpx.AsyncClient) -> None:
    for method, path in every_route(server):
        r = await request(anon, method, path)
        if (method, path) in OPEN_ROUTES:
            continue
        if method == "GET" and not path.startswith(ADMIN_READS):
            assert r.status_code != 401, (method, path, r.text)  # 200, or 404 for the made-up id
        else:
            assert r.status_code == 401, (method, path, r.status_code)
    assert (await anon.get("/api/v1/machines")).json() == []
    assert (await anon.get("/api/v1/session")).json() == {
        "authenticated": False,
        "scope": None,
        "public_read": True,
        "expires_at": None,
    }
    # A wrong token is still refused, and a stale cookie does not stop a public read.
    bad = await anon.get("/api/v1/runs", headers={"authorization": "Bearer nope-nope-nope"})
    assert bad.status_code == 401
    assert (await anon.get("/api/v1/runs", headers={"cookie": "ctxbench_session=stale"})).status_code == 200


async def test_admin_token_and_wrong_tokens(anon: httpx.AsyncClient, http: httpx.AsyncClient) -> None:
    assert (await http.get("/api/v1/machines")).status_code == 200
    r = await anon.get("/api/v1/machines", headers={"authorization": "Bearer not-a-token-at-all"})
    assert (r.status_code, r.json()) == (401, {"detail": "unknown token"})
    assert r.headers["www-authenticate"] == "Bearer"
    r = await anon.get("/api/v1/machines", headers={"authorization": f"Basic {ADMIN_TOKEN}"})
    assert r.status_code == 401 and "Bearer" in r.json()["detail"]
    me = (await http.get("/api/v1/session")).json()
    assert me == {"authenticated": True, "scope": "admin", "public_read": False, "expires_at": None}


async def test_api_token_create_use_revoke(
    server: CtxbenchServer, anon: httpx.AsyncClient, http: httpx.AsyncClient
) -> None:
    r = await http.post("/api/v1/tokens", json={"name": "ci", "scope": "write"})
    assert r.status_code == 201, r.text
    created = r.json()
    secret = created.pop("token")
    assert secret.startswith("ctxb_") and len(secret) > 40
    assert created["name"] == "ci" and created["last_used_at"] is None and created["revoked_at"] is None
    listed = (await http.get("/api/v1/tokens")).json()
    assert listed == [created]  # never the secret again
    async with server.sessionmaker() as s:  # stored hashed only
        row = await s.get(ApiToken, created["id"])
        assert row is not None and row.token_hash == digest(secret) and secret not in row.token_hash

    ci = {"authorization": f"Bearer {secret}"}
    assert (await anon.get("/api/v1/runs", headers=ci)).status_code == 200
    r = await anon.post("/api/v1/runs", headers=ci, json={"machine_id": "nope", "items": [{"kernel": "k"}]})
    assert r.status_code == 404  # through the door: the service answers
    (used,) = (await http.get("/api/v1/tokens")).json()
    assert used["last_used_at"] is not None
    # A write token is not an admin: no tokens of its own.
    assert (await anon.post("/api/v1/tokens", headers=ci, json={"name": "x"})).status_code == 403
    assert (await anon.get("/api/v1/tokens", headers=ci)).status_code == 403

    r = await http.delete(f"/api/v1/tokens/{created['id']}")
    assert r.status_code == 200 and r.json()["revoked_at"] is not None
    r = await anon.get("/api/v1/runs", headers=ci)
    assert (r.status_code, r.json()) == (401, {"detail": "token revoked"})
    assert (await http.delete("/api/v1/tokens/no-such-token")).status_code == 404


async def test_expired_token(
    server: CtxbenchServer, anon: httpx.AsyncClient, http: httpx.AsyncClient
) -> None:
    created = (await http.post("/api/v1/tokens", json={"name": "short", "ttl_s": 60})).json()
    assert created["expires_at"] is not None
    async with server.sessionmaker() as s:
        await s.execute(
            update(ApiToken).where(ApiToken.id == created["id"]).values(expires_at=utcnow() - timedelta(1))
        )
        await s.commit()
    r = await anon.get("/api/v1/runs", headers={"authorization": f"Bearer {created['token']}"})
    assert (r.status_code, r.json()) == (401, {"detail": "token expired"})


async def test_read_scope_cannot_write(anon: httpx.AsyncClient, http: httpx.AsyncClient) -> None:
    secret = (await http.post("/api/v1/tokens", json={"name": "viewer", "scope": "read"})).json()["token"]
    reader = {"authorization": f"Bearer {secret}"}
    assert (await anon.get("/api/v1/machines", headers=reader)).status_code == 200
    r = await anon.post("/api/v1/runs", headers=reader, json={"machine_id": "m", "items": [{"kernel": "k"}]})
    assert (r.status_code, r.json()) == (403, {"detail": "scope read cannot write"})
    r = await anon.post("/api/v1/shares", headers=reader, json={"view": {}})
    assert r.status_code == 403


async def test_session_cookie_sign_in_and_out(server: CtxbenchServer, anon: httpx.AsyncClient) -> None:
    r = await anon.post("/api/v1/session", json={"token": "wrong-wrong-wrong"})
    assert (r.status_code, r.json()) == (401, {"detail": "unknown token"})
    assert (await anon.post("/api/v1/session", json={})).status_code == 422
    r = await anon.post("/api/v1/session", json={"token": ADMIN_TOKEN})
    assert r.status_code == 200 and r.json()["scope"] == "admin" and r.json()["expires_at"]
    set_cookie = r.headers["set-cookie"].lower()
    assert "httponly" in set_cookie and "samesite=strict" in set_cookie and "path=/" in set_cookie
    cookie = cookie_of(r)
    async with server.sessionmaker() as s:  # the server keeps only the hash
        assert await s.get(AuthSession, cookie) is None and await s.get(AuthSession, digest(cookie))
    browser = {"cookie": f"ctxbench_session={cookie}", "origin": base(server)}

    me = (await anon.get("/api/v1/session", headers=browser)).json()
    assert me["authenticated"] and me["scope"] == "admin" and me["expires_at"]
    assert (await anon.get("/api/v1/machines", headers=browser)).status_code == 200
    r = await anon.post("/api/v1/runs", headers=browser, json={"machine_id": "m", "items": [{"kernel": "k"}]})
    assert r.status_code == 404  # the write got through to the service

    r = await anon.delete("/api/v1/session", headers=browser)
    assert r.status_code == 204 and 'ctxbench_session=""' in r.headers["set-cookie"]
    r = await anon.get("/api/v1/machines", headers=browser)
    assert r.status_code == 401 and r.json()["detail"].startswith("unknown session")
    assert (await anon.get("/api/v1/session", headers=browser)).json()["authenticated"] is False


async def test_expired_session(server: CtxbenchServer, anon: httpx.AsyncClient) -> None:
    cookie = cookie_of(await anon.post("/api/v1/session", json={"token": ADMIN_TOKEN}))
    async with server.sessionmaker() as s:
        await s.execute(update(AuthSession).values(expires_at=utcnow() - timedelta(seconds=1)))
        await s.commit()
    r = await anon.get("/api/v1/runs", headers={"cookie": f"ctxbench_session={cookie}"})
    assert (r.status_code, r.json()["detail"]) == (401, "session expired: sign in again")


async def test_session_from_a_token_ends_when_it_is_revoked(
    anon: httpx.AsyncClient, http: httpx.AsyncClient
) -> None:
    created = (await http.post("/api/v1/tokens", json={"name": "laptop", "scope": "read"})).json()
    r = await anon.post("/api/v1/session", json={"token": created["token"]})
    assert r.json()["scope"] == "read"
    browser = {"cookie": f"ctxbench_session={cookie_of(r)}"}
    assert (await anon.get("/api/v1/runs", headers=browser)).status_code == 200
    await http.delete(f"/api/v1/tokens/{created['id']}")
    assert (await anon.get("/api/v1/runs", headers=browser)).status_code == 401


async def test_sign_in_link_works_once(server: CtxbenchServer, anon: httpx.AsyncClient) -> None:
    assert server.sign_in_url.startswith(f"{base(server)}/?login=")
    link = server.sign_in_url.removeprefix(base(server))
    r = await anon.get(link)
    assert (r.status_code, r.headers["location"]) == (303, "/")
    browser = {"cookie": f"ctxbench_session={cookie_of(r)}"}
    assert (await anon.get("/api/v1/machines", headers=browser)).status_code == 200

    again = await anon.get(link)
    assert again.status_code == 303 and "set-cookie" not in again.headers
    assert again.headers["location"] == "/signin?error=login%20code%20already%20used"
    unknown = await anon.get("/?login=made-up")
    assert (unknown.status_code, unknown.headers["location"]) == (303, "/signin?error=unknown%20login%20code")
    code = link.removeprefix("/?login=")
    anon.cookies.clear()  # a cookie on a write needs an Origin: this is a fresh browser
    r = await anon.post("/api/v1/session", json={"login_code": code})
    assert (r.status_code, r.json()) == (401, {"detail": "login code already used"})
    assert (await anon.get("/")).status_code == 200  # no code: the explorer


async def test_cookie_writes_need_this_servers_origin(
    server: CtxbenchServer, anon: httpx.AsyncClient
) -> None:
    cookie = cookie_of(await anon.post("/api/v1/session", json={"token": ADMIN_TOKEN}))
    body = {"machine_id": "m", "items": [{"kernel": "k"}]}
    jar = {"cookie": f"ctxbench_session={cookie}"}
    for headers in (
        {"origin": "https://attacker.example"},
        {"origin": "null"},
        {},  # a cookie and no Origin: not a browser we can vouch for
        {"sec-fetch-site": "cross-site"},
        {"origin": f"http://localhost:{server.http_port}"},  # same host, other origin
    ):
        r = await anon.post("/api/v1/runs", headers={**jar, **headers}, json=body)
        assert r.status_code == 403, (headers, r.text)
        assert r.json()["detail"].startswith("cross-origin write refused")
    assert (
        await anon.delete("/api/v1/session", headers={**jar, "origin": "https://a.example"})
    ).status_code == 403
    r = await anon.post("/api/v1/runs", headers={**jar, "sec-fetch-site": "same-origin"}, json=body)
    assert r.status_code == 404
    r = await anon.post("/api/v1/runs", headers={**jar, "origin": base(server)}, json=body)
    assert r.status_code == 404
    async with server.sessionmaker() as s:
        assert await s.scalar(select(func.count()).select_from(Run)) == 0
    # Reads with a cookie need no Origin (top-level navigations and fetches alike).
    assert (await anon.get("/api/v1/runs", headers=jar)).status_code == 200


async def test_bearer_writes_need_no_origin(anon: httpx.AsyncClient) -> None:
    body = {"machine_id": "m", "items": [{"kernel": "k"}]}
    assert (await anon.post("/api/v1/runs", headers=ADMIN, json=body)).status_code == 404
    r = await anon.post("/api/v1/runs", headers={**ADMIN, "origin": "https://elsewhere.example"}, json=body)
    assert r.status_code == 404  # a page elsewhere cannot add the header: the token is the proof


async def test_unknown_host_is_refused_before_anything(
    server: CtxbenchServer, anon: httpx.AsyncClient
) -> None:
    rebound = {"host": "attacker.example", **ADMIN}
    for method, path in (("GET", "/"), ("GET", "/api/v1/health"), ("POST", "/api/v1/runs")):
        r = await anon.request(method, path, headers=rebound, json={"machine_id": "m", "items": []})
        assert r.status_code == 400, (method, path)
        assert "attacker.example" in r.json()["detail"]
        assert r.headers["x-content-type-options"] == "nosniff"
    async with server.sessionmaker() as s:
        assert await s.scalar(select(func.count()).select_from(Run)) == 0
    for ok in ("localhost", f"localhost:{server.http_port}", "[::1]:1", "127.0.0.1"):
        assert (await anon.get("/api/v1/health", headers={"host": ok})).status_code == 200, ok
    # a served name before the last colon is not enough: the whole header must be a host and a port
    for bad in ("127.0.0.1:9180@attacker.example", "localhost:80/x", "localhost:", "local host", "[::1"):
        assert (await anon.get("/api/v1/health", headers={"host": bad})).status_code == 400, bad


@pytest.mark.parametrize("settings_overrides", [{"allowed_hosts": "bench.lan, *.nope"}])
async def test_allowed_hosts_setting(anon: httpx.AsyncClient) -> None:
    assert (await anon.get("/api/v1/health", headers={"host": "BENCH.lan:8080"})).status_code == 200
    assert (await anon.get("/api/v1/health", headers={"host": "localhost"})).status_code == 400


async def test_security_headers_on_every_response(anon: httpx.AsyncClient) -> None:
    for path in ("/", "/api/v1/health", "/api/v1/runs", "/api/v1/nothing", "/s/AbCdEfGhIjKlMnOp"):
        r = await anon.get(path)
        csp = r.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
        script = next(d for d in csp.split(";") if d.strip().startswith("script-src"))
        assert script.strip() == "script-src 'self'", csp
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"
    docs = await anon.get("/docs")
    assert docs.status_code == 200 and "http" not in docs.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in docs.headers["content-security-policy"]
    spec = (await anon.get("/openapi.json")).json()
    assert spec["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": spec["components"]["securitySchemes"]["bearer"]["description"],
    }
    assert {"bearer": []} in spec["paths"]["/api/v1/runs"]["post"]["security"]


@pytest.mark.parametrize("settings_overrides", [{"public_url": "https://bench.example/"}])
async def test_share_url_uses_public_url_and_opens_without_credential(
    server: CtxbenchServer, anon: httpx.AsyncClient, http: httpx.AsyncClient
) -> None:
    seed = Seeder(server.sessionmaker)
    await seed.kernels()
    a, b = await seed.machine("a"), await seed.machine("b")
    await seed.result(await seed.run(a), a, "ctxsw.pipe", spread(100))
    await seed.result(await seed.run(b), b, "ctxsw.pipe", spread(150))
    r = await http.post("/api/v1/shares", json={"view": {"machines": ["a", "b"]}})
    assert r.status_code == 201, r.text
    slug = r.json()["slug"]
    assert r.json()["url"] == f"https://bench.example/s/{slug}"
    assert server.sign_in_url.startswith("https://bench.example/?login=")
    shared = await anon.get(f"/api/v1/shares/{slug}")
    assert shared.status_code == 200 and shared.json()["view"]["machines"] == ["a", "b"]
    assert (await anon.get(f"/s/{slug}")).status_code == 200
    assert (await anon.get("/api/v1/health", headers={"host": "bench.example"})).status_code == 200
    assert (await anon.post("/api/v1/shares", json={"view": {}})).status_code == 401


@pytest.mark.parametrize("settings_overrides", [{"http_host": "0.0.0.0"}])
async def test_unauthenticated_run_on_every_interface_is_refused(
    server: CtxbenchServer, anon: httpx.AsyncClient
) -> None:
    r = await anon.post("/api/v1/runs", json={"machine_id": "m", "items": [{"kernel": "k"}]})
    assert r.status_code == 401
    async with server.sessionmaker() as s:
        assert await s.scalar(select(func.count()).select_from(Run)) == 0


@pytest.mark.parametrize("settings_overrides", [{"log_level": "debug"}])
async def test_tokens_never_logged(
    server: CtxbenchServer, anon: httpx.AsyncClient, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = (await http.post("/api/v1/tokens", json={"name": "ci"})).json()["token"]
    await anon.get("/api/v1/runs", headers={"authorization": f"Bearer {secret}"})
    await anon.get("/api/v1/runs", headers={"authorization": "Bearer wrong-secret-0123456789"})
    cookie = cookie_of(await anon.post("/api/v1/session", json={"token": secret}))
    await anon.get("/api/v1/runs", headers={"cookie": f"ctxbench_session={cookie}"})
    code = server.sign_in_url.rsplit("=", 1)[1]
    await anon.get(f"/?login={code}")
    await anon.get(f"/?login={code}")
    # The server's records (the test's own httpx client logs the URLs it requests).
    server_log = "\n".join(
        r.getMessage() for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))
    )
    assert "uvicorn.access" in {r.name for r in caplog.records}  # the access log did run
    for s in (ADMIN_TOKEN, secret, "wrong-secret-0123456789", cookie, code):
        assert s not in server_log
