"""install-agent.sh as the server serves it: its public URL and SHA256SUMS written in, and its sha256,
which a join token's install command checks before running it (docs/architecture.md, "Distribution")."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

INSTALLER = "install-agent.sh"
URL_PLACEHOLDER = "@CTXBENCH_PUBLIC_URL@"
SUMS_PLACEHOLDER = "@CTXBENCH_SHA256SUMS@"
# What SHA256SUMS may hold to be written into the installer (inside single quotes): sha256sum's lines.
_SUMS = re.compile(r"(?:[0-9a-f]{64}  [A-Za-z0-9][A-Za-z0-9._+-]*\n)+")


def installer_text(dist_dir: Path, url: str) -> str | None:
    """install-agent.sh as served for `url`, or None when the dist dir has none. SHA256SUMS is written
    in only when it has sha256sum's shape (else the installer downloads it, and says so)."""
    path = dist_dir / INSTALLER
    if not path.is_file():
        return None
    script = path.read_text().replace(URL_PLACEHOLDER, url, 1)
    sums_path = dist_dir / "SHA256SUMS"
    sums = sums_path.read_text() if sums_path.is_file() else ""
    if _SUMS.fullmatch(sums):
        script = script.replace(SUMS_PLACEHOLDER, sums.rstrip("\n"), 1)
    return script


def installer_sha256(dist_dir: Path, url: str) -> str | None:
    """The sha256 (hex) of what GET /install-agent.sh serves for `url`: the install command pins it."""
    text = installer_text(dist_dir, url)
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()
