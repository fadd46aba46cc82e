"""Browser sessions for the admin (issue 26, item 2): list them without secrets, end one, sign out
everywhere (GET / DELETE /api/v1/sessions, DELETE /api/v1/sessions/{id})."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx
from sqlalchemy import update

from ctxbench_server.auth.service import digest
from ctxbench_server.main import CtxbenchServer
from ctxbench_server.models import ApiToken
from ctxbench_server.models.base import utcnow

from .conftest import ADMIN_TOKEN

FIELDS = {"id", "name", "scope", "source", "token_id", "created_at", "expires_at", "last_used_at", "current"}


def cookie_of(r: httpx.Response) -> str:
    m = re.search(r"ctxbench_session=([^;]+)", r.headers["set-cookie"])
    assert m, r.headers
    return m.group(1)


async def sign_in(anon: httpx.AsyncClient, **body: str) -> dict[str, str]:
    """The headers of a browser signed in with `body` (a token or a login code)."""
    r = await anon.post("/api/v1/session", json=body)
    assert r.status_code == 200, r.text
    anon.cookies.clear()
    return {"cookie": f"ctxbench_session={cookie_of(r)}", "origin": str(anon.base_url).rstrip("/")}


async def test_list_end_one_and_sign_out_everywhere(
    server: CtxbenchServer, anon: httpx.AsyncClient, http: httpx.AsyncClient
) -> None:
    token = (await http.post("/api/v1/tokens", json={"name": "laptop", "scope": "read"})).json()
    code = server.sign_in_url.rsplit("=", 1)[1]
    admin = await sign_in(anon, token=ADMIN_TOKEN)
    link = await sign_in(anon, login_code=code)
    reader = await sign_in(anon, token=token["token"])
    assert (await anon.get("/api/v1/runs", headers=admin)).status_code == 200  # last_used_at is kept

    r = await http.get("/api/v1/sessions")
    assert r.status_code == 200, r.text
    listed = r.json()
    assert [s["source"] for s in listed] == ["token", "login_link", "admin"]  # newest first
    for s in listed:
        assert set(s) == FIELDS and s["current"] is False  # the caller used a Bearer token
    by_source = {s["source"]: s for s in listed}
    assert by_source["token"]["token_id"] == token["id"] and by_source["token"]["scope"] == "read"
    assert by_source["token"]["name"] == "laptop" and by_source["admin"]["token_id"] is None
    assert by_source["admin"]["last_used_at"] is not None and by_source["login_link"]["last_used_at"] is None
    for headers in (admin, link, reader):  # no cookie and no cookie hash in the answer
        secret = headers["cookie"].split("=", 1)[1]
        assert secret not in r.text and digest(secret) not in r.text
    assert ADMIN_TOKEN not in r.text and token["token"] not in r.text

    mine = (await anon.get("/api/v1/sessions", headers=admin)).json()
    assert [s["source"] for s in mine if s["current"]] == ["admin"]

    # Only an admin sees or ends sessions.
    assert (await anon.get("/api/v1/sessions", headers=reader)).status_code == 403
    assert (await anon.delete("/api/v1/sessions", headers=reader)).status_code == 403
    assert (await anon.get("/api/v1/sessions")).status_code == 401

    # One: the reader's browser is out at once.
    r = await http.delete(f"/api/v1/sessions/{by_source['token']['id']}")
    assert r.status_code == 200 and r.json()["id"] == by_source["token"]["id"]
    r = await anon.get("/api/v1/runs", headers=reader)
    assert (r.status_code, r.json()["detail"]) == (401, "unknown session: sign in again")
    r = await http.delete(f"/api/v1/sessions/{by_source['token']['id']}")
    assert (r.status_code, r.json()) == (404, {"detail": "unknown session id"})

    # Everywhere else: the caller's own session stays.
    r = await anon.delete("/api/v1/sessions", headers=admin, params={"keep_current": "true"})
    assert (r.status_code, r.json()) == (200, {"ended": 1})
    assert "set-cookie" not in r.headers
    assert (await anon.get("/api/v1/runs", headers=link)).status_code == 401
    assert (await anon.get("/api/v1/runs", headers=admin)).status_code == 200

    # Everywhere: the caller's own too, and its cookie is cleared.
    r = await anon.delete("/api/v1/sessions", headers=admin)
    assert (r.status_code, r.json()) == (200, {"ended": 1})
    assert 'ctxbench_session=""' in r.headers["set-cookie"]
    assert (await anon.get("/api/v1/runs", headers=admin)).status_code == 401
    assert (await http.get("/api/v1/sessions")).json() == []


async def test_ending_the_callers_own_session_clears_its_cookie(anon: httpx.AsyncClient) -> None:
    admin = await sign_in(anon, token=ADMIN_TOKEN)
    (mine,) = (await anon.get("/api/v1/sessions", headers=admin)).json()
    r = await anon.delete(f"/api/v1/sessions/{mine['id']}", headers=admin)
    assert r.status_code == 200 and r.json()["current"] is True
    assert 'ctxbench_session=""' in r.headers["set-cookie"]
    assert (await anon.get("/api/v1/session", headers=admin)).json()["authenticated"] is False


async def test_sessions_that_cannot_get_in_are_not_listed(
    server: CtxbenchServer, anon: httpx.AsyncClient, http: httpx.AsyncClient
) -> None:
    token = (await http.post("/api/v1/tokens", json={"name": "ci", "ttl_s": 3600})).json()
    await sign_in(anon, token=token["token"])
    await sign_in(anon, token=ADMIN_TOKEN)
    assert len((await http.get("/api/v1/sessions")).json()) == 2
    async with server.sessionmaker() as s:
        past = utcnow() - timedelta(seconds=1)
        await s.execute(update(ApiToken).where(ApiToken.id == token["id"]).values(expires_at=past))
        await s.commit()
    assert [s["source"] for s in (await http.get("/api/v1/sessions")).json()] == ["admin"]
