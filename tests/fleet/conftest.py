"""A private root per simulated host (mount namespace, overlays over /etc, /opt and /var whose upper
dirs are the test's temp dir) and the real server serving build/dist."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dist.conftest import DIST
from tests.e2e.stack import Process, Server, base_env

# Run inside `unshare -m`: overlays over /etc, /opt and /var whose upper dirs are under $R.
MOUNTS = """set -e
for d in etc opt var; do
  mkdir -p "$R/$d-up" "$R/$d-work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$R/$d-up,workdir=$R/$d-work" "/$d"
done
"""


def in_private_root(root: Path, script: str, name: str) -> Process:
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", MOUNTS + script]
    return Process(name, argv, base_env(R=str(root)), root)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    if not (DIST / "install-agent.sh").is_file():
        pytest.fail(f"{DIST}/install-agent.sh missing (run 'make dist')")
    data = tmp_path / "data"
    data.mkdir()
    srv = Server(data, dist_dir=str(DIST))
    try:
        yield srv
    finally:
        srv.stop()


def host_online(server: Server) -> dict | None:
    return next((m for m in server.http.get("/machines").json() if m["online"]), None)
