"""The explorer's files at /: a page saying it is not built, or the build with SPA fallback."""

from pathlib import Path

import httpx
import pytest

from ctxbench_server.config import Settings


async def test_frontend_not_built(http: httpx.AsyncClient) -> None:
    r = await http.get("/")
    assert r.status_code == 200 and "make frontend" in r.text
    assert "text/html" in r.headers["content-type"]


@pytest.fixture
def built_frontend(settings: Settings) -> Path:
    d = settings.frontend_dir
    (d / "assets").mkdir(parents=True)
    (d / "index.html").write_text("<!doctype html><div id=root>explorer</div>")
    (d / "assets" / "app.js").write_text("console.log('hi')")
    return d


async def test_spa_fallback(built_frontend: Path, http: httpx.AsyncClient) -> None:
    assert "explorer" in (await http.get("/")).text
    r = await http.get("/assets/app.js")
    assert r.status_code == 200 and "console.log" in r.text
    deep = await http.get("/compare/a/b?x=1")
    assert deep.status_code == 200 and "explorer" in deep.text
    assert (await http.get("/assets/missing.js")).status_code == 404
    assert (await http.get("/api/v1/unknown")).status_code == 404
    assert (await http.get("/../../etc/passwd")).status_code in (200, 404)
    assert "root:" not in (await http.get("/%2e%2e/%2e%2e/etc/passwd")).text
