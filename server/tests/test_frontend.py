"""The explorer's files at /: a page saying it is not built, or the build with SPA fallback."""

import gzip
from pathlib import Path

import httpx
import pytest

from ctxbench_server.config import Settings
from ctxbench_server.frontend import accepted_encodings


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


# ---------------------------------------------------------------- caching and compression (issue 27)

SCRIPT = "export const answer = 42;\n" * 200


@pytest.fixture
def packed_build(built_frontend: Path) -> Path:
    """A build as vite.config.ts writes it: a hashed script with its .gz and .br beside it."""
    script = built_frontend / "assets" / "index-Ab12Cd34.js"
    script.write_text(SCRIPT)
    script.with_name(script.name + ".gz").write_bytes(gzip.compress(SCRIPT.encode()))
    # Brotli is not a server dependency: any bytes stand for it, the server sends them untouched.
    script.with_name(script.name + ".br").write_bytes(b"brotli bytes")
    return built_frontend


async def get_raw(http: httpx.AsyncClient, path: str, **headers: str) -> tuple[httpx.Response, bytes]:
    """The response and its body as sent (httpx would otherwise decode it)."""
    async with http.stream("GET", path, headers=headers) as r:
        return r, b"".join([chunk async for chunk in r.aiter_raw()])


async def test_hashed_assets_immutable_the_rest_revalidated(
    packed_build: Path, http: httpx.AsyncClient
) -> None:
    r = await http.get("/assets/index-Ab12Cd34.js")
    assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert r.headers["content-type"].startswith("text/javascript")
    for path in ("/", "/index.html", "/compare?machines=a,b"):
        r = await http.get(path)
        assert r.status_code == 200 and "explorer" in r.text, path
        assert r.headers["cache-control"] == "no-cache", path
        assert r.headers["etag"], path


async def test_etag_revalidation(packed_build: Path, http: httpx.AsyncClient) -> None:
    for path in ("/index.html", "/compare", "/assets/index-Ab12Cd34.js"):
        first = await http.get(path)
        again = await http.get(path, headers={"if-none-match": first.headers["etag"]})
        assert again.status_code == 304 and again.content == b"", path
        assert again.headers["etag"] == first.headers["etag"]
        assert again.headers["cache-control"] == first.headers["cache-control"]
        other = await http.get(path, headers={"if-none-match": '"something-else"'})
        assert other.status_code == 200, path


async def test_compressed_when_accepted(packed_build: Path, http: httpx.AsyncClient) -> None:
    path = "/assets/index-Ab12Cd34.js"
    r, body = await get_raw(http, path, **{"accept-encoding": "gzip"})
    assert r.headers["content-encoding"] == "gzip"
    assert r.headers["vary"] == "Accept-Encoding"
    assert r.headers["content-type"].startswith("text/javascript")
    assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert int(r.headers["content-length"]) == len(body) < len(SCRIPT)
    assert gzip.decompress(body).decode() == SCRIPT
    gz_etag = r.headers["etag"]

    r, body = await get_raw(http, path, **{"accept-encoding": "gzip, deflate, br"})
    assert (r.headers["content-encoding"], body) == ("br", b"brotli bytes")
    assert r.headers["etag"] != gz_etag  # each encoding is its own representation
    r, body = await get_raw(http, path, **{"accept-encoding": "br;q=0, *"})
    assert r.headers["content-encoding"] == "gzip"


async def test_identity_when_not_accepted(packed_build: Path, http: httpx.AsyncClient) -> None:
    path = "/assets/index-Ab12Cd34.js"
    for accept in ("identity", "gzip;q=0", "deflate", "br;q=0, gzip;q=0"):
        r, body = await get_raw(http, path, **{"accept-encoding": accept})
        assert "content-encoding" not in r.headers, accept
        assert r.headers["vary"] == "Accept-Encoding", accept
        assert body.decode() == SCRIPT, accept
    # A file the build did not compress says nothing about encodings.
    r, body = await get_raw(http, "/assets/app.js", **{"accept-encoding": "gzip"})
    assert "content-encoding" not in r.headers and "vary" not in r.headers
    assert body == b"console.log('hi')"
    # The compressed file under its own name is bytes, never served as script.
    r, body = await get_raw(http, path + ".gz", **{"accept-encoding": "identity"})
    assert r.headers["content-type"] == "application/octet-stream"
    assert "content-encoding" not in r.headers


def test_accepted_encodings() -> None:
    assert accepted_encodings("") == set()
    assert accepted_encodings("gzip, deflate, br, zstd") == {"gzip", "deflate", "br", "zstd"}
    assert accepted_encodings("GZIP;q=0.5, br;q=0") == {"gzip"}
    assert accepted_encodings("*") == {"br", "gzip"}
    assert accepted_encodings("*;q=0.1, gzip;q=0") == {"br"}
    assert accepted_encodings("gzip;q=bogus, br") == {"br"}
