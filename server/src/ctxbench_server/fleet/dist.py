"""The agent install, open to anyone (it holds no secret): GET /install-agent.sh and GET /dist/<file>.

Both come from the dist dir (CTXBENCH_DIST_DIR, default ./build/dist), which `make dist` fills with the
bundles, SHA256SUMS and install-agent.sh. The installer is served with this server's public URL and its
SHA256SUMS written in: a join token's install command checks the installer's sha256 (installer_sha256)
before running it, and the installer then checks the bundle against the sums it carries, so nothing
fetched over plain HTTP runs unchecked.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, Response

from ctxbench_server.config import Settings
from ctxbench_server.fleet.installer import INSTALLER, installer_text
from ctxbench_server.fleet.router import public_url

router = APIRouter(tags=["fleet"])
log = logging.getLogger(__name__)

# A file name directly in the dist dir: no separators, no leading dot.
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
# No path in an answer anyone may read: the server's log names the dist dir.
_NOT_BUILT = "not built: run 'make dist' on the server"


def _dist_dir(request: Request) -> Path:
    settings: Settings = request.app.state.settings
    return settings.dist_dir


@router.get(
    "/install-agent.sh",
    response_class=Response,
    responses={200: {"content": {"text/x-shellscript": {}}}, 404: {"description": "not built"}},
)
async def install_script(request: Request) -> Response:
    """The agent installer (POSIX sh), with this server's public URL as its download base and the
    bundles' sha256s written in."""
    script = installer_text(_dist_dir(request), public_url(request))
    if script is None:
        log.warning("GET /install-agent.sh: no %s in %s (run 'make dist')", INSTALLER, _dist_dir(request))
        raise HTTPException(status_code=404, detail=_NOT_BUILT)
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
