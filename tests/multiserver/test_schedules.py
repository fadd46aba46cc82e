"""Two server processes on one PostgreSQL tick the same schedule: each slot fires exactly once (issue
28). Both servers run with a 0.2 s tick and, as a dev setting, a 2 s minimum interval
(CTXBENCH_ENV=dev, CTXBENCH_SCHEDULE_MIN_INTERVAL_S=2): a few slots in a few seconds.

Needs CTXBENCH_TEST_DATABASE_URL (scripts/with-postgres.sh sets it: `make test-multiserver`)."""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime

import pytest

from tests.e2e.stack import TEST_DATABASE_URL, Agent, Process, Server, wait_until

INTERVAL_S = 2
KERNEL = "call.function"
FAST = {"env": "dev", "schedule_tick_s": "0.2", "schedule_min_interval_s": str(INTERVAL_S)}


def _kernels(server: Server, machine: str) -> list[str]:
    return next((m["kernels"] for m in server.http.get("/machines").json() if m["id"] == machine), [])


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server, str]]:
    if not TEST_DATABASE_URL:
        pytest.fail("two servers need PostgreSQL: run under scripts/with-postgres.sh (make test-multiserver)")
    root = tmp_path_factory.mktemp("sched")
    data = root / "data"
    data.mkdir()
    procs: list[Process] = []
    try:
        s1 = Server(data, **FAST)
        procs.append(s1)
        s2 = Server(data, **FAST)
        procs.append(s2)
        agent = Agent(s1, root / "spool", name="sched-1")
        procs.append(agent)
        wait_until("the agent's id", agent.agent_id_file.exists, 30)
        machine = agent.agent_id_file.read_text().strip()
        wait_until("the agent's catalog", lambda: KERNEL in _kernels(s1, machine), 30)
        yield s1, s2, machine
    finally:
        for proc in reversed(procs):
            assert proc.stop() == 0, proc.output()


def test_each_slot_fires_exactly_once(two: tuple[Server, Server, str]) -> None:
    s1, s2, machine = two
    body = {
        "name": "every two seconds",
        "run": {"items": [{"kernel": KERNEL}], "repetitions": 2, "min_time_s": 0.01, "launches": 1},
        "machine_ids": [machine],
        "interval_s": INTERVAL_S,
    }
    r = s1.http.post("/schedules", json=body)
    assert r.status_code == 201, r.text
    sid = r.json()["id"]
    wait_until(
        "four firings",
        lambda: len(s2.http.get(f"/schedules/{sid}").json()["firings"]) >= 4,
        30,
        0.1,
    )
    assert s2.http.post(f"/schedules/{sid}/pause").status_code == 200
    time.sleep(0.5)  # a firing claimed before the pause commits (it would be listed below anyway)
    firings = s1.http.get(f"/schedules/{sid}").json()["firings"]
    due = sorted(datetime.fromisoformat(f["due_at"]) for f in firings)
    assert len(set(due)) == len(due)
    # Consecutive slots, none missed, none twice.
    assert {(b - a).total_seconds() for a, b in itertools.pairwise(due)} == {INTERVAL_S}, due
    made = [rid for f in firings for rid in f["run_ids"]]
    busy = [f for f in firings if f["skipped"]]
    assert len(made) + len(busy) == len(firings)  # each firing ran the machine or found it busy
    assert all(f["skipped"] == [{"machine_id": machine, "reason": "busy"}] for f in busy)
    assert Counter(made).most_common(1)[0][1] == 1
    runs = s1.http.get("/runs", params={"machine_id": machine, "limit": 100}).json()
    assert sorted(r["id"] for r in runs if r["schedule_id"] == sid) == sorted(made)
    # Both processes ticked: the log shows which fired, the database that only one did each slot.
    fired_by = [sum(f"{sid} fired" in line for line in s.lines) for s in (s1, s2)]
    print(f"firings: {len(firings)}, by server 1 / 2: {fired_by}")
    assert sum(fired_by) == len(firings)
