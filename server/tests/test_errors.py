"""Anything unexpected is logged and answered as {"detail": "internal error"}, never a stack trace."""

import httpx
import pytest


async def test_unexpected_error_is_a_bare_500(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxbench_server.kernels import service

    async def boom(*_: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(service, "list_kernels", boom)
    r = await http.get("/api/v1/kernels")
    assert r.status_code == 500
    assert r.json() == {"detail": "internal error"}
    assert "secret" not in r.text
