"""Two server processes on one PostgreSQL serve one fleet (issue 12, "more than one server").

Real processes: two `ctxbench-server`s sharing a database (and a data dir: the same agent token, admin
token and gRPC CA), one real Go agent connected to each. What one server is told reaches the other
through PostgreSQL's LISTEN/NOTIFY only: a run posted on one starts on an agent of the other within 1 s,
event streams on either follow a run wherever it runs, the push channel on one tells what changed on
the other, a cancel reaches the agent wherever it is, and
after the servers' listener connections are cut they resync.

Needs CTXBENCH_TEST_DATABASE_URL (scripts/with-postgres.sh sets it: `make test-multiserver`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tests.e2e.stack import TEST_DATABASE_URL, Agent, Process, Server, database_for, wait_until

TERMINAL = {"succeeded", "failed", "cancelled"}
START_WITHIN_S = 1.0


class Fleet:
    """Server 1 with agent 1, server 2 with agent 2 (machines m1, m2); `procs` in start order."""

    s1: Server
    s2: Server
    a1: Agent
    a2: Agent
    m1: str
    m2: str

    def __init__(self) -> None:
        self.procs: list[Process] = []


def _machine_id(agent: Agent) -> str:
    wait_until(f"{agent.name}'s id", agent.agent_id_file.exists, 30)
    return agent.agent_id_file.read_text().strip()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    if not TEST_DATABASE_URL:
        pytest.fail("two servers need PostgreSQL: run under scripts/with-postgres.sh (make test-multiserver)")
    root = tmp_path_factory.mktemp("multi")
    data = root / "data"
    data.mkdir()
    f = Fleet()
    try:
        f.s1 = Server(data)  # first: it generates the agent token and the CA that the second one reads
        f.procs.append(f.s1)
        f.s2 = Server(data)
        f.procs.append(f.s2)
        assert f.s1.ca_file == f.s2.ca_file
        f.a1 = Agent(f.s1, root / "spool1", name="multi-1")
        f.procs.append(f.a1)
        f.a2 = Agent(f.s2, root / "spool2", name="multi-2")
        f.procs.append(f.a2)
        f.m1, f.m2 = _machine_id(f.a1), _machine_id(f.a2)
        yield f
    finally:
        for proc in reversed(f.procs):
            rc = proc.stop()
            assert rc == 0, f"{proc.name} did not stop cleanly ({rc}):\n{proc.output()}"


def _online(server: Server) -> set[str]:
    return {m["id"] for m in server.http.get("/machines").json() if m["online"]}


def _post(server: Server, machine_id: str, n: int, min_time_s: float = 0.05) -> dict:
    items = [{"kernel": "call.function"} for _ in range(n)]
    body = {"machine_id": machine_id, "items": items, "repetitions": 5, "min_time_s": min_time_s}
    r = server.http.post("/runs", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def _wait_status(server: Server, run_id: str, statuses: set[str], timeout: float = 60) -> dict:
    def check() -> dict | None:
        run = server.http.get(f"/runs/{run_id}").json()
        return run if run["status"] in statuses else None

    return wait_until(f"run {run_id} to be {'/'.join(sorted(statuses))}", check, timeout, 0.02)


def _start_delay(run: dict) -> float:
    return (
        datetime.fromisoformat(run["started_at"]) - datetime.fromisoformat(run["created_at"])
    ).total_seconds()


def _starts(agent: Agent, run_id: str) -> int:
    """StartRuns of the run the agent received: one, unless something sent it twice."""
    wait_until("the agent's StartRun line", lambda: any(run_id in line for line in agent.lines), 5)
    return sum(1 for line in list(agent.lines) if "StartRun received" in line and run_id in line)


def test_both_servers_see_every_agent_online(fleet: Fleet) -> None:
    both = {fleet.m1, fleet.m2}
    wait_until("both machines online on server 1", lambda: both <= _online(fleet.s1), 30)
    wait_until("both machines online on server 2", lambda: both <= _online(fleet.s2), 30)


def test_a_run_posted_on_one_server_starts_on_an_agent_of_the_other_within_a_second(fleet: Fleet) -> None:
    wait_until("machine 2 online on server 1", lambda: fleet.m2 in _online(fleet.s1), 30)
    delays = []
    for s, m, agent in ((fleet.s1, fleet.m2, fleet.a2), (fleet.s2, fleet.m1, fleet.a1)):
        run = _post(s, m, 1)
        started = _wait_status(s, run["id"], {"running", *TERMINAL}, 5)
        delays.append(_start_delay(started))
        done = _wait_status(s, run["id"], TERMINAL)
        assert done["status"] == "succeeded", done
        assert _starts(agent, run["id"]) == 1, agent.output()  # sent once, to its agent only
    print(f"posted on one server, started by the other: {', '.join(f'{d * 1000:.0f} ms' for d in delays)}")
    assert max(delays) < START_WITHIN_S, delays


def test_event_streams_on_either_server_follow_a_run_wherever_it_runs(fleet: Fleet) -> None:
    n = 4
    run = _post(fleet.s1, fleet.m1, n, min_time_s=0.1)  # posted on 1, runs on 1's agent, followed on 2
    events: list[tuple[str, dict]] = []
    url = f"{fleet.s2.base_url}/api/v1/runs/{run['id']}/events"
    # Nothing for 10 s (a keepalive comes every 15 s) fails: server 2 was not told of a change.
    with httpx.stream("GET", url, headers=fleet.s2.auth, timeout=10) as r:
        assert r.status_code == 200
        kind = ""
        for line in r.iter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append((kind, json.loads(line.removeprefix("data: "))))
                if kind == "end":
                    break
    first = events[0]
    assert first[0] == "run"
    results = [e for k, e in events if k == "result"]
    assert len(results) == n, events
    # The stream joined before the run was done and saw its progress as it happened.
    assert first[1]["progress"]["done"] < n, first
    assert [k for k, _ in events].count("run") >= 2
    assert events[-1][0] == "end" and events[-1][1]["status"] == "succeeded"


def test_the_push_channel_on_one_server_tells_what_changed_on_the_other(fleet: Fleet) -> None:
    """GET /events on server 2: a rename and a run posted on server 1, and the run's progress (on server
    1's agent) to succeeded, through ctxbench_change and ctxbench_run."""
    wait_until("machine 1 online on server 1", lambda: fleet.m1 in _online(fleet.s1), 30)
    seen: list[tuple[str, dict]] = []
    url = f"{fleet.s2.base_url}/api/v1/events"
    with httpx.stream("GET", url, headers=fleet.s2.auth, timeout=10) as r:
        assert r.status_code == 200
        lines = r.iter_lines()
        assert next(lines) == "retry: 3000"  # subscribed: what happens from now on reaches it
        renamed = fleet.s1.http.patch(f"/machines/{fleet.m1}", json={"name": "pushed"})
        assert renamed.status_code == 200, renamed.text
        run = _post(fleet.s1, fleet.m1, 1)
        kind = ""
        for line in lines:  # nothing for 10 s fails: server 2 was not told
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                seen.append((kind, json.loads(line.removeprefix("data: "))))
                if kind == "run" and seen[-1][1]["id"] == run["id"] and seen[-1][1]["status"] == "succeeded":
                    break
    fleet.s1.http.patch(f"/machines/{fleet.m1}", json={"name": None})
    assert ("machine", {"id": fleet.m1, "what": "renamed"}) in seen, seen
    assert any(k == "run" and e["id"] == run["id"] and e["what"] == "created" for k, e in seen), seen


def test_a_cancel_on_one_server_stops_the_run_on_an_agent_of_the_other(fleet: Fleet) -> None:
    run = _post(fleet.s1, fleet.m2, 40, min_time_s=0.2)  # far longer than the test waits
    _wait_status(fleet.s1, run["id"], {"running"}, 5)
    r = fleet.s1.http.post(f"/runs/{run['id']}/cancel")
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "cancelled"
    cancelled = re.compile(rf"CancelRun received.*{run['id']}")
    fleet.a2.wait_for_line(cancelled, 5)
    # The agent is free again: the next run, posted on server 2 this time, starts at once.
    after = _post(fleet.s2, fleet.m2, 1)
    started = _wait_status(fleet.s2, after["id"], {"running", *TERMINAL}, 5)
    assert _start_delay(started) < 3 * START_WITHIN_S, started
    assert _wait_status(fleet.s2, after["id"], TERMINAL)["status"] == "succeeded"


def test_after_their_listener_connections_are_cut_the_servers_resync(fleet: Fleet) -> None:
    url = database_for(fleet.s1.data_dir)

    async def cut() -> int:
        engine = create_async_engine(url)
        try:
            async with engine.connect() as conn:
                q = text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE application_name = 'ctxbench-cluster'"
                )
                return int((await conn.execute(q)).scalar() or 0)
        finally:
            await engine.dispose()

    assert asyncio.run(cut()) == 2
    back = re.compile(r"cluster: listener connection back")
    fleet.s1.wait_for_line(back, 15)
    fleet.s2.wait_for_line(back, 15)
    both = {fleet.m1, fleet.m2}
    wait_until(
        "both machines online on both servers", lambda: both <= _online(fleet.s1) & _online(fleet.s2), 15
    )
    run = _post(fleet.s2, fleet.m1, 1)
    started = _wait_status(fleet.s2, run["id"], {"running", *TERMINAL}, 5)
    assert _start_delay(started) < START_WITHIN_S, started
    assert _wait_status(fleet.s2, run["id"], TERMINAL)["status"] == "succeeded"


def test_an_agent_reconnecting_to_the_other_server_takes_its_stream_over(fleet: Fleet) -> None:
    """The agent of server 2 hangs (SIGSTOP: its old stream stays open) and comes back on server 1 (a
    copy of its spool: the same machine). Server 2 lets the machine go, server 1 serves it, and a run
    posted on server 2 reaches it through server 1, once."""
    frozen = fleet.a2
    frozen.signal(signal.SIGSTOP)
    try:
        spool = frozen.spool.with_name("spool2-again")
        shutil.copytree(frozen.spool, spool)
        fleet.a2 = Agent(fleet.s1, spool, name="multi-2")
        fleet.procs.append(fleet.a2)
        fleet.s2.wait_for_line(
            re.compile(rf"agent {re.escape(fleet.m2)} connected to another server process"), 30
        )
        fleet.s1.wait_for_line(re.compile(rf"agent {re.escape(fleet.m2)} .* connected from"), 30)
        wait_until("machine 2 online on server 2", lambda: fleet.m2 in _online(fleet.s2), 10)
        run = _post(fleet.s2, fleet.m2, 1)
        started = _wait_status(fleet.s2, run["id"], {"running", *TERMINAL}, 5)
        assert _start_delay(started) < START_WITHIN_S, started
        assert _wait_status(fleet.s2, run["id"], TERMINAL)["status"] == "succeeded"
        assert _starts(fleet.a2, run["id"]) == 1
        assert not any(run["id"] in line for line in frozen.lines)
    finally:
        fleet.procs.remove(frozen)
        os.killpg(frozen.proc.pid, signal.SIGKILL)
        frozen.proc.wait(10)


@pytest.mark.parametrize("how", ["stops", "is killed"])
def test_a_server_that_goes_tells_the_others_its_machines_went_offline(
    fleet: Fleet, tmp_path: Path, how: str
) -> None:
    """A third server with an agent of its own stops gracefully (SIGTERM) or is killed (SIGKILL): the
    push channel on server 2 says that machine went offline within 10 s, and server 2, asked when told,
    reads it offline. A stopping server gives its presence back and says so itself; a killed one says
    nothing: its connections end, PostgreSQL frees its presence locks, and server 2's listener sees them
    gone at its next read (cluster.PING_S). Its agent keeps trying the gone server's address."""
    s3 = Server(fleet.s1.data_dir)
    a3: Agent | None = None
    try:
        a3 = Agent(s3, tmp_path / "spool3", name="multi-3")
        m3 = _machine_id(a3)
        wait_until("machine 3 online on server 2", lambda: m3 in _online(fleet.s2), 30)
        url = f"{fleet.s2.base_url}/api/v1/events"
        with httpx.stream("GET", url, headers=fleet.s2.auth, timeout=10) as r:
            assert r.status_code == 200
            lines = r.iter_lines()
            assert next(lines) == "retry: 3000"
            if how == "stops":
                assert s3.stop() == 0, s3.output()
            else:
                s3.proc.kill()
                s3.proc.wait(10)
            deadline = time.monotonic() + 10
            kind = ""
            for line in lines:  # a read that waits 10 s fails the test too
                assert time.monotonic() < deadline, "no offline event for machine 3 within 10 s"
                if line.startswith("event: "):
                    kind = line.removeprefix("event: ")
                elif line.startswith("data: ") and kind == "machine":
                    if json.loads(line.removeprefix("data: ")) == {"id": m3, "what": "offline"}:
                        break
            assert m3 not in _online(fleet.s2)
    finally:
        if a3 is not None:
            a3.stop()
        if s3.proc.poll() is None:
            s3.stop()
