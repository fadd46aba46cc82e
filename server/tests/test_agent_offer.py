"""Which hosts run an older agent than the server offers (issue 26 item 10): GET /machines's
agent_offered_version, agent_outdated and upgrade_command, from the dist dir's SHA256SUMS. Real server,
real gRPC Hellos with the version and architecture an agent reports."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import pytest

from ctxbench_server.config import Settings
from ctxbench_server.fleet.offer import AgentOffer
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb

from .fake_agent import FakeAgent
from .runs_helpers import MakeAgent

SCRIPT = "#!/bin/sh\nDEFAULT_URL=\"@CTXBENCH_PUBLIC_URL@\"\nPINNED_SUMS='@CTXBENCH_SHA256SUMS@'\n"


def sums(*bundles: tuple[str, str]) -> str:
    """SHA256SUMS as `make dist` writes it, oldest first: (version, arch) per bundle."""
    return "".join(f"{'a' * 64}  ctxbench-agent-{v}-linux-{arch}.tar.gz\n" for v, arch in bundles)


@pytest.fixture
def dist(settings: Settings) -> Path:
    d = settings.dist_dir
    d.mkdir(parents=True)
    (d / "install-agent.sh").write_text(SCRIPT)
    (d / "SHA256SUMS").write_text(
        sums(("0.1.0+aaa1111", "amd64"), ("0.1.0+aaa1111", "arm64"), ("0.1.0+bbb2222", "amd64"))
    )
    return d


async def hello(agent: FakeAgent, version: str, arch: str) -> None:
    """Connects saying what a real agent says of itself: its version and its host's architecture."""
    await agent.open()
    facts = pb.MachineFacts(hostname=agent.name, cpu_model="Test CPU", arch=arch)
    hello = pb.Hello(agent_id=agent.agent_id, agent_version=version, name=agent.name, facts=facts)
    await agent.send(pb.ConnectRequest(hello=hello))
    await agent.expect("welcome")


async def machines(http: httpx.AsyncClient) -> dict[str, dict[str, object]]:
    r = await http.get("/api/v1/machines")
    assert r.status_code == 200, r.text
    return {m["name"]: m for m in r.json()}


HOSTS = {
    # name: (reported version, arch, offered, outdated)
    "old": ("0.1.0+aaa1111", "amd64", "0.1.0+bbb2222", True),  # an earlier bundle still listed
    "current": ("0.1.0+bbb2222", "amd64", "0.1.0+bbb2222", False),
    "arm": ("0.1.0+aaa1111", "arm64", "0.1.0+aaa1111", False),  # the newest of its architecture
    # a build of the same release not listed: older than the bundles kept, or newer (make run's local
    # agent after the last make dist); the versions cannot tell, so it is not called outdated
    "unlisted": ("0.1.0+0ld0000", "amd64", "0.1.0+bbb2222", False),
    "release": ("0.0.9+ccc3333", "amd64", "0.1.0+bbb2222", True),
    "later": ("0.2.0+ddd4444", "amd64", "0.1.0+bbb2222", False),  # a later release: not older
    "riscv": ("0.1.0+aaa1111", "riscv64", None, False),  # nothing offered for it
}


async def test_machines_say_which_agents_are_older_than_the_offered_one(
    dist: Path, make_agent: MakeAgent, http: httpx.AsyncClient, anon: httpx.AsyncClient
) -> None:
    for name, (version, arch, _, _) in HOSTS.items():
        await hello(make_agent(name=name), version, arch)
    got = await machines(http)
    for name, (_, _, offered, outdated) in HOSTS.items():
        m = got[name]
        assert (m["agent_offered_version"], m["agent_outdated"]) == (offered, outdated), name
        assert (m["upgrade_command"] is not None) == outdated, name

    # The upgrade command checks the installer exactly as this server serves it, and carries no token.
    served = (await anon.get("/install-agent.sh")).text
    sha = hashlib.sha256(served.encode()).hexdigest()
    assert got["old"]["upgrade_command"] == (
        f'f=$(mktemp) && curl -fsSL {str(http.base_url).rstrip("/")}/install-agent.sh -o "$f" '
        f'&& echo "{sha}  $f" | sha256sum -c - && sh "$f"'
    )
    # One machine reads the same as the list.
    one = (await http.get(f"/api/v1/machines/{got['old']['id']}")).json()
    assert (one["agent_outdated"], one["upgrade_command"]) == (True, got["old"]["upgrade_command"])

    # A new `make dist`: the host that was current is now behind, at once.
    (dist / "SHA256SUMS").write_text(
        sums(("0.1.0+aaa1111", "amd64"), ("0.1.0+bbb2222", "amd64"), ("0.1.0+eee5555", "amd64"))
    )
    got = await machines(http)
    assert (got["current"]["agent_offered_version"], got["current"]["agent_outdated"]) == (
        "0.1.0+eee5555",
        True,
    )
    assert got["later"]["agent_outdated"] is False


async def test_without_bundles_nothing_is_offered(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    await hello(make_agent(name="solo"), "0.1.0+aaa1111", "amd64")
    m = (await machines(http))["solo"]
    assert (m["agent_offered_version"], m["agent_outdated"], m["upgrade_command"]) == (None, False, None)


def test_outdated_without_an_installer_has_no_command() -> None:
    offer = AgentOffer({"amd64": "0.1.0+b"}, listed={"amd64": ("0.1.0+a", "0.1.0+b")})
    assert offer.outdated("0.1.0+a", "amd64") and offer.upgrade_command is None
    assert offer.outdated("0.0.9+z", "amd64")  # an earlier release
    assert not offer.outdated("dev", "amd64")  # a build of its own: older or newer, nobody can tell
    assert not offer.outdated("0.1.0+c", "amd64")  # the same release, not listed: the same
    assert not offer.outdated("1.0.0", "amd64")
