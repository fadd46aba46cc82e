"""GET /limits serves the tables the server enforces: a client that reads it predicts exactly what POST
/runs accepts."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from ctxbench_server.contract import schema as contract
from ctxbench_server.runs import expand
from ctxbench_server.runs import schemas as runs

CONTRACT = Path(__file__).resolve().parents[2] / "kernels" / "contract" / "kernel-cli.schema.json"


async def test_profiles_and_budgets_are_the_enforced_ones(api: httpx.AsyncClient) -> None:
    r = await api.get("/api/v1/limits")
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body["profiles"]) == set(runs.PROFILES) and body["default_profile"] in body["profiles"]
    for name, p in runs.PROFILES.items():
        assert body["profiles"][name] == {
            "min_time_s": p.min_time_s,
            "repetitions": p.repetitions,
            "launches": p.launches,
            "thin_sweeps": p.thin_sweeps,
            "sample_time_s": p.sample_time_s,
        }
    assert body["max_items_per_run"] == runs.MAX_ITEMS
    assert body["max_sweep_values"] == runs.MAX_SWEEP_VALUES


async def test_a_sweep_one_value_over_the_served_budget_is_refused(api: httpx.AsyncClient) -> None:
    """The served figure is the real edge: one more sweep value than /limits says is a 422 naming it."""
    limit = (await api.get("/api/v1/limits")).json()["max_sweep_values"]
    body = {
        "machine_id": "any",
        "items": [{"kernel": "sched.yield", "sweep": {"threads": list(range(1, limit + 2))}}],
    }
    r = await api.post("/api/v1/runs", json=body)
    assert r.status_code == 422
    assert any(e["loc"][-1] == "threads" or "threads" in map(str, e["loc"]) for e in r.json()["detail"]), (
        r.text
    )


async def test_the_kernel_defaults_are_the_kernel_contracts(api: httpx.AsyncClient) -> None:
    """One source: the contract's `options` defaults, as the package's copy (make gen) has them, served and
    used by the server's own run-time estimate."""
    options = json.loads(CONTRACT.read_text())["$defs"]["options"]["properties"]
    assert contract.SCHEMA == json.loads(CONTRACT.read_text())  # the copy is the contract (gen-check)
    body = (await api.get("/api/v1/limits")).json()
    assert body["kernel_defaults"] == {
        "min_time_s": options["min_time_s"]["default"],
        "repetitions": options["repetitions"]["default"],
    }
    assert expand.KERNEL_DEFAULT_MIN_TIME_S == options["min_time_s"]["default"]
