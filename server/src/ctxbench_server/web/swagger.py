"""/docs: Swagger UI for the OpenAPI document, served from this server (the fastapi-offline package ships
its files; only they are used), never from a CDN: the page runs on the origin that holds the session
cookie, so every script it runs is one this server sends. No inline script or style either (its start-up
is /docs/init.js), so the explorer's strict Content-Security-Policy (auth/middleware.py) holds on it too.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, HTMLResponse, Response

DOCS = "/docs"
# The package's files the page uses; nothing else of it.
ASSETS = frozenset({"swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"})
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ctxbench API</title>
<link rel="icon" type="image/png" href="/docs/favicon.png">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head><body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body></html>
"""
# validatorUrl null: the default sends the document to a public validator and shows its badge.
INIT = """window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  layout: 'BaseLayout',
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
});
"""
CACHE = {"Cache-Control": "no-cache"}


def install(app: FastAPI) -> None:
    """GET /docs, /docs/init.js and the bundle's files under /docs/ (open, like /openapi.json)."""
    root = Path(str(resources.files("fastapi_offline") / "static"))

    @app.get(DOCS, include_in_schema=False)
    async def docs_page() -> HTMLResponse:
        return HTMLResponse(PAGE, headers=CACHE)

    @app.get(f"{DOCS}/init.js", include_in_schema=False)
    async def docs_init() -> Response:
        return Response(INIT, media_type="text/javascript", headers=CACHE)

    @app.get(DOCS + "/{name}", include_in_schema=False)
    async def docs_asset(name: str) -> FileResponse:
        if name not in ASSETS:
            raise HTTPException(status_code=404, detail="Not Found")
        return FileResponse(root / name, headers=CACHE)
