"""Nothing lost, nothing doubled: agents and servers killed, links cut, results re-delivered.

Every test drives the real server and real agent processes over real sockets; the network-cut test puts
each agent in its own network namespace, reaching the server over a veth link.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.stack import (
    KERNELS_DIR,
    Agent,
    Process,
    Server,
    online_machine,
    post_run,
    wait_run,
    wait_until,
)
from tests.faults import netns


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_run(server: Server, run_id: str) -> dict:
    return server.http.get(f"/runs/{run_id}").json()


def results(server: Server, run_id: str) -> list[dict]:
    return server.http.get(f"/runs/{run_id}/results").json()


def spooled(agent: Agent) -> set[str]:
    return {p.stem for p in (agent.spool / "results").glob("*.json")}


def assert_exactly_once(server: Server, run: dict) -> list[dict]:
    """Every item has exactly one stored result and no result id is stored twice."""
    res = results(server, run["id"])
    item_ids = [r["item_id"] for r in res]
    assert len(set(item_ids)) == len(item_ids), f"an item has two results: {item_ids}"
    assert sorted(item_ids) == sorted(i["id"] for i in run["items"]), "an item has no result"
    assert len({r["id"] for r in res}) == len(res)
    return res


def succeeded_exactly_once(server: Server, run_id: str, timeout: float) -> tuple[dict, list[dict]]:
    """The run once finished, which must be succeeded with every item stored exactly once; its results."""
    run = wait_run(server, run_id, timeout)
    assert run["status"] == "succeeded", run
    return run, assert_exactly_once(server, run)


def wait_results(server: Server, run_id: str, n: int) -> None:
    wait_until(f"{n} results of run {run_id} to land", lambda: len(results(server, run_id)) >= n, 60)


def getppid_run(server: Server, machine: str, n: int) -> dict:
    """A run of n getppid items on the machine called machine once it is online, each in 2 launches of 2
    repetitions of 0.2 s: long enough to break something in the middle of it. (Launches are interleaved
    round-robin: an item's result lands after its last launch, so results land one by one through the
    second round.)"""
    items = [{"kernel": "syscall.getppid"} for _ in range(n)]
    machine_id = online_machine(server, machine)["id"]
    return post_run(server, machine_id, items, repetitions=4, min_time_s=0.2, launches=2)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    return d


@dataclass
class OneAgent:
    """A server and one agent; a test that kills and restarts either puts the new one here."""

    server: Server
    agent: Agent


@contextmanager
def one_agent(data: Path, spool: Path, name: str, **server: Any) -> Iterator[OneAgent]:
    """A server (with the given settings) and one agent called name; whichever processes the test left
    in the OneAgent are stopped at the end (a stopped server is continued first)."""
    first = Server(data, **server)
    st = OneAgent(first, Agent(first, spool, name=name))
    try:
        yield st
    finally:
        st.agent.stop()
        st.server.signal(signal.SIGCONT)
        st.server.stop()


def kill(proc: Process) -> None:
    proc.signal(signal.SIGKILL)
    proc.proc.wait(10)


def test_agent_killed_mid_item_loses_nothing(data: Path, tmp_path: Path) -> None:
    with one_agent(data, tmp_path / "spool", "victim") as st:
        run = getppid_run(st.server, "victim", 6)
        wait_results(st.server, run["id"], 2)
        kill(st.agent)
        measured_before_kill = {r["id"] for r in results(st.server, run["id"])} | spooled(st.agent)

        st.agent = Agent(st.server, st.agent.spool, name="victim")
        run, res = succeeded_exactly_once(st.server, run["id"], 90)
        assert measured_before_kill <= {r["id"] for r in res}, "a result measured before the kill was lost"
        wait_until("the spool to drain", lambda: not spooled(st.agent), 10)


def test_server_killed_mid_run_and_restarted(data: Path, tmp_path: Path) -> None:
    ports = {"http_port": free_port(), "grpc_port": free_port()}
    with one_agent(data, tmp_path / "spool", "survivor", **ports) as st:
        run = getppid_run(st.server, "survivor", 6)
        wait_results(st.server, run["id"], 1)
        kill(st.server)
        time.sleep(3)  # the agent measures on, spooling what it cannot deliver

        st.server = Server(data, **ports)
        succeeded_exactly_once(st.server, run["id"], 120)
        wait_until("the spool to drain", lambda: not spooled(st.agent), 30)


def test_result_delivered_twice_is_stored_once(data: Path, tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    with one_agent(data, tmp_path / "spool", "echo") as st:
        server = st.server
        run = getppid_run(server, "echo", 2)
        wait_until(
            "the first item to run",
            lambda: any(i["state"] == "running" for i in get_run(server, run["id"])["items"]),
            30,
        )
        # Freeze the server: the agent's first result reaches the spool but no ack can come back.
        server.signal(signal.SIGSTOP)
        try:
            first = wait_until("a spooled result", lambda: sorted(st.agent.spool.glob("results/*.json")), 30)
            shutil.copy(first[0], kept / first[0].name)
        finally:
            server.signal(signal.SIGCONT)
        run, before = succeeded_exactly_once(server, run["id"], 60)
        wait_until("the spool to drain", lambda: not spooled(st.agent), 10)
        assert st.agent.stop() == 0

        # The ack was "lost": the agent still holds the result and sends it again after a restart.
        shutil.copy(kept / first[0].name, st.agent.spool / "results" / first[0].name)
        st.agent = Agent(server, st.agent.spool, name="echo")
        wait_until("the re-sent result to be acknowledged", lambda: not spooled(st.agent), 30)
        after = assert_exactly_once(server, get_run(server, run["id"]))
        assert sorted(r["id"] for r in after) == sorted(r["id"] for r in before)
        assert first[0].stem in {r["id"] for r in after}


@pytest.fixture
def hosts() -> Iterator[list[netns.Host]]:
    why = netns.available()
    if why:
        pytest.fail(f"the network-cut test needs network namespaces: {why}")
    net = netns.faults_net()  # its own prefix too: clear_stale removes its prefix's idle namespaces
    made = netns.Hosts(3, tag=str(os.getpid())[-6:], prefix=f"cxf{net}", net=net)
    try:
        yield made.hosts
    finally:
        made.close()


def test_network_cut_for_30s_mid_run(data: Path, tmp_path: Path, hosts: list[netns.Host]) -> None:
    # Agents reach the server only over their veth links; heartbeats every 2 s make silence show fast.
    # The agents dial the host side of their veths: those addresses must be in the TLS certificate.
    server = Server(
        data,
        grpc_host="0.0.0.0",
        heartbeat_interval_s="2",
        public_grpc_address=",".join(h.host_addr for h in hosts),
    )
    agents = [
        Agent(
            server,
            tmp_path / f"spool-{k}",
            name=f"netns-{k}",
            target=f"{h.host_addr}:{server.grpc_port}",
            wrap=h.wrap,
        )
        for k, h in enumerate(hosts)
    ]
    try:
        machines = [online_machine(server, f"netns-{k}") for k in range(len(hosts))]
        runs = [getppid_run(server, m["name"], 8) for m in machines]
        cut, others = runs[0], runs[1:]
        # An item's result is final only after its last launch (launches are interleaved round-robin and
        # disturbed ones re-measured at the end), so results land near the run's end: cut early instead,
        # while the first round of launches is still measuring.
        wait_until(
            "the cut host's run to start", lambda: get_run(server, cut["id"])["status"] == "running", 60
        )
        time.sleep(1)
        assert not results(server, cut["id"]), "the cut host's run delivered before the cut: make it longer"
        others_before = [len(results(server, r["id"])) for r in others]
        hosts[0].cut()
        try:
            time.sleep(30)
            # Unaffected: the other two kept delivering while the link was down. Their results land near
            # their runs' ends, which on a slow or busy host can be past these 30 s: the link stays down
            # until each has delivered more (or all), then they must still be online.
            for r, before in zip(others, others_before, strict=True):
                wait_until(
                    "another host's run to deliver during the cut",
                    lambda r=r, before=before: (
                        len(got := results(server, r["id"])) > before or len(got) == len(r["items"])
                    ),
                    120,
                )
            by_id = {m["id"]: m for m in server.http.get("/machines").json()}
            for m in machines[1:]:
                assert by_id[m["id"]]["online"], f"{m['name']} went offline during another host's cut"
            # The cut host's run is neither failed nor lost: it waits for its agent.
            assert get_run(server, cut["id"])["status"] == "running"
        finally:
            hosts[0].restore()
        for r in runs:
            succeeded_exactly_once(server, r["id"], 180)
        for a in agents:
            wait_until("every spool to drain", lambda a=a: not spooled(a), 30)
    finally:
        for a in agents:
            a.stop()
        server.stop()


def test_fifty_agents_at_once(data: Path, tmp_path: Path) -> None:
    kernels = tmp_path / "kernels"  # the C++ kernels only: fifty catalogs load fast
    kernels.mkdir()
    (kernels / "ctxbench-kernels-cpp").symlink_to(KERNELS_DIR / "ctxbench-kernels-cpp")
    server = Server(data)
    fleet: list[Agent] = []
    try:
        for k in range(50):
            fleet.append(Agent(server, tmp_path / f"spool-{k:02}", name=f"fleet-{k:02}", kernels=kernels))
        wait_until(
            "fifty machines online",
            lambda: sum(m["online"] for m in server.http.get("/machines").json()) == 50,
            120,
            interval=0.5,
        )
        machines = server.http.get("/machines").json()
        runs = [
            post_run(
                server, m["id"], [{"kernel": "call.function"}], repetitions=2, min_time_s=0.01, launches=1
            )
            for m in machines
        ]
        for r in runs:
            _, res = succeeded_exactly_once(server, r["id"], 240)
            assert len(res) == 1
    finally:
        for a in fleet:
            a.stop()
        server.stop()
