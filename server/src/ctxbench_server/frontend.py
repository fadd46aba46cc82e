"""Serves the built explorer at / with single-page-app fallback to index.html.

Files under assets/ carry a content hash in their names (Vite), so a browser keeps them for a year
without asking again; everything else (index.html, which names the current assets) is revalidated
with its ETag on every use. The build writes `<file>.br` and `<file>.gz` beside each text file
(frontend/vite.config.ts): they are sent as they are to a client that accepts that encoding.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

NOT_BUILT = """<!doctype html>
<html><head><meta charset="utf-8"><title>ctxbench</title></head>
<body>
<h1>ctxbench</h1>
<p>The explorer is not built: run <code>make frontend</code> (or <code>make run</code>) and reload.</p>
<p>The API is up: <a href="/docs">/docs</a>, <a href="/api/v1/health">/api/v1/health</a>.</p>
</body></html>
"""

RESERVED = ("api/", "docs", "redoc", "openapi.json")
HASHED_DIR = "assets/"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
# Precompressed siblings the build writes, in order of preference.
ENCODINGS = (("br", ".br"), ("gzip", ".gz"))


def accepted_encodings(header: str) -> set[str]:
    """The content codings an Accept-Encoding header allows (q > 0); `*` stands for any not named."""
    allowed: set[str] = set()
    refused: set[str] = set()
    star = False
    for item in header.split(","):
        coding, _, params = item.strip().partition(";")
        coding = coding.strip().lower()
        if not coding:
            continue
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if coding == "*":
            star = q > 0
        elif q > 0:
            allowed.add(coding)
        else:
            refused.add(coding)
    if star:
        allowed |= {name for name, _ in ENCODINGS} - refused
    return allowed


def _not_modified(request: Request, etag: str) -> bool:
    given = request.headers.get("if-none-match")
    if not given:
        return False
    tags = {t.strip().removeprefix("W/") for t in given.split(",")}
    return "*" in tags or etag.removeprefix("W/") in tags


def file_response(request: Request | None, path: Path, cache_control: str) -> Response:
    """`path` as the client asked for it: a precompressed sibling when it accepts one, `304` when its
    If-None-Match names what it would get. Each encoding is its own file, so its own ETag."""
    headers = {"Cache-Control": cache_control}
    kind, packed = mimetypes.guess_type(path.name)
    if path.suffix == ".map":
        kind = "application/json"  # source maps; unknown to mimetypes
    # A precompressed file asked for by its own name is bytes, not the text it holds.
    media_type = kind if kind and not packed else "application/octet-stream"
    served = path
    variants = [(coding, path.with_name(path.name + suffix)) for coding, suffix in ENCODINGS]
    variants = [(coding, p) for coding, p in variants if p.is_file()]
    if variants:
        headers["Vary"] = "Accept-Encoding"
        accepted = accepted_encodings(request.headers.get("accept-encoding", "")) if request else set()
        for coding, p in variants:
            if coding in accepted:
                served = p
                headers["Content-Encoding"] = coding
                break
    response = FileResponse(served, headers=headers, media_type=media_type, stat_result=served.stat())
    if request is not None and _not_modified(request, response.headers["etag"]):
        keep = ("etag", "cache-control", "vary")
        return Response(status_code=304, headers={k: v for k, v in response.headers.items() if k in keep})
    return response


def index_response(frontend_dir: Path, request: Request | None = None) -> Response:
    """The explorer's shell (it holds no data: the API answers 401 until the browser signs in)."""
    index = frontend_dir.resolve() / "index.html"
    if not index.is_file():
        return HTMLResponse(NOT_BUILT)
    return file_response(request, index, REVALIDATE)


def install(app: FastAPI, frontend_dir: Path) -> None:
    root = frontend_dir.resolve()

    @app.api_route(
        "/api/{path:path}",
        methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
        include_in_schema=False,
    )
    async def api_not_found(path: str) -> None:
        raise HTTPException(status_code=404, detail="Not Found")

    @app.get("/{path:path}", include_in_schema=False, response_model=None)
    async def spa(path: str, request: Request) -> Response:
        if path == "api" or path.startswith(RESERVED):
            raise HTTPException(status_code=404, detail="Not Found")
        if not (root / "index.html").is_file():
            return HTMLResponse(NOT_BUILT)
        if path:
            candidate = (root / path).resolve()
            if candidate.is_relative_to(root) and candidate.is_file():
                hashed = candidate.is_relative_to(root / HASHED_DIR)
                return file_response(request, candidate, IMMUTABLE if hashed else REVALIDATE)
            if "." in path.rsplit("/", 1)[-1] and path.startswith(HASHED_DIR):
                raise HTTPException(status_code=404, detail="Not Found")  # a missing asset is not a page
        return index_response(root, request)
