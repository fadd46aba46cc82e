"""A fleet of test agents over real gRPC whose facts change between Hellos (a host rebooted into a new
kernel), runs posted through the REST API, and each agent reporting the figure it is told: what a fleet
change and a peer outlier are made of. Used by test_fleet_changes.py, and run as a script by the browser
test (frontend/e2e/fleet-changes.spec.ts) against the real stack:

    cd server && ../.venv/bin/python -m tests.fleet_agents --http URL --grpc HOST:PORT \\
        --admin-token T --agent-token-file F --ca-file F --prefix NAME [--hosts ad]

prints {"machines": {name: id}, "kernel": id} once every run has reported, and disconnects. --hosts names
which of the hosts a..f take part (frontend/e2e/alert-real.spec.ts runs one that steps, one that does not)."""

from __future__ import annotations

import argparse
import asyncio
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb

from .fake_agent import FakeAgent


def base_facts(name: str) -> dict[str, Any]:
    return {
        "hostname": name,
        "cpu_model": "Test CPU",
        "logical_cpus": 4,
        "memory_bytes": 2**34,
        "kernel_release": "6.1.0",
        "os_release": "Debian 12",
        "governor": "performance",
        "clocksource": "tsc",
    }


def probe_catalog(kernel_id: str) -> list[pb.KernelSpec]:
    family = kernel_id.partition(".")[0]
    return [pb.KernelSpec(id=kernel_id, title="fleet probe", family=family, unit="ns/op")]


class FactsAgent(FakeAgent):
    """A FakeAgent whose Hello carries `facts` (MachineFacts fields): change them and connect again,
    and the runs after start with the new snapshot."""

    def __init__(self, *a: Any, facts: dict[str, Any] | None = None, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.facts = facts if facts is not None else base_facts(self.name)

    async def connect(self, *a: Any, **kw: Any) -> pb.Welcome:
        await self.open()
        hello = pb.Hello(
            agent_id=self.agent_id,
            agent_version="test",
            name=self.name,
            facts=pb.MachineFacts(**self.facts),
            kernels=self.kernels,
            labels=self.labels,
        )
        await self.send(pb.ConnectRequest(hello=hello))
        return (await self.expect("welcome")).welcome


@dataclass
class Host:
    """One agent of the fleet: its figure before and after, and the facts it reconnects with between."""

    agent: FactsAgent
    before: float
    after: float
    facts_after: dict[str, Any] | None = None
    figures: list[float] = field(default_factory=list)


def spread(center: float, n: int = 12, width: float = 0.02) -> list[float]:
    return [center * (1 - width + 2 * width * i / (n - 1)) for i in range(n)]


async def one_run(http: httpx.AsyncClient, host: Host, kernel: str, center: float) -> None:
    r = await http.post(
        "/api/v1/runs", json={"machine_id": host.agent.agent_id, "items": [{"kernel": kernel}]}
    )
    assert r.status_code == 201, r.text
    start = (await host.agent.expect("start_run", 10)).start_run
    assert start.run_id == r.json()["id"]
    await host.agent.report(start.run_id, start.items[0], samples=spread(center))


async def run_fleet(
    http: httpx.AsyncClient, hosts: Sequence[Host], kernel: str, before: int, after: int
) -> None:
    """Each host: `before` runs at its `before` figure; those with facts_after reconnect with them; then
    `after` runs at its `after` figure. Runs go round the hosts, as a night's schedule would."""
    for h in hosts:
        await h.agent.connect()
    for _ in range(before):
        await asyncio.gather(*(one_run(http, h, kernel, h.before) for h in hosts))
    for h in hosts:
        if h.facts_after is not None:
            await h.agent.close()
            h.agent.facts = h.facts_after
            await h.agent.connect()
    for _ in range(after):
        await asyncio.gather(*(one_run(http, h, kernel, h.after) for h in hosts))


async def step_fleet(
    http: httpx.AsyncClient, agents: Sequence[FactsAgent], stepped: int, before: int, after: int, kernel: str
) -> None:
    """The first `stepped` agents boot kernel 6.8.0 and get 60 % slower; the rest stay on 6.1.0."""
    hosts = [
        Host(a, 100.0, 160.0, {**a.facts, "kernel_release": "6.8.0"})
        if i < stepped
        else Host(a, 100.0, 100.0)
        for i, a in enumerate(agents)
    ]
    await run_fleet(http, hosts, kernel, before, after)


async def main(args: argparse.Namespace, token: str, ca: bytes) -> dict[str, Any]:
    """The browser test's fleet: a, b, c reboot into 6.8.0 and step +60 %; d, e stay on 6.1.0; f was on
    6.8.0 all along with the powersave governor and is 3x its class (a peer outlier). Only the hosts named
    in `args.hosts` take part."""
    credentials: dict[str, str] = {}
    kw: dict[str, Any] = {"token": token, "root_ca": ca, "credentials": credentials}
    kw["kernels"] = probe_catalog(args.kernel)

    def agent(name: str, **facts: Any) -> FactsAgent:
        full = f"{args.prefix}-{name}"
        return FactsAgent(
            args.grpc,
            agent_id=str(uuid.uuid4()),
            name=full,
            labels={"fleet": args.prefix},
            facts={**base_facts(full), **facts},
            **kw,
        )

    agents = {n: agent(n) for n in "abcde"}
    agents["f"] = agent("f", kernel_release="6.8.0", governor="powersave")
    agents = {n: a for n, a in agents.items() if n in args.hosts}
    hosts = [
        Host(a, 100.0, 160.0, {**a.facts, "kernel_release": "6.8.0"}) if n in "abc" else Host(a, 100.0, 100.0)
        for n, a in agents.items()
        if n != "f"
    ]
    if "f" in agents:
        hosts.append(Host(agents["f"], 480.0, 480.0))
    headers = {"authorization": f"Bearer {args.admin_token}"}
    async with httpx.AsyncClient(base_url=args.http, headers=headers, timeout=20) as http:
        try:
            await run_fleet(http, hosts, args.kernel, args.before, args.after)
        finally:
            for a in agents.values():
                await a.close()
    return {"machines": {a.name: a.agent_id for a in agents.values()}, "kernel": args.kernel}


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--http", required=True)
    p.add_argument("--grpc", required=True)
    p.add_argument("--admin-token", required=True)
    p.add_argument("--agent-token-file", required=True)
    p.add_argument("--ca-file", required=True)
    p.add_argument("--prefix", default="pw-fleet")
    p.add_argument("--kernel", default="e2e.fleet_probe")
    p.add_argument("--hosts", default="abcdef", help="which of the hosts a..f take part")
    p.add_argument("--before", type=int, default=4)
    p.add_argument("--after", type=int, default=4)
    a = p.parse_args()
    got = asyncio.run(main(a, Path(a.agent_token_file).read_text().strip(), Path(a.ca_file).read_bytes()))
    print(json.dumps(got), flush=True)
