"""REST against a real server on an ephemeral port: health, validation, errors, the explorer's files."""

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from ctxbench_server.main import CtxbenchServer

from .conftest import ADMIN, TOKEN, running_server, server_ca, test_settings
from .fake_agent import FakeAgent


async def test_health(http: httpx.AsyncClient) -> None:
    r = await http.get("/api/v1/health")
    assert (r.status_code, r.json()) == (200, {"status": "ok"})


async def test_openapi_docs(http: httpx.AsyncClient) -> None:
    assert (await http.get("/docs")).status_code == 200
    paths = (await http.get("/openapi.json")).json()["paths"]
    assert {"/api/v1/health", "/api/v1/machines", "/api/v1/runs", "/api/v1/runs/{run_id}/results"} <= set(
        paths
    )


# One server for this module: these tests only read, or write runs that nothing else looks at.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[CtxbenchServer]:
    async with running_server(test_settings(tmp_path_factory.mktemp("api"))) as srv:
        yield srv


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http(module_server: CtxbenchServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{module_server.http_port}", headers=ADMIN, timeout=10
    ) as client:
        yield client


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def machine_id(module_server: CtxbenchServer) -> AsyncIterator[str]:
    agent = FakeAgent(f"127.0.0.1:{module_server.grpc_port}", TOKEN, root_ca=server_ca(module_server))
    await agent.connect()
    yield agent.agent_id
    await agent.close()


async def post_run(
    http: httpx.AsyncClient, machine_id: str, items: list[dict[str, Any]], **kw: Any
) -> httpx.Response:
    return await http.post("/api/v1/runs", json={"machine_id": machine_id, "items": items, **kw})


def locs(r: httpx.Response) -> list[list[Any]]:
    assert r.status_code == 422, r.text
    return [e["loc"] for e in r.json()["detail"]]


@pytest.mark.parametrize(
    ("item", "loc", "type_"),
    [
        ({"kernel": "nope"}, ["body", "items", 0, "kernel"], "unknown_kernel"),
        (
            {"kernel": "syscall.getppid", "params": {"bogus": 1}},
            ["body", "items", 0, "params", "bogus"],
            "unknown_param",
        ),
        (
            {"kernel": "syscall.getppid", "params": {"threads": 0}},
            ["body", "items", 0, "params", "threads"],
            "greater_than_equal",
        ),
        (
            {"kernel": "syscall.getppid", "params": {"threads": 65}},
            ["body", "items", 0, "params", "threads"],
            "less_than_equal",
        ),
        (
            {"kernel": "syscall.getppid", "params": {"threads": "4"}},
            ["body", "items", 0, "params", "threads"],
            "int_type",
        ),
        (
            {"kernel": "syscall.getppid", "params": {"direct": "yes"}},
            ["body", "items", 0, "params", "direct"],
            "bool_type",
        ),
        (
            {"kernel": "syscall.getppid", "params": {"placement": "far"}},
            ["body", "items", 0, "params", "placement"],
            "enum",
        ),
        (
            {"kernel": "syscall.getppid", "sweep": {"threads": [1, 99]}},
            ["body", "items", 0, "sweep", "threads", 1],
            "less_than_equal",
        ),
        (
            {"kernel": "syscall.getppid", "sweep": {"nope": [1]}},
            ["body", "items", 0, "sweep", "nope"],
            "unknown_param",
        ),
        (
            {"kernel": "syscall.getppid", "sweep": {"threads": []}},
            ["body", "items", 0, "sweep", "threads"],
            "too_short",
        ),
    ],
)
async def test_item_validation_names_the_field(
    http: httpx.AsyncClient, machine_id: str, item: dict[str, Any], loc: list[Any], type_: str
) -> None:
    r = await post_run(http, machine_id, [{"kernel": "ctxsw.pipe"}, item])
    loc = [*loc[:2], 1, *loc[3:]]  # the bad item is the second one
    assert locs(r) == [loc]
    assert r.json()["detail"][0]["type"] == type_
    assert r.json()["detail"][0]["msg"]


async def test_all_item_errors_reported_at_once(http: httpx.AsyncClient, machine_id: str) -> None:
    r = await post_run(
        http,
        machine_id,
        [{"kernel": "nope"}, {"kernel": "syscall.getppid", "params": {"threads": -1, "x": 1}}],
    )
    assert locs(r) == [
        ["body", "items", 0, "kernel"],
        ["body", "items", 1, "params", "threads"],
        ["body", "items", 1, "params", "x"],
    ]


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"items": [{"kernel": "ctxsw.pipe"}]}, ["body"]),  # neither machine_id nor machine_ids
        ({"machine_id": "m", "machine_ids": ["m"], "items": [{"kernel": "ctxsw.pipe"}]}, ["body"]),
        ({"machine_ids": [], "items": [{"kernel": "ctxsw.pipe"}]}, ["body", "machine_ids"]),
        ({"machine_id": "m", "items": [{"kernel": "ctxsw.pipe"}], "profile": "slow"}, ["body", "profile"]),
        ({"machine_id": "m", "items": [{"kernel": "ctxsw.pipe"}], "rerun_cv": -1}, ["body", "rerun_cv"]),
        ({"machine_id": "m", "items": [{"kernel": "ctxsw.pipe"}], "max_reruns": 99}, ["body", "max_reruns"]),
        ({"machine_id": "m", "items": [{"kernel": "ctxsw.pipe"}], "launches": 0}, ["body", "launches"]),
        ({"machine_id": "m", "items": [{"kernel": "ctxsw.pipe"}], "launches": 21}, ["body", "launches"]),
        (
            {"machine_id": "m", "items": [{"kernel": "ctxsw.pipe", "sweep": {"x": "all"}}]},
            ["body", "items", 0, "sweep", "x", "list[any]"],
        ),
        ({"machine_id": "m", "items": []}, ["body", "items"]),
        ({"machine_id": "m", "items": [{"kernel": "ctxsw.pipe"}], "repetitions": 0}, ["body", "repetitions"]),
        (
            {"machine_id": "m", "items": [{"kernel": "ctxsw.pipe"}], "repetitions": "many"},
            ["body", "repetitions"],
        ),
        ({"machine_id": "m", "items": [{"kernel": "ctxsw.pipe"}], "min_time_s": 100}, ["body", "min_time_s"]),
        (
            {"machine_id": "m", "items": [{"kernel": "ctxsw.pipe", "params": [1]}]},
            ["body", "items", 0, "params"],
        ),
        ({"machine_id": "m", "items": [{"kernel": "ctxsw.pipe", "extra": 1}]}, ["body", "items", 0, "extra"]),
    ],
)
async def test_body_validation(http: httpx.AsyncClient, body: dict[str, Any], loc: list[Any]) -> None:
    r = await http.post("/api/v1/runs", json=body)
    assert loc in locs(r)


async def test_sweep_too_large(http: httpx.AsyncClient, machine_id: str) -> None:
    sweep = {"threads": list(range(1, 33)), "ratio": [i / 40 for i in range(40)]}  # 1280 points
    r = await post_run(http, machine_id, [{"kernel": "syscall.getppid", "sweep": sweep}])
    assert locs(r) == [["body", "items"]]
    assert "1000" in r.json()["detail"][0]["msg"]
    ok = await post_run(
        http, machine_id, [{"kernel": "syscall.getppid", "sweep": {"threads": list(range(1, 33))}}]
    )
    assert ok.status_code == 201


async def test_run_keeps_its_request(http: httpx.AsyncClient, machine_id: str) -> None:
    """A run answers with the body it was posted with (sweeps unexpanded, machine left out), so
    "Run again" can post it once more and get the same items."""
    item = {"kernel": "syscall.getppid", "params": {}, "sweep": {"threads": [1, 2]}}
    settings = {"profile": "quick", "repetitions": 4, "min_time_s": 0.02, "launches": 2}
    body = {"items": [item], **settings}
    first = await post_run(http, machine_id, [item], **settings)
    assert first.status_code == 201, first.text
    assert first.json()["request"] == body
    got = (await http.get(f"/api/v1/runs/{first.json()['id']}")).json()
    assert got["request"] == body
    again = await http.post("/api/v1/runs", json={"machine_id": machine_id, **got["request"]})
    assert again.status_code == 201, again.text
    assert [(i["kernel"], i["params"]) for i in again.json()["items"]] == [
        (i["kernel"], i["params"]) for i in got["items"]
    ]
    assert len(got["items"]) == 2


async def test_unknown_machine_404(http: httpx.AsyncClient) -> None:
    r = await post_run(http, "no-such-machine", [{"kernel": "ctxsw.pipe"}])
    assert r.status_code == 404
    assert "no-such-machine" in r.json()["detail"]
    for path in ("/api/v1/machines/nope", "/api/v1/runs/nope", "/api/v1/runs/nope/results"):
        r = await http.get(path)
        assert r.status_code == 404 and isinstance(r.json()["detail"], str), path
    assert (await http.get("/api/v1/nothing-here")).status_code == 404


async def test_malformed_json_422(http: httpx.AsyncClient) -> None:
    r = await http.post("/api/v1/runs", content=b"{bad", headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.json()["detail"][0]["type"] == "json_invalid"


@pytest.mark.parametrize(
    "content",
    [
        b"null",
        b"[]",
        b'"x"',
        b"1e999",
        b'{"machine_id": null, "items": null}',
        b"\xff\xfe",
        b'{"machine_id": "m", "items": [null]}',
    ],
)
async def test_never_500(http: httpx.AsyncClient, machine_id: str, content: bytes) -> None:
    r = await http.post("/api/v1/runs", content=content, headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500, r.text
    assert "detail" in r.json()


async def test_weird_but_valid_values_never_500(http: httpx.AsyncClient, machine_id: str) -> None:
    for params in (
        {"threads": 10**30},
        {"ratio": 1e308},
        {"dir": "x" * 5000},
        {"threads": None},
        {"ratio": True},
    ):
        r = await post_run(http, machine_id, [{"kernel": "syscall.getppid", "params": params}])
        assert r.status_code == 422, (params, r.text)
    r = await http.get("/api/v1/runs", params={"limit": "-1"})
    assert r.status_code == 422


async def test_unknown_api_paths_404_for_every_method(http: httpx.AsyncClient) -> None:
    for method in ("GET", "POST", "DELETE"):
        r = await http.request(method, "/api/v1/nope")
        assert r.status_code == 404 and r.json() == {"detail": "Not Found"}, method
