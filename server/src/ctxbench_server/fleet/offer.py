"""Which agent version this server offers each architecture, and which machines run an older one
(GET /machines: agent_offered_version, agent_outdated, upgrade_command; docs/architecture.md).

What is offered is what install-agent.sh installs by default: the last bundle of the architecture in
the dist dir's SHA256SUMS (`make dist` lists them oldest first, and keeps the newest few). An agent is
outdated when it is known to be older than the offered one: an earlier release, or an earlier bundle
of the same release still listed. A build of the same release that SHA256SUMS does not list is not
called outdated: it may be older than the kept bundles, or newer (`make run`'s local agent, built after
the last `make dist`), and the versions alone cannot tell; offering it the "upgrade" could install an
older agent over a newer one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ctxbench_server.fleet.installer import INSTALLER, installer_sha256
from ctxbench_server.machines.schemas import MachineOut

SUMS = "SHA256SUMS"
_BUNDLE = re.compile(r"[0-9a-f]{64}  ctxbench-agent-(?P<version>.+)-linux-(?P<arch>[a-z0-9_]+)\.tar\.gz")
_RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True)
class AgentOffer:
    """`newest`: architecture -> the version offered; `listed`: architecture -> every version listed,
    oldest first; `upgrade_command`: None without an installer."""

    newest: dict[str, str] = field(default_factory=dict)
    upgrade_command: str | None = None
    listed: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def outdated(self, version: str, arch: str) -> bool:
        offered = self.newest.get(arch)
        if offered is None or version == offered:
            return False
        have, want = _release(version), _release(offered)
        if have is not None and want is not None and have != want:
            return have < want
        return version in self.listed.get(arch, ())  # the same release: only a bundle listed before it

    def apply(self, machines: Iterable[MachineOut]) -> None:
        """Fills each machine's agent_offered_version, agent_outdated and upgrade_command."""
        for m in machines:
            arch = str((m.facts or {}).get("arch") or "")
            m.agent_offered_version = self.newest.get(arch)
            m.agent_outdated = self.outdated(m.agent_version, arch)
            m.upgrade_command = self.upgrade_command if m.agent_outdated else None


def _release(version: str) -> tuple[int, ...] | None:
    """0.1.0 of "0.1.0+1a2b3c4"; None when the version does not start with one ("dev")."""
    m = _RELEASE.match(version)
    return tuple(int(g) for g in m.groups()) if m else None


def upgrade_command(public_url: str, sha256: str) -> str:
    """One line run on an enrolled host: the installer, checked against the sha256 of what this server
    serves, upgrades in place (it keeps agent.env and the state dir: no token, no other flag). No
    sudo: the installer runs itself again through sudo when not root, so root needs none."""
    return (
        f'f=$(mktemp) && curl -fsSL {public_url}/install-agent.sh -o "$f" '
        f'&& echo "{sha256}  $f" | sha256sum -c - && sh "$f"'
    )


def read_offer(dist_dir: Path, public_url: str) -> AgentOffer:
    """The offer of the dist dir now (read again only when SHA256SUMS or the installer changes)."""
    return _read(dist_dir, public_url, _stamp(dist_dir / SUMS), _stamp(dist_dir / INSTALLER))


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


@lru_cache(maxsize=16)
def _read(
    dist_dir: Path, public_url: str, sums: tuple[int, int] | None, installer: tuple[int, int] | None
) -> AgentOffer:
    if sums is None:
        return AgentOffer()
    try:
        lines = (dist_dir / SUMS).read_text(errors="replace").splitlines()
    except OSError:
        return AgentOffer()
    newest: dict[str, str] = {}
    listed: dict[str, tuple[str, ...]] = {}
    for line in lines:  # oldest first: the last line of an architecture is its newest bundle
        if m := _BUNDLE.fullmatch(line):
            newest[m["arch"]] = m["version"]
            listed[m["arch"]] = (*listed.get(m["arch"], ()), m["version"])
    sha = installer_sha256(dist_dir, public_url) if installer is not None else None
    return AgentOffer(newest, upgrade_command(public_url, sha) if sha else None, listed)
