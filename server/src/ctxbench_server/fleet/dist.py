"""The agent install, open to anyone (it holds no secret): GET /install-agent.sh and GET /dist/<file>.

Both come from the dist dir (CTXBENCH_DIST_DIR, default ./build/dist), which `make dist` fills with the
bundles, SHA256SUMS and install-agent.sh. The installer is served with this server's public URL in it,
so `curl -fsSL <url>/install-agent.sh | sudo sh -s -- ...` downloads its bundle from the same server.
"""

from __future__ import annotations

import re
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, Response

from ctxbench_server.config import Settings
from ctxbench_server.fleet.router import public_url

router = APIRouter(tags=["fleet"])

INSTALLER = "install-agent.sh"
URL_PLACEHOLDER = "@CTXBENCH_PUBLIC_URL@"
# A file name directly in the dist dir: no separators, no leading dot.
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_NOT_BUILT = "not built: run 'make dist' on the server (CTXBENCH_DIST_DIR={})"


def _dist_dir(request: Request) -> Path:
    settings: Settings = request.app.state.settings
    return settings.dist_dir


@router.get(
    "/install-agent.sh",
    response_class=Response,
    responses={200: {"content": {"text/x-shellscript": {}}}, 404: {"description": "not built"}},
)
async def install_script(request: Request) -> Response:
    """The agent installer (POSIX sh), with this server's public URL as its download base."""
    path = _dist_dir(request) / INSTALLER
    if not path.is_file():
        raise HTTPException(status_code=404, detail=_NOT_BUILT.format(_dist_dir(request)))
    script = path.read_text().replace(URL_PLACEHOLDER, public_url(request), 1)
    return Response(script, media_type="text/x-shellscript", headers={"Cache-Control": "no-cache"})


@router.get("/dist/{name}", response_class=FileResponse, responses={404: {"description": "no such file"}})
async def dist_file(name: str, request: Request) -> FileResponse:
    """A file of the dist dir: a bundle, SHA256SUMS. Nothing outside it (no paths, no dot files)."""
    root = _dist_dir(request)
    if not _FILE_NAME.match(name):
        raise HTTPException(status_code=404, detail="Not Found")
    path = root / name
    # A link that leaves the dist dir is not served either.
    if not path.is_file() or path.resolve().parent != root.resolve():
        raise HTTPException(status_code=404, detail="Not Found")
    return FileResponse(path, headers={"Cache-Control": "no-cache"})
