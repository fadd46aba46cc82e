"""Alerts: a real step in a seeded series opens exactly one alert (with the host's fact changes), a flat
noisy one none, re-checks and a second server open nothing more; the REST states and their 422s; and
one alert opened from real agent reports, through the "result stored" event."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Collection
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy import func, select, update

from ctxbench_server.alerts.watch import AlertWatcher
from ctxbench_server.history import service as history
from ctxbench_server.main import CtxbenchServer
from ctxbench_server.models import Alert, Result
from ctxbench_server.stored import ResultStored

from .compare_helpers import FACTS, T0, Seeder, spread
from .conftest import RolledBack, eventually
from .fake_agent import FakeAgent
from .runs_helpers import post
from .schedules_helpers import Db, migrated

NOW = T0 + timedelta(days=1)
GETPPID = ("syscall.getppid", "")


@pytest.fixture
def db(tmp_path: Path, rolled_back: RolledBack) -> Db:
    return Db(tmp_path, rolled_back.engine, rolled_back)


@pytest.fixture
async def own_db(tmp_path: Path) -> AsyncIterator[Db]:
    """A database of its own: a second server process checks beside the first."""
    async for d in migrated(tmp_path):
        yield d


@pytest.fixture
async def seed(db: Db) -> Seeder:
    s = Seeder(db.sessionmaker)
    await s.kernels()
    return s


async def seed_series(
    seed: Seeder,
    mid: str,
    centers: list[float],
    governor_at: int | None = None,
    wavering: Collection[int] = (),
    more: bool = False,
) -> list[str]:
    """One getppid run per center (its samples spread 2 % around it; a run in `wavering` has two
    launches that disagree, 20 % below and above it, as beside a build); the governor goes from
    powersave to performance at run `governor_at`; `more`: runs added to the machine's series. Returns
    the run ids."""
    if not more:
        await seed.machine(mid)
    runs = []
    for i, center in enumerate(centers):
        gov = "performance" if governor_at is not None and i >= governor_at else "powersave"
        run = await seed.run(
            mid, facts={**FACTS, "hostname": mid, "governor": gov, "load_average": [i, 0, 0]}
        )
        if i in wavering:
            samples, launches = spread(0.8 * center, 5) + spread(1.2 * center, 5), [0] * 5 + [1] * 5
        else:
            samples, launches = spread(center), [0, 1] * 5
        await seed.result(run, mid, "syscall.getppid", samples, sample_launches=launches)
        runs.append(run)
    return runs


def watcher(db: Db, sessionmaker: Any = None) -> AlertWatcher:
    return AlertWatcher(sessionmaker or db.sessionmaker, db.settings)


async def alerts(db: Db) -> list[Alert]:
    async with db.sessionmaker() as s:
        return list(await s.scalars(select(Alert).order_by(Alert.at)))


async def test_a_real_step_opens_one_alert_with_its_fact_changes(own_db: Db) -> None:
    seed = Seeder(own_db.sessionmaker)
    await seed.kernels()
    runs = await seed_series(seed, "box", [100.0 * (1 + 0.004 * (i % 3)) for i in range(6)] + [130.0] * 6, 6)
    w = watcher(own_db)
    [opened] = await w.check([("box", *GETPPID)], NOW)
    assert opened.run_id == runs[6] and opened.before_run_id == runs[5] and opened.state == "open"
    assert opened.ratio == pytest.approx(1.3, rel=0.02) and opened.ci_low > 1.0
    assert opened.significance["rule"] == "ci_excludes_noise" and opened.significance["significant"]
    assert [(f["fact"], f["before"], f["after"]) for f in opened.facts_changed] == [
        ("governor", "powersave", "performance")
    ]
    # re-checks, and a second server process checking at the same time, open nothing more
    assert await w.check([("box", *GETPPID)], NOW) == []
    other = watcher(own_db, own_db.process())
    got = await asyncio.gather(w.check([("box", *GETPPID)], NOW), other.check([("box", *GETPPID)], NOW))
    assert got == [[], []]
    assert [a.id for a in await alerts(own_db)] == [opened.id]


async def test_a_boundary_that_moves_by_a_run_is_the_same_step(db: Db, seed: Seeder) -> None:
    await seed_series(seed, "box", [100.0] * 6 + [130.0] * 3)
    w = watcher(db)
    assert len(await w.check([("box", *GETPPID)], NOW)) == 1
    async with db.sessionmaker() as s:  # the fit moved the boundary one run later: still that step
        a = (await s.scalars(select(Alert))).one()
        a.run_id = "elsewhere"
        await s.commit()
    assert len(await w.check([("box", *GETPPID)], NOW)) == 1  # a boundary it no longer knows: opens again
    for _ in range(3):
        run = await seed.run("box", facts={**FACTS, "hostname": "box"})
        await seed.result(run, "box", "syscall.getppid", spread(130.0), sample_launches=[0, 1] * 5)
    assert await w.check([("box", *GETPPID)], NOW) == []  # more runs after it: the same step, known


async def test_a_flat_noisy_series_opens_none(db: Db, seed: Seeder) -> None:
    rng = np.random.default_rng(11)
    centers = [float(100.0 * np.exp(rng.normal(0.0, 0.03))) for _ in range(25)]
    await seed_series(seed, "flat", centers)
    assert await watcher(db).check([("flat", *GETPPID)], NOW) == []
    assert await alerts(db) == []


FLAT = [100.0] * 8


async def test_two_wavering_runs_open_none_until_the_level_stays(db: Db, seed: Seeder) -> None:
    """Issue 28, an unchanged host beside a build: 2 runs 25 % dearer whose launches disagreed (each
    run's CI ±22 %) open nothing; a third run at that level, steady, confirms the step and opens it."""
    runs = await seed_series(seed, "busy", [*FLAT, 125.0, 125.0], wavering={8, 9})
    w = watcher(db)
    assert await w.check([("busy", *GETPPID)], NOW) == []
    runs += await seed_series(seed, "busy", [125.0], more=True)
    [opened] = await w.check([("busy", *GETPPID)], NOW)
    assert opened.run_id == runs[8] and opened.significance["runs"] == [8, 3]
    assert opened.significance["noise_source"] == "runs"


async def test_two_steady_runs_of_a_real_step_open_one(db: Db, seed: Seeder) -> None:
    """The same step measured by runs that each saw one level: open at the second run after it."""
    runs = await seed_series(seed, "quiet", [*FLAT, 125.0, 125.0])
    [opened] = await watcher(db).check([("quiet", *GETPPID)], NOW)
    assert opened.run_id == runs[8] and opened.significance["runs"] == [8, 2]
    assert opened.ratio == pytest.approx(1.25, rel=0.01) and opened.ci_low > 1.2


async def test_a_run_checked_before_its_ci_is_filled_counts_its_launches(db: Db, seed: Seeder) -> None:
    """The watcher checks a series seconds after a run lands, maybe before the filler (ingest/ci.py)
    wrote the run's CI: the check computes it from the samples, so the wavering runs still hold."""
    runs = await seed_series(seed, "fresh", [*FLAT, 125.0, 125.0], wavering={8, 9})
    async with db.sessionmaker() as s:
        await s.execute(
            update(Result)
            .where(Result.run_id.in_(runs[8:]))
            .values(ci_low=None, ci_high=None, ci_method=None)
        )
        await s.commit()
    history.clear_cache()
    assert await watcher(db).check([("fresh", *GETPPID)], NOW) == []
    async with db.sessionmaker() as s:  # read, not written: the filler writes it
        assert (await s.scalars(select(Result.ci_method).where(Result.run_id == runs[8]))).one() is None


async def test_a_series_is_checked_once_the_filler_wrote_its_results_cis(db: Db, seed: Seeder) -> None:
    """The watcher holds a series until the CI filler says its new results have their CIs (the step test
    then computes no bootstrap beside ingest), and checks it anyway after AWAIT_CI_MAX_S."""
    runs = await seed_series(seed, "held", [*FLAT, 130.0, 130.0, 130.0])
    db.settings.alert_settle_s = 0.01
    w = watcher(db)
    stored = [
        ResultStored(f"r{i}", "held", run, "item", GETPPID[0], GETPPID[1], "ok", NOW)
        for i, run in enumerate(runs)
    ]
    task = asyncio.create_task(w.run())
    try:
        await asyncio.sleep(0.3)  # the look-back at start checks what it finds recent
        w.checks = 0
        w.results_stored(stored[-2:])
        await asyncio.sleep(0.3)
        assert w.checks == 0  # r9, r10 wait for their CIs
        w.cis_filled(runs[-2], ["r9"])
        await asyncio.sleep(0.3)
        assert w.checks == 0  # r10 still waits
        w.cis_filled(runs[-1], ["r10"])
        await eventually(lambda: checked(w, 1))
        w.results_stored(stored[-1:])
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("ctxbench_server.alerts.watch.AWAIT_CI_MAX_S", 0.2)
            w._wake.set()  # the loop computes its next look with the short wait
            await eventually(lambda: checked(w, 2), within=5)
    finally:
        # awaited: a check cancelled mid-query would hold the rolled-back connection past the test, and
        # its teardown's ROLLBACK would fail, leaving the seeded rows locked for the next test (PostgreSQL)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def checked(w: AlertWatcher, n: int) -> bool:
    return w.checks == n


async def test_old_steps_and_unknown_series_open_none(db: Db, seed: Seeder) -> None:
    await seed_series(seed, "box", [100.0] * 6 + [130.0] * 6)
    w = watcher(db)
    assert await w.check([("box", *GETPPID)], NOW + timedelta(days=30)) == []  # older than 14 days
    assert await w.check([("nobody", "syscall.getppid", ""), ("box", "ctxsw.pipe", "")], NOW) == []
    assert w.checks == 3


@pytest.fixture
async def api_seed(server: CtxbenchServer) -> Seeder:
    s = Seeder(server.sessionmaker)
    await s.kernels()
    return s


async def open_one(server: CtxbenchServer, seed: Seeder) -> str:
    await seed_series(seed, "box", [100.0] * 6 + [130.0] * 6, 6)
    [a] = await server.alerts.check([("box", *GETPPID)], NOW)
    return a.id


async def test_rest_states_filters_and_errors(
    http: httpx.AsyncClient, anon: httpx.AsyncClient, server: CtxbenchServer, api_seed: Seeder
) -> None:
    aid = await open_one(server, api_seed)
    r = await http.get("/api/v1/alerts", params={"state": "open"})
    assert r.status_code == 200, r.text
    [a] = r.json()
    assert a["id"] == aid and a["machine_name"] == "box" and a["kernel"] == "syscall.getppid"
    assert (
        a["summary"].startswith("syscall.getppid +3") and "governor: powersave → performance" in a["summary"]
    )
    assert a["facts_changed"][0]["fact"] == "governor" and a["significance"]["runs"] == [6, 6]
    assert (await http.get("/api/v1/alerts/counts")).json() == {"open": 1, "acknowledged": 0, "resolved": 0}
    for params in ({"machine": "other"}, {"kernel": "ctxsw.pipe"}, {"state": "resolved"}):
        assert (await http.get("/api/v1/alerts", params=params)).json() == []
    assert (
        await http.get("/api/v1/alerts", params={"machine": "box,other", "kernel": "syscall.getppid"})
    ).json()

    assert (await anon.post(f"/api/v1/alerts/{aid}/ack")).status_code == 401
    r = await http.post(f"/api/v1/alerts/{aid}/ack")
    assert r.status_code == 200 and r.json()["state"] == "acknowledged"
    acked = r.json()
    assert acked["acknowledged_by"] and acked["acknowledged_at"]
    again = (await http.post(f"/api/v1/alerts/{aid}/ack")).json()  # no change: the first who and when stay
    assert again["acknowledged_at"] == acked["acknowledged_at"]
    r = await http.patch(f"/api/v1/alerts/{aid}", json={"state": "resolved", "note": "governor fixed"})
    assert r.status_code == 200 and r.json()["state"] == "resolved" and r.json()["note"] == "governor fixed"
    assert r.json()["resolved_by"] and r.json()["resolved_at"]
    r = await http.post(f"/api/v1/alerts/{aid}/ack")
    assert r.status_code == 409 and "resolved" in r.json()["detail"]
    assert (await http.get(f"/api/v1/alerts/{aid}")).json()["state"] == "resolved"
    assert (await http.get("/api/v1/alerts/counts")).json() == {"open": 0, "acknowledged": 0, "resolved": 1}

    for body, loc in (
        ({"state": "closed"}, ["body", "state"]),
        ({"note": "x" * 4001}, ["body", "note"]),
        ({"colour": "red"}, ["body", "colour"]),
    ):
        r = await http.patch(f"/api/v1/alerts/{aid}", json=body)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == loc, r.text
    r = await http.get("/api/v1/alerts", params={"state": "closed"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][:2] == ["query", "state"]
    assert (await http.get("/api/v1/alerts", params={"limit": 0})).status_code == 422
    assert (await http.get("/api/v1/alerts/nope")).status_code == 404
    assert (await http.post("/api/v1/alerts/nope/resolve")).status_code == 404
    # a resolved step never opens again
    assert await server.alerts.check([("box", *GETPPID)], NOW) == []


@pytest.mark.parametrize("settings_overrides", [{"alert_settle_s": 0.05}])
async def test_agent_reports_open_an_alert(
    http: httpx.AsyncClient, server: CtxbenchServer, make_agent: Callable[..., FakeAgent]
) -> None:
    """Real reports over gRPC: the "result stored" event queues the series, the watcher finds the step."""
    agent = make_agent(name="stepper")
    await agent.connect()
    for i in range(8):
        run = await post(http, {"machine_id": agent.agent_id, "items": [{"kernel": "ctxsw.pipe"}]})
        start = (await agent.expect("start_run")).start_run
        assert start.run_id == run["id"]
        await agent.report(start.run_id, start.items[0], samples=spread(100.0 if i < 4 else 160.0, n=12))

    async def opened() -> bool:
        async with server.sessionmaker() as s:
            return bool(await s.scalar(select(func.count()).select_from(Alert)))

    await eventually(opened, within=10)
    [a] = (await http.get("/api/v1/alerts")).json()
    assert a["machine_id"] == agent.agent_id and a["kernel"] == "ctxsw.pipe" and a["ratio"] > 1.5


async def test_the_watcher_stops_when_cancelled_as_it_is_woken(db: Db) -> None:
    """The server's stop cancels the watcher and waits for it: a cancel that comes as the event is set
    (a result or a CI filled at that moment) ends it all the same, every time."""
    for _ in range(20):
        w = watcher(db)
        w._pending.add(("m", *GETPPID))
        w._awaiting["r"] = (("m", *GETPPID), 0.0)
        task = asyncio.create_task(w.run())
        await asyncio.sleep(0.01)
        w.cis_filled("run", ["x"])  # sets the event
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)
