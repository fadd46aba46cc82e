"""Fleet changes: History's steps of one kernel point on several hosts grouped into one change, with what
the stepping hosts' facts changed alike and whether the others made that change; steps days apart stay
apart, an A/A fleet makes none; the REST shape and its 422s; and one change made by real agent reports
over gRPC (labelled agents whose kernel release changes between two Hellos)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy import event

from ctxbench_server.fleetchanges import service
from ctxbench_server.history import series_steps
from ctxbench_server.history import service as history
from ctxbench_server.main import CtxbenchServer

from .compare_helpers import FACTS, T0, Seeder, spread
from .conftest import TOKEN, server_ca
from .fleet_agents import FactsAgent, step_fleet
from .schedules_helpers import Db, migrated

KERNEL = "syscall.getppid"


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Db]:
    async for d in migrated(tmp_path):
        yield d


@pytest.fixture
async def seed(db: Db) -> Seeder:
    s = Seeder(db.sessionmaker)
    await s.kernels()
    return s


async def host(seed: Seeder, mid: str, centers: list[float], kernel_after: int | None = None) -> None:
    """One getppid run per center (samples ±2 %); the kernel release goes from 6.1.0 to 6.8.0 at run
    `kernel_after`."""
    if mid not in seed.__dict__.setdefault("hosts", set()):
        await seed.machine(mid)
        seed.__dict__["hosts"].add(mid)
    for i, center in enumerate(centers):
        release = "6.8.0" if kernel_after is not None and i >= kernel_after else "6.1.0"
        facts = {**FACTS, "hostname": mid, "kernel_release": release, "load_average": [i, 0, 0]}
        run = await seed.run(mid, facts=facts)
        await seed.result(run, mid, KERNEL, spread(center), sample_launches=[0, 1] * 5)


FLAT = [100.0 * (1 + 0.004 * (i % 3)) for i in range(6)]
STEP = [118.0 * (1 + 0.004 * (i % 3)) for i in range(6)]


def query(**kw: Any) -> service.FleetQuery:
    base: dict[str, Any] = {
        "since": T0 - timedelta(days=1),
        "until": T0 + timedelta(days=20),
        "window": timedelta(hours=24),
        "kernels": [],
        "min_hosts": 2,
        "limit": 50,
        "cursor": None,
    }
    return service.FleetQuery(**{**base, **kw})


async def changes(db: Db, **kw: Any) -> list[Any]:
    async with db.sessionmaker() as s:
        return (await service.fleet_changes(s, query(**kw))).fleet_changes


async def three_of_five(seed: Seeder) -> None:
    """Five hosts measure getppid 6 times; then a, b, c boot 6.8 and measure it +18 %, d and e stay on
    6.1 at the same figure (interleaved in time, as a night's runs would be)."""
    for mid in "abcde":
        await host(seed, mid, FLAT)
    for i in range(6):
        for mid in "abcde":
            stepped = mid in "abc"
            await host(seed, mid, [(STEP if stepped else FLAT)[i]], kernel_after=0 if stepped else None)


async def test_three_of_five_hosts_that_changed_kernel_are_one_change(db: Db, seed: Seeder) -> None:
    await three_of_five(seed)
    [c] = await changes(db)
    assert c.kernel == KERNEL and c.direction == "up" and c.ratio == pytest.approx(1.18, rel=0.02)
    assert [h.machine_id for h in c.hosts] == ["a", "b", "c"]
    assert [o.machine_id for o in c.others] == ["d", "e"]
    assert [(s.fact, s.before, s.after, s.others_changed) for s in c.shared] == [
        ("kernel_release", "6.1.0", "6.8.0", 0)
    ]
    assert all(o.facts == {"kernel_release": "6.1.0"} and o.facts_changed == [] for o in c.others)
    assert c.summary.startswith(f"{KERNEL} +18.") and "on 3 of 5 hosts" in c.summary
    assert c.summary.endswith("all 3 went from kernel_release 6.1.0 to 6.8.0; the other 2 did not")
    # a kernel filter that names another kernel, or more hosts than stepped, finds none
    assert await changes(db, kernels=["ctxsw.pipe"]) == []
    assert await changes(db, min_hosts=4) == []
    # a range that ends before the steps finds none
    assert await changes(db, until=T0 + timedelta(seconds=30)) == []


async def test_the_others_that_made_the_same_change_are_counted(db: Db, seed: Seeder) -> None:
    for mid in "abc":
        await host(seed, mid, FLAT)
    for i in range(6):
        for mid in "abc":  # c boots 6.8 too, and its figure does not move
            await host(seed, mid, [(FLAT if mid == "c" else STEP)[i]], kernel_after=0)
    [c] = await changes(db)
    assert [o.machine_id for o in c.others] == ["c"] and c.shared[0].others_changed == 1
    assert c.summary.endswith("both went from kernel_release 6.1.0 to 6.8.0; the other one did too")


async def test_steps_in_different_windows_are_not_grouped(db: Db, seed: Seeder) -> None:
    await host(seed, "a", FLAT + STEP, kernel_after=6)
    seed.clock += timedelta(days=3)  # b steps three days later: a different night
    await host(seed, "b", FLAT + STEP, kernel_after=6)
    assert await changes(db) == []
    # a window of a week holds both
    [c] = await changes(db, window=timedelta(days=7))
    assert [h.machine_id for h in c.hosts] == ["a", "b"]
    assert c.last_at - c.first_at > timedelta(days=2)


async def test_opposite_directions_are_not_one_change(db: Db, seed: Seeder) -> None:
    await host(seed, "a", FLAT + STEP)
    await host(seed, "b", STEP + FLAT)
    assert await changes(db) == []


async def test_an_aa_fleet_makes_no_change(db: Db, seed: Seeder) -> None:
    rng = np.random.default_rng(7)
    for mid in "abcde":
        await host(seed, mid, [float(100.0 * np.exp(rng.normal(0.0, 0.02))) for _ in range(14)])
    assert await changes(db) == []


async def statements(db: Db) -> tuple[int, list[Any]]:
    """The SQL statements one read runs with History's step cache empty, and what it finds."""
    history.clear_cache()
    count = 0

    def counted(*_: Any) -> None:
        nonlocal count
        count += 1

    engine = db.engines[0].sync_engine
    event.listen(engine, "before_cursor_execute", counted)
    try:
        got = await changes(db)
    finally:
        event.remove(engine, "before_cursor_execute", counted)
    return count, got


async def test_a_read_runs_as_many_statements_for_fifteen_hosts_as_for_five(db: Db, seed: Seeder) -> None:
    """The series are read together (history/series_steps.read_series), not one statement a series."""
    await three_of_five(seed)
    five, [c] = await statements(db)
    assert len(c.others) == 2
    for mid in "fghijklmno":
        await host(seed, mid, FLAT * 2)
    fifteen, [c] = await statements(db)
    assert fifteen == five and len(c.others) == 12
    assert c.summary.endswith("the other 12 did not")


async def test_others_with_more_runs_than_a_series_read_holds_count_them_all(
    db: Db, seed: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An other host whose newest MAX_POINTS results do not reach back to the window's start: its runs
    in the window are read apart, every one counted."""
    monkeypatch.setattr(series_steps, "MAX_POINTS", 12)
    await three_of_five(seed)  # 12 runs on each host
    for mid in "de":
        await host(seed, mid, FLAT * 2)
    [c] = await changes(db)
    assert [h.machine_id for h in c.hosts] == ["a", "b", "c"]
    assert [(o.machine_id, o.runs) for o in c.others] == [("d", 24), ("e", 24)]
    assert all(o.facts == {"kernel_release": "6.1.0"} and o.facts_changed == [] for o in c.others)


@pytest.fixture
async def api_seed(server: CtxbenchServer) -> Seeder:
    s = Seeder(server.sessionmaker)
    await s.kernels()
    return s


RANGE = {"since": (T0 - timedelta(days=1)).isoformat(), "until": (T0 + timedelta(days=20)).isoformat()}


async def test_rest_pages_and_budgets(
    http: httpx.AsyncClient, anon: httpx.AsyncClient, api_seed: Seeder
) -> None:
    await three_of_five(api_seed)
    for mid in "fg":  # a second change, on ctxsw.pipe, later
        await api_seed.machine(mid)
    api_seed.clock += timedelta(days=2)
    for mid in "fg":
        for center in FLAT + STEP:
            run = await api_seed.run(mid, facts={**FACTS, "hostname": mid})
            await api_seed.result(run, mid, "ctxsw.pipe", spread(center), sample_launches=[0, 1] * 5)
    assert (await anon.get("/api/v1/fleet-changes")).status_code == 401
    r = await http.get("/api/v1/fleet-changes", params={**RANGE, "limit": 1})
    assert r.status_code == 200, r.text
    page = r.json()
    [first] = page["fleet_changes"]
    assert first["kernel"] == "ctxsw.pipe" and page["next_cursor"] and page["series"] == 7
    r = await http.get("/api/v1/fleet-changes", params={**RANGE, "limit": 1, "cursor": page["next_cursor"]})
    [second] = r.json()["fleet_changes"]
    assert second["kernel"] == KERNEL and r.json()["next_cursor"] is None
    assert second["shared"] == [
        {"fact": "kernel_release", "before": "6.1.0", "after": "6.8.0", "others_changed": 0}
    ]
    assert [h["machine_name"] for h in second["hosts"]] == ["a", "b", "c"]
    r = await http.get("/api/v1/fleet-changes", params={**RANGE, "kernel": KERNEL})
    assert [c["kernel"] for c in r.json()["fleet_changes"]] == [KERNEL]

    many = ",".join(f"k.{i}" for i in range(51))
    for params, loc in (
        ({"limit": 0}, ["query", "limit"]),
        ({"limit": 201}, ["query", "limit"]),
        ({"window_hours": 0}, ["query", "window_hours"]),
        ({"window_hours": 169}, ["query", "window_hours"]),
        ({"min_hosts": 1}, ["query", "min_hosts"]),
        ({"kernel": many}, ["query", "kernel"]),
        ({"kernel": "x" * 4001}, ["query", "kernel"]),
        ({"cursor": "not-a-cursor"}, ["query", "cursor"]),
        ({"cursor": "x" * 201}, ["query", "cursor"]),
        ({"since": "yesterday"}, ["query", "since"]),
        ({"since": T0.isoformat(), "until": (T0 + timedelta(days=91)).isoformat()}, ["query", "since"]),
        ({"since": T0.isoformat(), "until": (T0 - timedelta(days=1)).isoformat()}, ["query", "until"]),
    ):
        r = await http.get("/api/v1/fleet-changes", params=params)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == loc, (params, r.text)
        assert "Traceback" not in r.text


async def test_labelled_agents_make_one_change_end_to_end(
    http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    """Four agents over real gRPC (labelled), runs posted through the API: two reconnect with a new kernel
    release and report +60 %; one fleet change, and the other two did not change."""
    kw: dict[str, Any] = {"token": TOKEN, "root_ca": server_ca(server), "credentials": {}}
    agents = [
        FactsAgent(f"127.0.0.1:{server.grpc_port}", name=f"node-{i}", labels={"rack": "r1"}, **kw)
        for i in range(4)
    ]
    try:
        await step_fleet(http, agents, stepped=2, before=4, after=4, kernel="ctxsw.pipe")
    finally:
        for a in agents:
            await a.close()
    r = await http.get("/api/v1/fleet-changes", params={"kernel": "ctxsw.pipe"})
    [c] = r.json()["fleet_changes"]
    assert sorted(h["machine_name"] for h in c["hosts"]) == ["node-0", "node-1"]
    assert sorted(o["machine_name"] for o in c["others"]) == ["node-2", "node-3"]
    assert [(s["fact"], s["after"], s["others_changed"]) for s in c["shared"]] == [
        ("kernel_release", "6.8.0", 0)
    ]
    assert "on 2 of 4 hosts" in c["summary"] and c["summary"].endswith("the other 2 did not")
