"""GET /compare?sides=: sets of runs of one machine as the columns (same-machine A/B), served in-process
on the migrated, rolled-back database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from ctxbench_server.compare import significance

from .compare_helpers import FACTS, Seeder, assert_declared, spread
from .conftest import RolledBack


@pytest.fixture
async def seed(rolled_back: RolledBack) -> AsyncIterator[Seeder]:
    s = Seeder(rolled_back.sessionmaker)
    await s.kernels()
    yield s


async def before_after(seed: Seeder) -> tuple[list[str], list[str]]:
    """Three runs with powersave at 100 ns, three with performance at 130 ns; open_close flat at 500."""
    await seed.machine("box")
    before, after = [], []
    for i in range(6):
        governor = "powersave" if i < 3 else "performance"
        run = await seed.run("box", facts={**FACTS, "hostname": "box", "governor": governor})
        center = (100.0 if i < 3 else 130.0) * (1 + 0.005 * (i % 3))
        await seed.result(run, "box", "syscall.getppid", spread(center), sample_launches=[0, 1, 2] * 4)
        await seed.result(
            run,
            "box",
            "syscall.open_close",
            spread(500.0 * (1 + 0.005 * (i % 3))),
            sample_launches=[0, 1, 2] * 4,
        )
        (before if i < 3 else after).append(run)
    return before, after


def sides(**named: list[str]) -> str:
    return ";".join(f"{label}:{','.join(runs)}" for label, runs in named.items())


async def compare(http: httpx.AsyncClient, status: int = 200, **q: str) -> Any:
    r = await http.get("/api/v1/compare", params=q)
    assert r.status_code == status, r.text
    if status == 200:
        assert_declared(r.json())
    return r.json()


def row(body: dict[str, Any], kernel: str) -> dict[str, Any]:
    [hit] = [r for r in body["rows"] if r["kernel"] == kernel]
    return hit


async def test_before_and_after_on_one_machine(api: httpx.AsyncClient, seed: Seeder) -> None:
    before, after = await before_after(seed)
    body = await compare(api, sides=sides(before=before, after=after))
    assert [(m["id"], m["name"], m["hostname"]) for m in body["machines"]] == [
        ("before", "before", "box"),
        ("after", "after", "box"),
    ]
    assert body["baseline"] == "before"
    r = row(body, "syscall.getppid")
    # each side's cell is its newest run's result
    assert r["cells"]["before"]["run_id"] == before[-1] and r["cells"]["after"]["run_id"] == after[-1]
    ratio = r["ratios"]["after"]
    assert ratio["ratio"] == pytest.approx(1.3, rel=0.01) and ratio["significant"] is True
    # the noise is learned from each side's own three runs (about 1 %), not from the machine's history,
    # which holds the step itself (30 %) and would hide it
    sig = ratio["significance"]
    assert sig["noise_source"] == "runs" and sig["noise"] < 0.02 and sig["rule"] == "ci_excludes_noise"
    flat = row(body, "syscall.open_close")["ratios"]["after"]
    assert flat["ratio"] == pytest.approx(1.0, abs=0.01) and flat["significant"] is False
    # the governor changed between the sides' newest runs
    diff = {d["fact"]: d["values"] for d in body["facts_diff"]}
    assert diff["governor"] == {"before": "powersave", "after": "performance"}
    assert body["machines"][1]["facts_run_id"] == after[-1]
    # baseline and kernel filter work as with machines
    body = await compare(
        api, sides=sides(before=before, after=after), baseline="after", kernels="syscall.getppid"
    )
    assert [r["kernel"] for r in body["rows"]] == ["syscall.getppid"]
    assert body["rows"][0]["ratios"]["before"]["ratio"] == pytest.approx(1 / 1.3, rel=0.01)


async def test_one_run_a_side_uses_the_default_floor(
    api: httpx.AsyncClient, seed: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(significance, "FLOORS", significance.Floors({}, {}, significance.FALLBACK_NOISE))
    before, after = await before_after(seed)
    body = await compare(api, sides=sides(a=before[:1], b=after[:1]))
    sig = row(body, "syscall.getppid")["ratios"]["b"]["significance"]
    assert sig["noise_source"] == "default" and sig["significant"] is True


async def test_sides_errors_name_the_side(api: httpx.AsyncClient, seed: Seeder) -> None:
    before, after = await before_after(seed)

    async def loc(q: dict[str, str]) -> list[Any]:
        return [e["loc"] for e in (await compare(api, 422, **q))["detail"]]

    assert await loc({"sides": sides(a=before)}) == [["query", "sides"]]  # one side
    assert await loc({"sides": f"a:{before[0]};a:{after[0]}"}) == [["query", "sides", 1]]
    assert await loc({"sides": f"a:{before[0]};b:{before[0]}"}) == [["query", "sides", 1]]
    assert await loc({"sides": f"<bad>:{before[0]};b:{after[0]}"}) == [["query", "sides", 0]]
    assert await loc({"sides": f"a:{before[0]};b:"}) == [["query", "sides", 1]]
    assert await loc({"sides": f"a:{before[0]};b:{after[0]},nope"}) == [["query", "sides", 1, "runs", 1]]
    assert await loc({"sides": sides(a=before, b=after), "machines": "box"}) == [["query", "sides"]]
    assert await loc({"sides": sides(a=before, b=after), "baseline": "c"}) == [["query", "baseline"]]


async def test_a_share_freezes_sides(api: httpx.AsyncClient, seed: Seeder) -> None:
    before, after = await before_after(seed)
    created = await api.post("/api/v1/shares", json={"view": {"sides": sides(before=before, after=after)}})
    assert created.status_code == 201, created.text
    share = (await api.get(f"/api/v1/shares/{created.json()['slug']}")).json()
    assert [m["id"] for m in share["compare"]["machines"]] == ["before", "after"]
    assert share["view"]["sides"] == sides(before=before, after=after)
