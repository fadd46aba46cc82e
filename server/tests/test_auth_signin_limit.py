"""Sign-in attempts (issue 26, item 3): a wrong login code or token is refused without a database write,
and failed sign-ins are limited per client address (429 with Retry-After, refused before any lookup)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from ctxbench_server.auth.limiter import MAX_CLIENTS, SignInLimiter, TooManySignIns
from ctxbench_server.main import CtxbenchServer

from .conftest import ADMIN_TOKEN

WRITES = ("insert", "update", "delete")
WRONG_CODE = "A" * 43  # a login code's shape, nobody's code


@contextlib.contextmanager
def statements(server: CtxbenchServer) -> Iterator[list[str]]:
    """The SQL the server's REST engine sends while the block runs."""
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    event.listen(server.engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(server.engine.sync_engine, "before_cursor_execute", record)


def writes(seen: list[str]) -> list[str]:
    return [s for s in seen if s.lstrip().split(None, 1)[0].lower() in WRITES]


async def test_wrong_login_codes_and_tokens_cost_no_write(
    server: CtxbenchServer, anon: httpx.AsyncClient
) -> None:
    with statements(server) as seen:
        r = await anon.post("/api/v1/session", json={"login_code": WRONG_CODE})
        assert (r.status_code, r.json()) == (401, {"detail": "unknown login code"})
        r = await anon.get(f"/?login={WRONG_CODE}")
        assert (r.status_code, r.headers["location"]) == (303, "/signin?error=unknown%20login%20code")
        r = await anon.post("/api/v1/session", json={"token": "wrong-wrong-wrong-wrong"})
        assert (r.status_code, r.json()) == (401, {"detail": "unknown token"})
    assert seen and writes(seen) == [], seen
    with statements(server) as seen:  # not even a read for what cannot be a code
        r = await anon.post("/api/v1/session", json={"login_code": "made-up"})
        assert (r.status_code, r.json()) == (401, {"detail": "unknown login code"})
    assert seen == []
    # A used code is refused without a write too; the good one costs one.
    code = server.sign_in_url.rsplit("=", 1)[1]
    with statements(server) as seen:
        assert (await anon.post("/api/v1/session", json={"login_code": code})).status_code == 200
    assert any(s.lstrip().lower().startswith("update login_codes") for s in writes(seen)), seen
    anon.cookies.clear()
    with statements(server) as seen:
        r = await anon.post("/api/v1/session", json={"login_code": code})
        assert (r.status_code, r.json()) == (401, {"detail": "login code already used"})
    assert writes(seen) == [], seen


@pytest.mark.parametrize("settings_overrides", [{"sign_in_burst": 3, "sign_in_refill_s": 60}])
async def test_failed_sign_ins_are_limited_per_address(
    server: CtxbenchServer, anon: httpx.AsyncClient
) -> None:
    # Right ones do not count.
    for _ in range(5):
        assert (await anon.post("/api/v1/session", json={"token": ADMIN_TOKEN})).status_code == 200
        anon.cookies.clear()
    for _ in range(3):
        r = await anon.post("/api/v1/session", json={"token": "wrong-wrong-wrong-wrong"})
        assert r.status_code == 401
    with statements(server) as seen:
        r = await anon.post("/api/v1/session", json={"login_code": WRONG_CODE})
        assert r.status_code == 429, r.text
        assert 1 <= int(r.headers["retry-after"]) <= 60
        assert "CTXBENCH_SIGN_IN_BURST" in r.json()["detail"]
        # Refused unread, the right token too: a limited client learns nothing of its guesses.
        r = await anon.post("/api/v1/session", json={"token": ADMIN_TOKEN})
        assert r.status_code == 429 and "set-cookie" not in r.headers
        r = await anon.get(f"/?login={WRONG_CODE}")
        assert r.status_code == 303 and r.headers["location"].startswith("/signin?error=too%20many%20failed")
    assert seen == []
    # Bearer requests are not sign-ins; another address has a bucket of its own (uvicorn takes
    # X-Forwarded-For from a proxy on 127.0.0.1, as the tests' client is).
    assert (
        await anon.get("/api/v1/runs", headers={"authorization": f"Bearer {ADMIN_TOKEN}"})
    ).status_code == 200
    other = {"x-forwarded-for": "203.0.113.9"}
    r = await anon.post("/api/v1/session", json={"token": "wrong-wrong-wrong-wrong"}, headers=other)
    assert r.status_code == 401
    assert (await anon.post("/api/v1/session", json={"token": ADMIN_TOKEN}, headers=other)).status_code == 200


def test_bucket_refills_forgets_and_stays_bounded() -> None:
    now = [0.0]
    limiter = SignInLimiter(burst=2, refill_s=10, max_clients=3, clock=lambda: now[0])
    limiter.take("a")
    limiter.take("a")
    with pytest.raises(TooManySignIns) as refused:
        limiter.take("a")
    assert refused.value.status_code == 429 and refused.value.headers == {"Retry-After": "10"}
    now[0] = 4.0
    with pytest.raises(TooManySignIns) as refused:
        limiter.take("a")
    assert refused.value.headers == {"Retry-After": "6"}
    now[0] = 10.0
    limiter.take("a")  # one back after refill_s
    # A success gives its attempt back; a full bucket is not kept.
    with limiter.attempt("b"):
        pass
    assert "b" not in limiter.buckets
    for client in ("c", "d", "e", "f"):
        limiter.take(client)
    assert len(limiter.buckets) == 3 and "a" not in limiter.buckets  # the least recently seen went
    assert MAX_CLIENTS >= 1000


def test_an_ipv6_client_is_one_slash_64() -> None:
    from starlette.requests import Request

    from ctxbench_server.auth.limiter import client_address

    def addr(host: str) -> str:
        return client_address(Request({"type": "http", "client": (host, 1), "headers": []}))

    assert addr("2001:db8:1:2:aaaa::1") == addr("2001:db8:1:2:bbbb::2") == "2001:db8:1:2::/64"
    assert addr("2001:db8:1:3::1") != addr("2001:db8:1:2::1")
    assert addr("::ffff:192.0.2.7") == addr("192.0.2.7") == "192.0.2.7"
