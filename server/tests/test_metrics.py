"""GET /metrics (issue 28 item 7): the OpenMetrics text read back with prometheus_client's own parser, its
figures checked against what REST says was stored; a read credential; the budget on points. Real server,
real database, real gRPC (tests/fake_agent.py)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from ctxbench_server.metrics import service
from ctxbench_server.metrics.exposition import CONTENT_TYPE, Gauge, render

from .runs_helpers import PIPE, MakeAgent, agents, finish, post

GETPPID = {"kernel": "syscall.getppid", "sweep": {"threads": [1, 2]}}


async def scrape(client: httpx.AsyncClient, **kw: Any) -> dict[str, list[tuple[dict[str, str], float]]]:
    """name -> [(labels, value)], parsed by the reference parser (it refuses malformed text)."""
    r = await client.get("/metrics", **kw)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == CONTENT_TYPE
    assert r.text.endswith("# EOF\n")
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(r.text):
        assert family.type == "gauge", family.name
        out[family.name] = [(s.labels, s.value) for s in family.samples]
    return out


async def run_to_end(http: httpx.AsyncClient, agent: Any, items: list[dict[str, Any]]) -> str:
    run = await post(http, {"machine_id": agent.agent_id, "items": items})
    await finish(agent, (await agent.expect("start_run")).start_run)
    return str(run["id"])


async def test_metrics_report_the_fleet_and_each_points_newest_median(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    busy, idle, gone = await agents(make_agent, 3)
    # a name the format must escape (quotes and a backslash; a newline cannot be in a name)
    await http.patch(f"/api/v1/machines/{busy.agent_id}", json={"name": 'rack "3" \\ left'})
    await run_to_end(http, busy, [GETPPID, PIPE])  # older results of the same points: replaced below
    newest = await run_to_end(http, busy, [GETPPID, PIPE])
    await gone.close()  # offline: its run waits in the queue
    await post(http, {"machine_id": gone.agent_id, "items": [PIPE]})

    got = await scrape(http)
    assert got["ctxbench_agents_online"] == [({}, 2.0)]
    assert dict((lb["status"], v) for lb, v in got["ctxbench_machines"]) == {
        "active": 3.0,
        "pending": 0.0,
        "revoked": 0.0,
    }
    runs = {lb["status"]: v for lb, v in got["ctxbench_runs"]}
    assert runs == {"queued": 1.0, "running": 0.0, "succeeded": 2.0, "failed": 0.0, "cancelled": 0.0}

    results = (await http.get(f"/api/v1/runs/{newest}/results")).json()
    want = {
        (busy.agent_id, 'rack "3" \\ left', r["kernel"], r["params_key"], r["unit"]): r["median"]
        for r in results
    }
    assert len(want) == 3
    medians = {
        (lb["machine_id"], lb["machine"], lb["kernel"], lb["params"], lb["unit"]): v
        for lb, v in got["ctxbench_result_median"]
    }
    assert medians == pytest.approx(want)
    stamps = got["ctxbench_result_timestamp_seconds"]
    assert len(stamps) == 3 and all(v > 1.7e9 for _, v in stamps)
    assert got["ctxbench_result_points_dropped"] == [({}, 0.0)]
    assert idle.agent_id not in {lb["machine_id"] for lb, _ in got["ctxbench_result_median"]}


async def test_metrics_need_a_read_credential(
    make_agent: MakeAgent, http: httpx.AsyncClient, anon: httpx.AsyncClient
) -> None:
    r = await anon.get("/metrics")
    assert r.status_code == 401 and r.json()["detail"]
    assert r.headers["www-authenticate"] == "Bearer"
    secret = (await http.post("/api/v1/tokens", json={"name": "prometheus", "scope": "read"})).json()["token"]
    got = await scrape(anon, headers={"authorization": f"Bearer {secret}"})
    assert got["ctxbench_agents_online"] == [({}, 0.0)]
    assert (await anon.get("/api/v1/metrics")).status_code in (401, 404)  # not under /api/v1


@pytest.mark.parametrize("settings_overrides", [{"public_read": True}])
async def test_public_read_opens_metrics_too(anon: httpx.AsyncClient) -> None:
    assert "ctxbench_machines" in await scrape(anon)


async def test_the_points_are_capped_and_the_rest_counted(
    make_agent: MakeAgent, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    [agent] = await agents(make_agent, 1)
    await run_to_end(http, agent, [GETPPID, PIPE])  # three points
    monkeypatch.setattr(service, "MAX_POINTS", 2)
    got = await scrape(http)
    assert len(got["ctxbench_result_median"]) == 2
    assert len(got["ctxbench_result_timestamp_seconds"]) == 2
    assert got["ctxbench_result_points_dropped"] == [({}, 1.0)]
    # the first points in (machine, kernel, params) order
    assert [lb["kernel"] for lb, _ in got["ctxbench_result_median"]] == ["ctxsw.pipe", "syscall.getppid"]


def test_label_values_and_help_are_escaped_for_the_parser() -> None:
    tricky = 'a "quoted"\\path\nsecond line, ünïcode ✓ {x="y"}'
    g = Gauge("t_value", 'help with \\ and "quotes"\nand a newline')
    g.add(1.5, name=tricky, empty="")
    g.add(float("nan"), name="nan")
    g.add(float("inf"), name="inf")
    g.add(3, name="int")
    text = render([g]).decode()
    [family] = list(text_string_to_metric_families(text))
    assert family.documentation == 'help with \\ and "quotes"\nand a newline'
    assert family.samples[0].labels == {"name": tricky, "empty": ""}
    assert family.samples[0].value == 1.5
    assert str(family.samples[1].value) == "nan" and family.samples[2].value == float("inf")
    assert family.samples[3].value == 3
    # a lone surrogate (from some agent's JSON) cannot fail a scrape
    g2 = Gauge("t_bad", "h")
    g2.add(1, name="bad \udc80 char")
    [family] = list(text_string_to_metric_families(render([g2]).decode()))
    assert family.samples[0].labels["name"] == "bad ? char"
