"""A private root per simulated host (mount namespace, overlays over /etc, /opt and /var whose upper
dirs are the test's temp dir) and the real server serving build/dist."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bundles.conftest import DIST
from tests.e2e.stack import Process, Server, base_env
from tests.faults.netns import Host, Hosts


def overlays(*dirs: str) -> str:
    """Shell to run inside `unshare -m`: an overlay over each /<dir> whose upper dir is $R/<dir>-up."""
    return f"""set -e
for d in {" ".join(dirs)}; do
  mkdir -p "$R/$d-up" "$R/$d-work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$R/$d-up,workdir=$R/$d-work" "/$d"
done
"""


HOST_DIRS = ("etc", "opt", "var")
MOUNTS = overlays(*HOST_DIRS)
# Shell for a host's script, after its PATH is set: no sudo on this host (a minimal cloud image, a
# container, where the operator is root); a sudo this machine has is hidden under /dev/null.
NO_SUDO = """IFS=:
for d in $PATH; do if [ -e "$d/sudo" ]; then mount --bind /dev/null "$d/sudo"; fi; done
unset IFS
if command -v sudo >/dev/null; then echo "this host has a sudo"; exit 1; fi
"""


def in_private_root(
    root: Path, script: str, name: str, wrap: list[str] | None = None, dirs: tuple[str, ...] = HOST_DIRS
) -> Process:
    """`script` as root in its own mount namespace, overlays over `dirs` (and, with `wrap` =
    `ip netns exec NS`, its network)."""
    argv = [*(wrap or []), "unshare", "-m", "--propagation", "private", "sh", "-c", overlays(*dirs) + script]
    return Process(name, argv, base_env(R=str(root)), root)


def start_server(tmp_path: Path, **settings: str) -> Server:
    if not (DIST / "install-agent.sh").is_file():
        pytest.fail(f"{DIST}/install-agent.sh missing (run 'make dist')")
    data = tmp_path / "data"
    data.mkdir()
    return Server(data, dist_dir=str(DIST), **settings)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = start_server(tmp_path)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def veth_host() -> Iterator[Host]:
    """A simulated host: a network namespace whose only link is a veth to 10.232.<k>.1 (tests/faults
    uses 10.231; names here start with cxd-)."""
    hosts = Hosts(1, f"i{os.getpid() % 100000}", prefix="cxd", link="cd", net=232)
    try:
        yield hosts.hosts[0]
    finally:
        hosts.close()


@pytest.fixture
def server_on_veth(tmp_path: Path, veth_host: Host) -> Iterator[Server]:
    """The real server listening (HTTP and gRPC) only on the host side of veth_host's link."""
    srv = start_server(tmp_path, grpc_host=veth_host.host_addr, http_host=veth_host.host_addr)
    try:
        yield srv
    finally:
        srv.stop()


def host_online(server: Server) -> dict | None:
    return next((m for m in server.http.get("/machines").json() if m["online"]), None)
