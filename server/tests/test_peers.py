"""Peers: a machine whose latest figure for a point is far from its hardware class's (median and MAD, at
least 3 peers) is flagged with the facts where it differs from most of the class; one a few per cent
off is not, nor a class too small to judge; the REST filters and their 422s."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ctxbench_server.fleetchanges import peers
from ctxbench_server.main import CtxbenchServer

from .compare_helpers import FACTS, Seeder, spread
from .schedules_helpers import Db, migrated

KERNEL = "syscall.getppid"
CLASS = "Test CPU · 4 CPUs · 16 GiB · 6.1.0"


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Db]:
    async for d in migrated(tmp_path):
        yield d


async def fleet(seed: Seeder, figures: dict[str, float], **facts_of: dict[str, Any]) -> None:
    """One machine of the test class per figure: two runs of getppid, the newest at its figure."""
    await seed.kernels()
    for mid, figure in figures.items():
        facts = {**FACTS, "hostname": mid, **facts_of.get(mid, {})}
        await seed.machine(mid, **facts_of.get(mid, {}))
        for center in (figure * 1.01, figure):
            run = await seed.run(mid, facts=facts)
            await seed.result(run, mid, KERNEL, spread(center), sample_launches=[0, 1] * 5)


async def judge(db: Db, klass: str | None = None, kernels: list[str] | None = None) -> Any:
    async with db.sessionmaker() as s:
        return await peers.outliers(s, klass, kernels or [], 100)


async def test_an_outlier_is_flagged_with_the_facts_that_differ(db: Db) -> None:
    await fleet(
        Seeder(db.sessionmaker),
        {"a": 100.0, "b": 101.0, "c": 99.0, "d": 100.0, "slow": 131.0},
        slow={
            "governor": "powersave",
            "vulnerabilities": {"spectre_v2": "Vulnerable", "meltdown": "Not affected"},
        },
    )
    got = await judge(db)
    assert got.points == 1 and not got.truncated
    [o] = got.outliers
    assert o.machine_id == "slow" and o.hardware_class == CLASS and o.peers == 4
    assert o.ratio == pytest.approx(1.31, rel=0.01) and o.score > peers.THRESHOLD
    assert [(f.fact, f.value, f.majority, f.majority_count, f.reporting) for f in o.facts_differ] == [
        ("governor", "powersave", "performance", 4, 5),
        ("vulnerabilities.spectre_v2", "Vulnerable", "Mitigation: Retpolines", 4, 5),
    ]
    assert o.summary.startswith(f"{KERNEL} on slow: +31.0 % against the median of its 4 peers ({CLASS})")
    assert "governor powersave (4 of 5: performance)" in o.summary
    # the class filter: this class finds it, another none
    assert [x.machine_id for x in (await judge(db, klass=CLASS)).outliers] == ["slow"]
    assert (await judge(db, klass="Other CPU")).outliers == []
    assert (await judge(db, kernels=["ctxsw.pipe"])).points == 0


async def test_a_machine_a_few_per_cent_off_is_not_an_outlier(db: Db) -> None:
    await fleet(Seeder(db.sessionmaker), {"a": 100.0, "b": 101.0, "c": 99.0, "d": 100.5, "e": 104.0})
    got = await judge(db)
    assert got.points == 1 and got.outliers == []


async def test_other_classes_are_not_peers_and_too_few_are_not_judged(db: Db) -> None:
    # "big" has another CPU: its own class of one, never compared with the test class
    await fleet(
        Seeder(db.sessionmaker),
        {"a": 100.0, "b": 101.0, "c": 99.0, "d": 100.0, "big": 300.0},
        big={"cpu_model": "Big CPU"},
    )
    got = await judge(db)
    assert got.points == 1 and got.outliers == []


async def test_three_machines_are_too_few(db: Db) -> None:
    await fleet(Seeder(db.sessionmaker), {"a": 100.0, "b": 100.0, "slow": 200.0})
    got = await judge(db)
    assert got.points == 0 and got.outliers == []


@pytest.fixture
async def api_seed(server: CtxbenchServer) -> Seeder:
    return Seeder(server.sessionmaker)


async def test_rest_filters_and_budgets(
    http: httpx.AsyncClient, anon: httpx.AsyncClient, api_seed: Seeder
) -> None:
    await fleet(
        api_seed,
        {"a": 100.0, "b": 101.0, "c": 99.0, "d": 100.0, "slow": 131.0},
        slow={"governor": "powersave"},
    )
    assert (await anon.get("/api/v1/peers")).status_code == 401
    r = await http.get("/api/v1/peers")
    assert r.status_code == 200, r.text
    [o] = r.json()["outliers"]
    assert o["machine_name"] == "slow" and o["facts_differ"][0]["fact"] == "governor"
    assert (await http.get("/api/v1/peers", params={"class": CLASS, "kernel": KERNEL})).json()["outliers"]
    assert (await http.get("/api/v1/peers", params={"class": "nope"})).json()["outliers"] == []
    many = ",".join(f"k.{i}" for i in range(51))
    for params, loc in (
        ({"limit": 0}, ["query", "limit"]),
        ({"limit": 501}, ["query", "limit"]),
        ({"class": "x" * 401}, ["query", "class"]),
        ({"kernel": many}, ["query", "kernel"]),
        ({"kernel": "k" * 4001}, ["query", "kernel"]),
    ):
        r = await http.get("/api/v1/peers", params=params)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == loc, (params, r.text)
