"""Simulated hosts: one network namespace per agent, joined to the host by a veth pair.

Host side 10.<net>.<k>.1/30, namespace side 10.<net>.<k>.2/30, net 231 unless CTXBENCH_FAULTS_NET says
another (`make test` runs the faults suite on SQLite and on PostgreSQL side by side, on 231 and 234). Only
these addresses ever carry traffic. (tests/fleet uses its own: names prefixed cxd-, 10.232.<k>.0/30; its
SSH hosts cxs-, 10.233.<k>.0/30.)
Requires root (CI and the developers' machines run as root).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@dataclass
class Host:
    ns: str
    host_if: str
    host_addr: str
    ns_addr: str

    @property
    def wrap(self) -> list[str]:
        return ["ip", "netns", "exec", self.ns]

    def cut(self) -> None:
        _ip("link", "set", self.host_if, "down")

    def restore(self) -> None:
        _ip("link", "set", self.host_if, "up")


def available() -> str | None:
    """None when namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    probe = f"cxf-probe-{os.getpid()}"
    try:
        _ip("netns", "add", probe)
    except (OSError, subprocess.CalledProcessError) as e:
        return f"cannot create a network namespace: {e}"
    _ip("netns", "del", probe)
    return None


def faults_net() -> int:
    """The faults suite's subnet: 10.<net>.0.0/16, one per suite running at the same time."""
    raw = os.environ.get("CTXBENCH_FAULTS_NET", "231")
    if not raw.isdigit() or not 1 <= int(raw) <= 254 or int(raw) in (232, 233):
        raise ValueError(f"CTXBENCH_FAULTS_NET: {raw!r} is not a free 10.<net> subnet (1-254, not 232, 233)")
    return int(raw)


def clear_stale(prefix: str, net: int) -> None:
    """A run killed before close() (kill -9, a restart of the machine) leaves its namespaces and links
    behind, and their host-side addresses shadow the next run's: its agents never reach the server. Two
    runs on one prefix cannot share these addresses anyway, so whatever holds them is removed, and so are
    namespaces of the prefix that no process runs in."""
    shown = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True, check=False)
    for line in shown.stdout.splitlines():
        parts = line.split()
        if len(parts) > 3 and parts[3].startswith(f"10.{net}.") and parts[3].endswith(".1/30"):
            subprocess.run(["ip", "link", "del", parts[1].split("@")[0]], capture_output=True, check=False)
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    for line in listed.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        if not name.startswith(f"{prefix}-"):
            continue
        pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True, check=False)
        if not pids.stdout.strip():
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)


class Hosts:
    """Creates `count` hosts; `close()` removes every namespace and link it made."""

    def __init__(
        self, count: int, tag: str, *, prefix: str = "cxf", link: str = "cb", net: int = 231
    ) -> None:
        self.hosts: list[Host] = []
        clear_stale(prefix, net)
        try:
            for k in range(1, count + 1):
                h = Host(
                    ns=f"{prefix}-{tag}-{k}",
                    host_if=f"{link}{tag[:6]}{k}h",
                    host_addr=f"10.{net}.{k}.1",
                    ns_addr=f"10.{net}.{k}.2",
                )
                peer = h.host_if[:-1] + "n"
                _ip("netns", "add", h.ns)
                self.hosts.append(h)
                _ip("link", "add", h.host_if, "type", "veth", "peer", "name", peer)
                _ip("link", "set", peer, "netns", h.ns)
                _ip("addr", "add", f"{h.host_addr}/30", "dev", h.host_if)
                _ip("link", "set", h.host_if, "up")
                _ip("netns", "exec", h.ns, "ip", "addr", "add", f"{h.ns_addr}/30", "dev", peer)
                _ip("netns", "exec", h.ns, "ip", "link", "set", peer, "up")
                _ip("netns", "exec", h.ns, "ip", "link", "set", "lo", "up")
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for h in self.hosts:
            subprocess.run(["ip", "link", "del", h.host_if], capture_output=True, check=False)
            subprocess.run(["ip", "netns", "del", h.ns], capture_output=True, check=False)
        self.hosts = []
