"""Serves the built explorer at / with single-page-app fallback to index.html."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, HTTPException
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


def index_response(frontend_dir: Path) -> Response:
    """The explorer's shell (it holds no data: the API answers 401 until the browser signs in)."""
    index = frontend_dir.resolve() / "index.html"
    if not index.is_file():
        return HTMLResponse(NOT_BUILT)
    return FileResponse(index, headers={"Cache-Control": "no-cache"})


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
    async def spa(path: str) -> Response:
        if path == "api" or path.startswith(RESERVED):
            raise HTTPException(status_code=404, detail="Not Found")
        if not (root / "index.html").is_file():
            return HTMLResponse(NOT_BUILT)
        if path:
            candidate = (root / path).resolve()
            if candidate.is_relative_to(root) and candidate.is_file():
                return FileResponse(candidate)
            if "." in path.rsplit("/", 1)[-1] and path.startswith("assets/"):
                raise HTTPException(status_code=404, detail="Not Found")  # a missing asset is not a page
        return index_response(root)
