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


async def test_no_file_outside_the_build_is_served(built_frontend: Path, http: httpx.AsyncClient) -> None:
    # A file beside the build directory: a path that climbs out of it must get the explorer's shell.
    (built_frontend.parent / "secret.txt").write_text("top secret")
    for path in ("/%2e%2e/secret.txt", "/..%2fsecret.txt", "/x/%2e%2e/%2e%2e/secret.txt"):
        r = await http.get(path)
        assert r.status_code == 200 and "explorer" in r.text, (path, r.status_code, r.text[:80])
        assert "top secret" not in r.text, path
    # Under assets/, a file name that is not there is a missing asset, not a page.
    r = await http.get("/assets/%2e%2e/%2e%2e/secret.txt")
    assert r.status_code == 404 and "top secret" not in r.text
    # The client removes plain dot segments itself: the request is for /secret.txt, an SPA route.
    r = await http.get("/../secret.txt")
    assert r.status_code == 200 and "explorer" in r.text
