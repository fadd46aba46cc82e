"""Access control on the built server process (issue 9): the printed sign-in link, and strangers."""

from __future__ import annotations

import re

import httpx

from tests.e2e.stack import Server


def test_printed_sign_in_link_works_once(server: Server) -> None:
    assert re.fullmatch(rf"{re.escape(server.base_url)}/\?login=[\w-]{{20,}}", server.sign_in_url)
    with httpx.Client(timeout=10) as browser:
        r = browser.get(server.sign_in_url)
        assert (r.status_code, r.headers["location"]) == (303, "/")
        assert "httponly" in r.headers["set-cookie"].lower()
        # The cookie alone now reads the API, and the explorer's shell loads.
        me = browser.get(f"{server.base_url}/api/v1/session").json()
        assert me["authenticated"] and me["scope"] == "admin"
        assert browser.get(f"{server.base_url}/api/v1/machines").status_code == 200
        assert browser.get(f"{server.base_url}/").status_code == 200
    with httpx.Client(timeout=10) as other:
        again = other.get(server.sign_in_url)
        assert again.status_code == 303 and again.headers["location"].startswith("/signin?error=")
        assert "set-cookie" not in again.headers
        assert other.get(f"{server.base_url}/api/v1/machines").status_code == 401


def test_strangers_cannot_start_runs_or_rebind(server: Server) -> None:
    body = {"machine_id": "m", "items": [{"kernel": "call.function"}]}
    r = httpx.post(f"{server.base_url}/api/v1/runs", json=body, timeout=10)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    r = httpx.post(
        f"{server.base_url}/api/v1/runs", json=body, headers={**server.auth, "host": "attacker.example"}
    )
    assert r.status_code == 400
    assert server.http.get("/runs").json() == []
    assert httpx.get(f"{server.base_url}/api/v1/health", timeout=10).status_code == 200
