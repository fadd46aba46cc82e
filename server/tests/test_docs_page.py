"""/docs (issue 26): Swagger UI served by this server, nothing from another origin, no inline script, and
the explorer's strict policy on it (a real Chromium rendered it so, every operation and Try it out, with
no policy violation)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import httpx


class _Refs(HTMLParser):
    """What a page loads: src and href of its elements, and whether it has inline script."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.inline_script = False
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.refs += [v for k in ("src", "href") if (v := found.get(k))]
        self._in_script = tag == "script"

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline_script = True

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False


async def test_docs_load_nothing_from_another_origin(anon: httpx.AsyncClient) -> None:
    r = await anon.get("/docs")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = _Refs()
    page.feed(r.text)
    assert not page.inline_script
    assert page.refs and all(ref.startswith("/") and not ref.startswith("//") for ref in page.refs), page.refs
    assert not re.search(r"https?://|//[a-z]", r.text)
    # Every file it names is served here, as what it is.
    kinds = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}
    for ref in page.refs:
        got = await anon.get(ref)
        assert got.status_code == 200 and got.content, ref
        assert got.headers["content-type"].startswith(kinds[ref[ref.rindex(".") :]]), ref
    init = (await anon.get("/docs/init.js")).text
    assert "/openapi.json" in init and "validatorUrl: null" in init  # no document sent to a validator

    # The policy: the explorer's own, scripts and styles from this origin only, nothing from any other.
    csp = r.headers["content-security-policy"]
    assert csp == (await anon.get("/")).headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["script-src"] == directives["style-src"] == "'self'"
    assert directives["default-src"] == "'self'" and directives["frame-ancestors"] == "'none'"
    assert "http" not in csp and "*" not in csp and "unsafe" not in csp


async def test_only_the_page_and_its_files_are_served(anon: httpx.AsyncClient) -> None:
    for path in ("/docs/index.html", "/docs/swagger-initializer.js", "/docs/..%2Fpyproject.toml", "/redoc"):
        r = await anon.get(path)
        assert r.status_code == 404, path
        assert "Traceback" not in r.text
    assert (await anon.get("/docs/oauth2-redirect")).status_code == 404
