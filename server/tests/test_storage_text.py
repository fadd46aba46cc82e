"""Text that SQLite stores and PostgreSQL refuses: NUL characters and strings longer than their VARCHAR.

Every test here runs on both backends (scripts/with-postgres.sh runs the suite on PostgreSQL): what an
agent reports is kept, cleaned the same way on both; what a request sends is a 4xx on both, never a 500.
"""

from __future__ import annotations

import httpx
import pytest

from ctxbench_server.contract.params import MAX_PARAMS_KEY, params_key
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.models import Result

from .fake_agent import fake_catalog
from .runs_helpers import PIPE, MakeAgent, get_run, post


async def test_agent_text_with_nul_or_over_long_is_kept_cleaned(
    http: httpx.AsyncClient, make_agent: MakeAgent
) -> None:
    kernels = [*fake_catalog(), pb.KernelSpec(id="k" * 300, title="t\x00", unit="ns/op")]
    agent = make_agent(name="host\x00" + "n" * 300, kernels=kernels)
    await agent.connect()
    machine = (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()
    assert machine["name"].startswith("host\ufffdnnn") and machine["name"].endswith("\u2026")
    assert len(machine["name"]) == 255
    assert sorted(machine["kernels"]) == ["ctxsw.pipe", "syscall.getppid"]  # a 300-char id is skipped

    await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    start = (await agent.expect("start_run")).start_run
    req = agent.result(start.run_id, start.items[0], status=pb.RESULT_STATUS_FAILED, error="crashed\x00!")
    req.result_report.stderr_tail = "core\x00dumped"
    await agent.send(req)
    assert (await agent.expect("result_ack")).result_ack.result_id == req.result_report.result_id
    run = await get_run(http, start.run_id)
    assert run["status"] == "failed"
    assert run["items"][0]["error"] == "crashed\ufffd!"


async def test_a_long_string_param_gets_a_bounded_params_key(
    http: httpx.AsyncClient, make_agent: MakeAgent
) -> None:
    agent = make_agent()
    await agent.connect()
    long_dir = "/tmp/" + "d" * 1000  # the longest a string param may be: 1024
    await post(
        http,
        {"machine_id": agent.agent_id, "items": [{"kernel": "syscall.getppid", "params": {"dir": long_dir}}]},
    )
    start = (await agent.expect("start_run")).start_run
    await agent.report(start.run_id, start.items[0])
    (result,) = (await http.get(f"/api/v1/runs/{start.run_id}/results")).json()
    assert result["params"]["dir"] == long_dir
    key = result["params_key"]
    assert len(key) == MAX_PARAMS_KEY == Result.__table__.c.params_key.type.length  # type: ignore[attr-defined]
    assert key.startswith("dir=/tmp/ddd") and "\u2026#sha256:" in key
    r = await http.get("/api/v1/compare", params={"machines": agent.agent_id})
    assert r.status_code == 200, r.text


def test_params_key_is_stable_and_distinct_when_bounded() -> None:
    a, b = {"dir": "x" * 2000}, {"dir": "x" * 1999 + "y"}
    assert params_key(None, a) == params_key(None, dict(a))
    assert params_key(None, a) != params_key(None, b)
    assert "\x00" not in params_key(None, {"dir": "a\x00b"})
    assert params_key(None, {"dir": "/tmp", "n": 1}) == "dir=/tmp&n=1"


@pytest.mark.parametrize(
    ("method", "path", "body", "statuses"),
    [
        ("POST", "/api/v1/tokens", {"name": "ci\x00", "scope": "read"}, {422}),
        ("POST", "/api/v1/runs", {"machine_id": "a\x00b", "items": [PIPE]}, {404, 422}),
        # A lookup of an id no row can have: not found on SQLite, a value PostgreSQL cannot compare.
        ("GET", "/api/v1/runs/a%00b", None, {404, 422}),
        ("GET", "/api/v1/machines/a%00b", None, {404, 422}),
        ("GET", "/api/v1/runs?machine_id=a%00b", None, {200, 422}),
    ],
)
async def test_nul_in_a_request_is_never_a_500(
    http: httpx.AsyncClient, method: str, path: str, body: object, statuses: set[int]
) -> None:
    r = await http.request(method, path, json=body)
    assert r.status_code in statuses, r.text
    assert "SELECT" not in r.text and "INSERT" not in r.text


async def test_nul_in_a_string_param_is_refused(http: httpx.AsyncClient, make_agent: MakeAgent) -> None:
    agent = make_agent()
    await agent.connect()
    body = {
        "machine_id": agent.agent_id,
        "items": [{"kernel": "syscall.getppid", "params": {"dir": "a\x00b"}}],
    }
    detail = (await post(http, body, status=422))["detail"]
    assert [e["type"] for e in detail] == ["string_nul"]
