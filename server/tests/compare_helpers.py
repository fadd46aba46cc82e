"""Direct inserts through the models for the compare tests (the math needs chosen samples, not agents)."""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server.compare import latest
from ctxbench_server.compare.schemas import CompareOut
from ctxbench_server.models import Kernel, Machine, Result, Run, RunItem
from ctxbench_server.stats import figure
from ctxbench_server.stats import summary as stats

FACTS: dict[str, Any] = {
    "hostname": "h",
    "cpu_model": "Test CPU",
    "logical_cpus": 4,
    "physical_cores": 2,
    "smt_active": True,
    "memory_bytes": 2**34,
    "kernel_release": "6.1.0",
    "os_release": "Debian 12",
    "governor": "performance",
    "boost": "on",
    "clocksource": "tsc",
    "virtualization": "none",
    "caches": {"L1d": "32K", "L2": "1024K"},
    "vulnerabilities": {"spectre_v2": "Mitigation: Retpolines", "meltdown": "Not affected"},
    "extra": {"timer_slack_ns": "50000", "cpu_mhz": "2000"},
    "load_average": [0.1, 0.2, 0.3],
}

KERNELS: dict[str, dict[str, Any]] = {
    "syscall.getppid": {
        "id": "syscall.getppid",
        "title": "getppid",
        "family": "syscall",
        "unit": "ns/op",
        "params": [],
        "seed_reference": {"seed": "000", "value": 49.47, "unit": "ns/op", "machine": "Pentium G2030"},
    },
    "syscall.open_close": {"id": "syscall.open_close", "family": "syscall", "unit": "ns/op", "params": []},
    "ctxsw.pipe": {"id": "ctxsw.pipe", "family": "ctxsw", "unit": "ns/op", "params": []},
    "storage.write": {"id": "storage.write", "family": "storage", "unit": "MB/s", "params": []},
}

T0 = datetime(2026, 11, 1, tzinfo=UTC)


class Seeder:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self.sm = sessionmaker
        self.clock = T0
        self.items = 0
        # Ids from the test's own name: the bootstrap is seeded by result id, so a test sees the same
        # intervals on every run (random ids made borderline assertions flaky), and ids never repeat
        # across tests (compare caches by result id for the whole process).
        self.namespace = os.environ.get("PYTEST_CURRENT_TEST", str(uuid.uuid4())).rsplit(" ", 1)[0]
        self.ids = 0

    def new_id(self) -> str:
        self.ids += 1
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"ctxbench-test:{self.namespace}/{self.ids}"))

    def tick(self) -> datetime:
        self.clock += timedelta(seconds=1)
        return self.clock

    async def kernels(self) -> None:
        async with self.sm() as s:
            s.add_all(Kernel(id=k, spec=spec) for k, spec in KERNELS.items())
            await s.commit()

    async def machine(self, mid: str, **facts: Any) -> str:
        async with self.sm() as s:
            s.add(Machine(id=mid, name=mid, hostname=mid, facts={**FACTS, "hostname": mid, **facts}))
            await s.commit()
        return mid

    async def run(self, mid: str, batch: str | None = None, facts: dict[str, Any] | None = None) -> str:
        rid = self.new_id()
        async with self.sm() as s:
            s.add(
                Run(
                    id=rid,
                    machine_id=mid,
                    batch_id=batch or rid,
                    status="succeeded",
                    spec={},
                    facts=facts,
                    created_at=self.tick(),
                )
            )
            await s.commit()
        return rid

    async def result(
        self,
        run_id: str,
        mid: str,
        kernel: str,
        samples: list[float],
        params: dict[str, Any] | None = None,
        unit: str | None = None,
        status: str = "ok",
        sample_launches: list[int] | None = None,
        estimator: str | None = None,
        disturbance: float | None = None,
    ) -> str:
        params = params or {}
        key = "&".join(f"{k}={v}" for k, v in sorted(params.items()))
        res_id = self.new_id()
        async with self.sm() as s:
            self.items += 1
            item = RunItem(id=self.new_id(), run_id=run_id, index=self.items, kernel_id=kernel, params=params)
            s.add(item)
            await s.flush()  # no relationship orders the two inserts
            r = Result(
                id=res_id,
                run_id=run_id,
                item_id=item.id,
                machine_id=mid,
                kernel_id=kernel,
                status=status,
                params=params,
                params_key=key,
                unit=unit if unit is not None else KERNELS[kernel]["unit"],
                samples=samples,
                sample_launches=sample_launches,
                estimator=estimator,
                disturbance=disturbance,
                created_at=self.tick(),
            )
            if status == "ok":
                for k, v in (
                    stats.compute(samples, sample_launches, res_id, figure.quantile_for(estimator))
                    .as_dict()
                    .items()
                ):
                    setattr(r, k, v)
            s.add(r)
            if status == "ok":
                await latest.record(s, r)
            await s.commit()
        return res_id


def spread(center: float, n: int = 10, width: float = 0.02) -> list[float]:
    """n samples evenly spread ±width around center (deterministic)."""
    if n == 1:
        return [center]
    return [center * (1 - width + 2 * width * i / (n - 1)) for i in range(n)]


def assert_declared(body: dict[str, Any]) -> None:
    """The answer is what OpenAPI says: the route renders its JSON by hand (cells pre-serialised), so
    FastAPI never checks it against `CompareOut`; every answer these tests get is checked here instead.
    Validating and dumping again must give the same document: a field missing, mistyped or not declared
    (dropped by the dump) fails."""
    again = CompareOut.model_validate(body).model_dump(mode="json", exclude_unset=True)
    assert _differences(again, body) == []


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}: {'undeclared' if k not in a else 'missing'}" for k in a.keys() ^ b.keys()]
        return out + [d for k in a.keys() & b.keys() for d in _differences(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path}: {b!r} is read as {a!r}"]
