"""GET /compare served in-process on the migrated, rolled-back database: selection, ratio statistics,
facts, errors, SQL cost."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from ctxbench_server.compare import service, significance
from ctxbench_server.compare.schemas import CompareOut

from .compare_helpers import FACTS, Seeder, assert_declared, spread
from .conftest import RolledBack


@pytest.fixture
async def seed(rolled_back: RolledBack) -> AsyncIterator[Seeder]:
    s = Seeder(rolled_back.sessionmaker)
    await s.kernels()
    yield s


async def get(http: httpx.AsyncClient, status: int = 200, **q: str) -> Any:
    r = await http.get("/api/v1/compare", params=q)
    assert r.status_code == status, r.text
    body = r.json()
    if status == 200:
        assert_declared(body)
    return body


def row(body: dict[str, Any], kernel: str, params_key: str = "") -> dict[str, Any]:
    [hit] = [r for r in body["rows"] if r["kernel"] == kernel and r["params_key"] == params_key]
    return hit


async def test_latest_result_per_machine_and_point(api: httpx.AsyncClient, seed: Seeder) -> None:
    a, b = await seed.machine("a"), await seed.machine("b")
    ra1, rb1 = await seed.run(a), await seed.run(b)
    old = await seed.result(ra1, a, "syscall.getppid", spread(100))
    ra2 = await seed.run(a)
    new = await seed.result(ra2, a, "syscall.getppid", spread(110))
    await seed.result(ra2, a, "syscall.getppid", [], status="failed")  # failures never count
    b1 = await seed.result(rb1, b, "syscall.getppid", spread(200))
    body = await get(api, machines="a,b")
    assert body["baseline"] == "a"
    assert [m["id"] for m in body["machines"]] == ["a", "b"]
    r = row(body, "syscall.getppid")
    assert r["cells"]["a"]["result_id"] == new and r["cells"]["a"]["run_id"] == ra2
    assert r["cells"]["b"]["result_id"] == b1
    assert r["cells"]["a"]["median"] == pytest.approx(110) and r["cells"]["a"]["n"] == 10
    assert len(r["cells"]["a"]["samples"]) == 10 and r["cells"]["a"]["created_at"].endswith("Z")
    assert r["seed_reference"]["seed"] == "000" and r["family"] == "syscall"
    assert r["higher_is_better"] is False
    assert r["ratios"]["a"]["ratio"] == 1.0
    assert r["ratios"]["b"]["ratio"] == pytest.approx(200 / 110)
    assert sorted(body["result_ids"]) == sorted([new, b1]) and old not in body["result_ids"]

    # runs= restricts a machine with picked runs to them; the others keep their latest
    body = await get(api, machines="a,b", runs=ra1)
    assert row(body, "syscall.getppid")["cells"]["a"]["result_id"] == old
    assert row(body, "syscall.getppid")["cells"]["b"]["result_id"] == b1


async def test_batch_restricts_and_names_machines(api: httpx.AsyncClient, seed: Seeder) -> None:
    a, b = await seed.machine("a"), await seed.machine("b")
    ra, rb = await seed.run(a, batch="B1"), await seed.run(b, batch="B1")
    in_a = await seed.result(ra, a, "ctxsw.pipe", spread(1000))
    in_b = await seed.result(rb, b, "ctxsw.pipe", spread(1500))
    later = await seed.result(await seed.run(a), a, "ctxsw.pipe", spread(900))  # outside the batch
    body = await get(api, batch="B1")  # the batch names its machines
    assert [m["id"] for m in body["machines"]] == ["a", "b"]
    assert row(body, "ctxsw.pipe")["cells"]["a"]["result_id"] == in_a
    assert body["result_ids"] == sorted([in_a, in_b])
    assert (await get(api, machines="a,b"))["rows"][0]["cells"]["a"]["result_id"] == later
    await get(api, 422, machines="a,b", batch="nope")


async def test_ratio_statistics(
    api: httpx.AsyncClient, seed: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rule at the fallback floor (5 %), whatever floors `make bench` measured (noise_floors.json).
    monkeypatch.setattr(significance, "FLOORS", significance.Floors({}, {}, significance.FALLBACK_NOISE))
    a, b, c = await seed.machine("a"), await seed.machine("b"), await seed.machine("c")
    ra, rb, rc = await seed.run(a), await seed.run(b), await seed.run(c)
    same = spread(100, width=0.05)
    await seed.result(ra, a, "syscall.getppid", same)
    await seed.result(rb, b, "syscall.getppid", same)  # identical sample sets
    await seed.result(rc, c, "syscall.getppid", spread(130))  # clearly shifted, n = 10
    await seed.result(ra, a, "ctxsw.pipe", spread(1000, n=4))
    await seed.result(rb, b, "ctxsw.pipe", spread(2000, n=4))  # n < 5: no test
    body = await get(api, machines="a,b,c")
    r = row(body, "syscall.getppid")["ratios"]
    assert r["b"]["ratio"] == 1.0 and r["b"]["ci_low"] <= 1 <= r["b"]["ci_high"]
    assert r["b"]["p_value"] is None and r["b"]["significant"] is False  # Mann-Whitney U is gone
    assert r["b"]["significance"]["rule"] == "ci_includes_1"
    assert r["c"]["ratio"] == pytest.approx(1.3) and r["c"]["significant"] is True
    assert 1 < r["c"]["ci_low"] <= 1.3 <= r["c"]["ci_high"]
    # results from before launches: one launch of 10 samples, the family's default noise, doubled
    assert r["c"]["significance"] == {
        "significant": True,
        "rule": "ci_excludes_noise",
        "noise": significance.ONE_LAUNCH_FACTOR * significance.default_noise("syscall.getppid", "syscall"),
        "noise_source": "default",
        "ci_level": 0.95,
        "n_launches": [1, 1],
    }
    assert r["c"]["ci_kind"] == "bootstrap95"  # 10 samples of one launch: 10 units
    small = row(body, "ctxsw.pipe")["ratios"]["b"]
    assert small["ratio"] == pytest.approx(2.0) and small["significant"] is False
    assert small["significance"]["rule"] == "too_few_launches"
    assert small["ci_kind"] == "bootstrap_few_launches"
    four = spread(1000, n=4)
    cell = row(body, "ctxsw.pipe")["cells"]["a"]  # 4 samples: no 95 % interval, and it says so
    assert cell["ci_kind"] == "minmax" and (cell["ci_low"], cell["ci_high"]) == (min(four), max(four))
    assert "c" not in row(body, "ctxsw.pipe")["ratios"]  # no cell, no ratio

    # the bootstrap is seeded by the result ids: recomputed without the cache, the same numbers
    service.clear_caches()
    assert (await get(api, machines="a,b,c"))["rows"] == body["rows"]


async def test_geomean_units_and_direction(api: httpx.AsyncClient, seed: Seeder) -> None:
    a, b = await seed.machine("a"), await seed.machine("b")
    ra, rb = await seed.run(a), await seed.run(b)
    for kernel, base, other in (
        ("syscall.getppid", 100, 200),
        ("syscall.open_close", 100, 50),
        ("ctxsw.pipe", 1000, 4000),
        ("storage.write", 1000, 500),  # MB/s: half the throughput is twice as slow
    ):
        await seed.result(ra, a, kernel, spread(base))
        await seed.result(rb, b, kernel, spread(other))
    await seed.result(ra, a, "syscall.getppid", spread(10), params={"threads": 2})
    await seed.result(rb, b, "syscall.getppid", spread(10), params={"threads": 2}, unit="us/op")
    body = await get(api, machines="a,b", kernels="syscall.*,ctxsw.pipe,storage.write")
    assert row(body, "storage.write")["higher_is_better"] is True
    assert row(body, "storage.write")["ratios"]["b"]["ratio"] == pytest.approx(0.5)
    mismatch = row(body, "syscall.getppid", "threads=2")
    assert mismatch["ratios"] == {} and mismatch["units"] == {"a": "ns/op", "b": "us/op"}
    assert mismatch["warning"] and "threads=2" in mismatch["warning"]
    [w] = body["warnings"]
    assert w["kernel"] == "syscall.getppid" and w["params_key"] == "threads=2"
    CompareOut.model_validate(body)  # the answer is what its OpenAPI schema says, warnings included
    # geomean of 2, 0.5, 4 and 1/0.5 (the mismatched row left out)
    assert body["geomean"]["b"] == pytest.approx((2 * 0.5 * 4 * 2) ** 0.25)
    assert body["geomean"]["a"] == pytest.approx(1.0)
    assert body["geomean_by_family"]["syscall"]["b"] == pytest.approx(1.0)
    assert body["geomean_by_family"]["ctxsw"]["b"] == pytest.approx(4.0)
    assert body["geomean_by_family"]["storage"]["b"] == pytest.approx(2.0)
    only = await get(api, machines="a,b", kernels="ctxsw.*")
    assert [r["kernel"] for r in only["rows"]] == ["ctxsw.pipe"]


async def test_facts_diff_uses_run_snapshots(api: httpx.AsyncClient, seed: Seeder) -> None:
    a = await seed.machine("a")
    b = await seed.machine("b", clocksource="kvm-clock", virtualization="kvm")
    vulns = {**FACTS["vulnerabilities"], "spectre_v2": "Vulnerable"}
    snap = {"clocksource": "tsc", "virtualization": "kvm", "vulnerabilities": vulns}
    rb = await seed.run(b, facts={**FACTS, "hostname": "b", **snap, "extra": {"timer_slack_ns": "1"}})
    await seed.result(await seed.run(a), a, "ctxsw.pipe", spread(10))
    await seed.result(rb, b, "ctxsw.pipe", spread(10))
    body = await get(api, machines="a,b")
    diff = {d["fact"]: d for d in body["facts_diff"]}
    # b's run snapshot (tsc) is used, not its current facts (kvm-clock); hostname and cpu_mhz never count
    assert list(diff) == ["virtualization", "vulnerabilities.spectre_v2", "extra.timer_slack_ns"]
    assert diff["virtualization"]["values"] == {"a": "none", "b": "kvm"}
    assert "hypervisor" in diff["virtualization"]["hint"]
    assert "mitigations" in diff["vulnerabilities.spectre_v2"]["hint"]
    assert "usleep" in diff["extra.timer_slack_ns"]["hint"]
    assert body["machines"][1]["facts_run_id"] == rb and body["machines"][0]["facts_run_id"] is None


async def test_errors_name_what_is_wrong(api: httpx.AsyncClient, seed: Seeder) -> None:
    await seed.machine("a")
    await seed.machine("b")
    r = await api.get("/api/v1/compare", params={"machines": "a,ghost"})
    assert r.status_code == 404 and "ghost" in r.json()["detail"]
    [e] = (await get(api, 422, machines="a,b", kernels="syscall.getppid,nope"))["detail"]
    assert e["loc"] == ["query", "kernels", 1] and "nope" in e["msg"] and e["type"] == "unknown_kernel"
    [e] = (await get(api, 422, machines="a,b", kernels="zzz.*"))["detail"]
    assert e["loc"] == ["query", "kernels", 0] and "zzz" in e["msg"]
    [e] = (await get(api, 422, machines="a,b", baseline="c"))["detail"]
    assert e["loc"] == ["query", "baseline"]
    [e] = (await get(api, 422))["detail"]
    assert e["loc"] == ["query", "machines"]
    [e] = (await get(api, 422, machines=",".join(f"m{i}" for i in range(21))))["detail"]
    assert e["loc"] == ["query", "machines"]
    [e] = (await get(api, 422, machines="a,b", runs="no-such-run"))["detail"]
    assert e["loc"] == ["query", "runs", 0] and "no-such-run" in e["msg"]
    assert (await get(api, machines="a,b"))["rows"] == []


@contextmanager
def count_statements(engine: AsyncEngine) -> Iterator[list[str]]:
    seen: list[str] = []

    def on(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "SAVEPOINT" not in statement:  # the rolled-back layer's own, not the request's
            seen.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", on)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", on)


async def test_sql_statements_do_not_grow(
    api: httpx.AsyncClient, seed: Seeder, rolled_back: RolledBack
) -> None:
    machines = [await seed.machine(f"m{i}") for i in range(10)]
    for m in machines:
        rid = await seed.run(m, batch="B")
        for t in range(1, 26):
            for kernel in ("syscall.getppid", "ctxsw.pipe"):
                await seed.result(rid, m, kernel, spread(100 + t, n=5), params={"threads": t})

    async def statements(**q: str) -> int:
        with count_statements(rolled_back.engine) as seen:
            body = await get(api, **q)
        assert body["rows"]
        return len(seen)

    two = await statements(machines="m0,m1", kernels="syscall.getppid")
    ten = await statements(machines=",".join(machines), kernels="syscall.getppid,ctxsw.pipe")
    assert len((await get(api, machines=",".join(machines)))["rows"]) == 50
    assert two == ten <= 6
    assert await statements(machines="m0,m1", batch="B") == await statements(
        machines=",".join(machines), batch="B"
    )


def launched(
    center: float, shifts: tuple[float, ...] = (0.0, 0.01, -0.01), per: int = 2
) -> tuple[list[float], list[int]]:
    """Samples of len(shifts) launches (each launch shifted by its share), `per` samples each."""
    samples, launches = [], []
    for i, shift in enumerate(shifts):
        samples += [center * (1 + shift) * (1 + 0.002 * j) for j in range(per)]
        launches += [i] * per
    return samples, launches


async def test_significance_says_which_rule_and_learns_noise_from_runs(
    api: httpx.AsyncClient, seed: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(significance, "FLOORS", significance.Floors({}, {}, significance.FALLBACK_NOISE))
    a, b, c = await seed.machine("a"), await seed.machine("b"), await seed.machine("c")
    # a's runs of the point are 4 % apart (medians 100, 104, 100), b's and c's under 1 %; b is 2 %
    # slower than a's latest (its CI excludes 1, but not a's 4 %), c 25 %
    for m, centers in ((a, (100.0, 104.0, 100.0)), (b, (101.8, 101.9, 102.0)), (c, (124.0, 125.0, 124.5))):
        for center in centers:
            x, lx = launched(center)
            await seed.result(await seed.run(m), m, "syscall.getppid", x, sample_launches=lx)
    body = await get(api, machines="a,b,c")
    r = row(body, "syscall.getppid")
    assert r["cells"]["a"]["n_launches"] == 3 and r["cells"]["a"]["ci_kind"] == "minmax"
    within, slower = r["ratios"]["b"], r["ratios"]["c"]
    assert within["ci_low"] > 1 and within["significant"] is False
    assert within["significance"]["rule"] == "within_noise"
    assert within["significance"]["noise"] == pytest.approx(0.04)
    assert within["significance"]["noise_source"] == "runs" and within["significance"]["n_launches"] == [3, 3]
    assert within["ci_kind"] == "bootstrap_few_launches"  # 3 launches a side: not a 95 % interval
    assert slower["significant"] is True and slower["significance"]["rule"] == "ci_excludes_noise"
    assert slower["ci_low"] > 1.04

    # a machine without 3 runs of the point: the default noise, unless a learned one is larger
    d = await seed.machine("d")
    x, lx = launched(102.0)
    await seed.result(await seed.run(d), d, "syscall.getppid", x, sample_launches=lx)
    r = row(await get(api, machines="d,b,a"), "syscall.getppid")["ratios"]
    assert r["b"]["significance"]["noise_source"] == "default" and r["b"]["significance"]["noise"] == 0.05
    assert r["a"]["significance"]["noise"] == 0.05  # a's 4 % < the default 5 %


async def test_noise_is_learned_from_runs_of_the_same_kind_of_sample(
    api: httpx.AsyncClient, seed: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine's long-sample runs (before issue 24) measured the host's load too: they do not make its
    short-sample runs look noisy (nor the other way round)."""
    monkeypatch.setattr(significance, "FLOORS", significance.Floors({}, {}, significance.FALLBACK_NOISE))
    a, b = await seed.machine("a"), await seed.machine("b")
    for center in (150.0, 190.0):  # long samples: 27 % apart
        x, lx = launched(center)
        await seed.result(await seed.run(a), a, "syscall.getppid", x, sample_launches=lx)
    for m, centers in ((a, (100.0, 100.5, 100.2)), (b, (110.0, 110.4, 110.2))):  # short: under 1 % apart
        for center in centers:
            x, lx = launched(center)
            await seed.result(await seed.run(m), m, "syscall.getppid", x, sample_launches=lx, estimator="p5")
    rr = row(await get(api, machines="a,b"), "syscall.getppid")["ratios"]["b"]
    assert rr["significance"]["noise_source"] == "runs"
    assert rr["significance"]["noise"] < 0.02  # the long runs' 27 % would have hidden b's 10 %
    assert rr["significant"] is True


async def test_one_launch_results_compare_with_launched_ones(api: httpx.AsyncClient, seed: Seeder) -> None:
    a, b = await seed.machine("a"), await seed.machine("b")
    await seed.result(await seed.run(a), a, "ctxsw.pipe", spread(1000, n=6))  # before launches
    x, lx = launched(2000.0)
    await seed.result(await seed.run(b), b, "ctxsw.pipe", x, sample_launches=lx)
    r = row(await get(api, machines="a,b"), "ctxsw.pipe")
    assert r["cells"]["a"]["n_launches"] == 1 and r["cells"]["a"]["ci_kind"] == "bootstrap95"
    rr = r["ratios"]["b"]
    assert rr["ratio"] == pytest.approx(2.0, rel=0.01) and rr["significant"] is True
    assert rr["significance"]["n_launches"] == [3, 1]
