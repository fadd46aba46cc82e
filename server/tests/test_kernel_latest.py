"""GET /kernels/{id}/latest: every machine's latest result of a kernel per point, best first."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from .compare_helpers import Seeder, spread
from .conftest import RolledBack


@pytest.fixture
async def seed(rolled_back: RolledBack) -> AsyncIterator[Seeder]:
    s = Seeder(rolled_back.sessionmaker)
    await s.kernels()
    yield s


async def test_latest_per_machine_ranked(
    api: httpx.AsyncClient, api_anon: httpx.AsyncClient, seed: Seeder
) -> None:
    for m in ("slow", "fast", "mid"):
        await seed.machine(m)
    old = await seed.run("fast")
    await seed.result(old, "fast", "syscall.getppid", spread(500.0))  # replaced by its newer result
    runs = {m: await seed.run(m) for m in ("slow", "fast", "mid")}
    for m, v in (("slow", 300.0), ("fast", 100.0), ("mid", 200.0)):
        await seed.result(runs[m], m, "syscall.getppid", spread(v))
        await seed.result(runs[m], m, "storage.write", spread(v), params={"bytes": 4096})
        await seed.result(runs[m], m, "storage.write", spread(v), params={"bytes": 512})
    await seed.result(runs["mid"], "mid", "syscall.getppid", [], status="failed")  # never ranked

    [point] = (await api.get("/api/v1/kernels/syscall.getppid/latest")).json()
    assert point["params_key"] == "" and point["unit"] == "ns/op" and point["higher_is_better"] is False
    got = [(r["machine_name"], r["median"], r["run_id"]) for r in point["results"]]
    assert got == [
        ("fast", pytest.approx(100.0), runs["fast"]),
        ("mid", pytest.approx(200.0), runs["mid"]),
        ("slow", pytest.approx(300.0), runs["slow"]),
    ]
    assert all(r["ci_low"] < r["median"] < r["ci_high"] for r in point["results"])

    points = (await api.get("/api/v1/kernels/storage.write/latest")).json()
    assert [p["params_key"] for p in points] == ["bytes=512", "bytes=4096"]  # numeric, not text order
    assert points[0]["higher_is_better"] is True  # MB/s: best is highest
    assert [r["machine_name"] for r in points[0]["results"]] == ["slow", "mid", "fast"]

    assert (await api.get("/api/v1/kernels/no.such/latest")).json() == []
    assert (await api_anon.get("/api/v1/kernels/syscall.getppid/latest")).status_code == 401
