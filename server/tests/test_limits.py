"""GET /limits serves the tables the server enforces: a client that reads it predicts exactly what POST
/runs accepts."""

from __future__ import annotations

import httpx

from ctxbench_server.runs import schemas as runs


async def test_profiles_and_budgets_are_the_enforced_ones(http: httpx.AsyncClient) -> None:
    r = await http.get("/api/v1/limits")
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body["profiles"]) == set(runs.PROFILES) and body["default_profile"] in body["profiles"]
    for name, p in runs.PROFILES.items():
        assert body["profiles"][name] == {
            "min_time_s": p.min_time_s,
            "repetitions": p.repetitions,
            "launches": p.launches,
            "thin_sweeps": p.thin_sweeps,
        }
    assert body["max_items_per_run"] == runs.MAX_ITEMS
    assert body["max_sweep_values"] == runs.MAX_SWEEP_VALUES


async def test_a_sweep_one_value_over_the_served_budget_is_refused(http: httpx.AsyncClient) -> None:
    """The served figure is the real edge: one more sweep value than /limits says is a 422 naming it."""
    limit = (await http.get("/api/v1/limits")).json()["max_sweep_values"]
    body = {
        "machine_id": "any",
        "items": [{"kernel": "sched.yield", "sweep": {"threads": list(range(1, limit + 2))}}],
    }
    r = await http.post("/api/v1/runs", json=body)
    assert r.status_code == 422
    assert any(e["loc"][-1] == "threads" or "threads" in map(str, e["loc"]) for e in r.json()["detail"]), (
        r.text
    )
