"""Machine labels over REST and gRPC (issue 28 item 1): the agent's labels from its Hello, an admin's by
PATCH (a JSON merge patch), the effective labels and the hardware class on GET /machines, and
?selector=. Real server, real database, real gRPC (tests/fake_agent.py)."""

from __future__ import annotations

import logging

import httpx
import pytest

from .runs_helpers import MakeAgent


async def token(http: httpx.AsyncClient, scope: str) -> dict[str, str]:
    r = await http.post("/api/v1/tokens", json={"name": f"labels-{scope}", "scope": scope})
    assert r.status_code == 201, r.text
    return {"authorization": f"Bearer {r.json()['token']}"}


def bad(r: httpx.Response) -> list[list[object]]:
    assert r.status_code == 422, r.text
    return [list(e["loc"]) for e in r.json()["detail"]]


async def names(http: httpx.AsyncClient, selector: str) -> list[str]:
    r = await http.get("/api/v1/machines", params={"selector": selector})
    assert r.status_code == 200, r.text
    return sorted(m["name"] for m in r.json())


async def test_hello_labels_admin_labels_and_the_hardware_class(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent = make_agent(name="db-1", labels={"env": "staging", "rack": "r7", "canary": ""})
    await agent.connect()
    url = f"/api/v1/machines/{agent.agent_id}"
    m = (await http.get(url)).json()
    assert m["agent_labels"] == {"canary": "", "env": "staging", "rack": "r7"}
    assert m["admin_labels"] == {}
    assert m["labels"] == m["agent_labels"]
    # the fake agent's facts: Test CPU, 4 CPUs, 16 GiB, no kernel release
    assert m["hardware_class"] == "Test CPU · 4 CPUs · 16 GiB"

    # an admin's label wins on the same key; the agent's stay beside it
    r = await http.patch(url, json={"labels": {"env": "prod", "owner": "team-db"}})
    assert r.status_code == 200, r.text
    m = r.json()
    assert m["admin_labels"] == {"env": "prod", "owner": "team-db"}
    assert m["agent_labels"] == {"canary": "", "env": "staging", "rack": "r7"}
    assert m["labels"] == {"canary": "", "env": "prod", "owner": "team-db", "rack": "r7"}
    assert m["name"] == "db-1"  # a PATCH of labels leaves the name alone

    # the agent restarts with other flags: its labels follow, the admin's stay
    await agent.close()
    again = make_agent(agent_id=agent.agent_id, name="db-1", labels={"rack": "r9"})
    await again.connect()
    m = (await http.get(url)).json()
    assert (m["agent_labels"], m["admin_labels"]) == ({"rack": "r9"}, {"env": "prod", "owner": "team-db"})
    assert m["labels"] == {"env": "prod", "owner": "team-db", "rack": "r9"}

    # merge patch: null removes a key, an unmentioned key stays; labels: null removes every admin label
    m = (await http.patch(url, json={"labels": {"owner": None, "tier": "gold"}})).json()
    assert m["admin_labels"] == {"env": "prod", "tier": "gold"}
    m = (await http.patch(url, json={"labels": {"nothing-here": None}})).json()
    assert m["admin_labels"] == {"env": "prod", "tier": "gold"}
    m = (await http.patch(url, json={"labels": None})).json()
    assert (m["admin_labels"], m["labels"]) == ({}, {"rack": "r9"})
    # a rename leaves the labels alone
    await http.patch(url, json={"labels": {"env": "prod"}})
    m = (await http.patch(url, json={"name": "primary"})).json()
    assert (m["name"], m["admin_labels"]) == ("primary", {"env": "prod"})


async def test_patch_labels_refuses_bad_input_naming_the_field(
    make_agent: MakeAgent, http: httpx.AsyncClient, anon: httpx.AsyncClient
) -> None:
    agent = make_agent()
    await agent.connect()
    url = f"/api/v1/machines/{agent.agent_id}"
    await http.patch(url, json={"labels": {"env": "prod"}})

    assert bad(await http.patch(url, json={"labels": {"bad key": "x"}})) == [["body", "labels", "bad key"]]
    assert bad(await http.patch(url, json={"labels": {"env": "-prod"}})) == [["body", "labels", "env"]]
    assert bad(await http.patch(url, json={"labels": {"k" * 64: "v"}})) == [["body", "labels", "k" * 64]]
    assert bad(await http.patch(url, json={"labels": {"env": 5}})) == [["body", "labels", "env"]]
    r = await http.patch(url, json={"labels": ["env=prod"]})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][:2] == ["body", "labels"]
    too_many = {f"k{i}": "v" for i in range(33)}
    assert bad(await http.patch(url, json={"labels": too_many})) == [["body", "labels"]]
    # nothing of a refused patch is kept
    assert (await http.get(url)).json()["admin_labels"] == {"env": "prod"}
    assert (await http.patch("/api/v1/machines/no-such", json={"labels": {"a": "b"}})).status_code == 404

    # labels are an admin's: a write token may rename but not label
    assert (await anon.patch(url, json={"labels": {"a": "b"}})).status_code == 401
    writer = await token(http, "write")
    r = await anon.patch(url, headers=writer, json={"labels": {"a": "b"}})
    assert r.status_code == 403 and "admin" in r.json()["detail"]
    r = await anon.patch(url, headers=writer, json={"name": "renamed by a script"})
    assert r.status_code == 200 and r.json()["admin_labels"] == {"env": "prod"}


async def test_selector_filters_the_machine_list(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    for name, labels in [
        ("a", {"env": "prod", "rack": "r1"}),
        ("b", {"env": "prod"}),
        ("c", {"env": "dev", "rack": "r2"}),
        ("d", {}),
    ]:
        await make_agent(name=name, labels=labels).connect()
    assert await names(http, "env=prod,rack") == ["a"]
    assert await names(http, "env=prod") == ["a", "b"]
    assert await names(http, "env==prod") == ["a", "b"]
    assert await names(http, "env!=prod") == ["c", "d"]
    assert await names(http, "!rack") == ["b", "d"]
    assert await names(http, "rack") == ["a", "c"]
    assert await names(http, "") == ["a", "b", "c", "d"]
    # an admin's label is selected by too, over the agent's
    [d] = [m for m in (await http.get("/api/v1/machines")).json() if m["name"] == "d"]
    await http.patch(f"/api/v1/machines/{d['id']}", json={"labels": {"env": "prod"}})
    assert await names(http, "env=prod") == ["a", "b", "d"]

    for selector in ["bad key", "env=-x", "=prod", "!", "x" * 1025]:
        r = await http.get("/api/v1/machines", params={"selector": selector})
        assert bad(r) == [["query", "selector"]], selector
        assert "Traceback" not in r.text


async def test_an_agents_invalid_labels_are_dropped_with_one_warning(
    make_agent: MakeAgent, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    # An agent that does not check its flags (an older or a foreign one): the Hello is still welcome.
    agent = make_agent(labels={"ok": "1", "bad key": "x", "v": "-bad"})
    with caplog.at_level(logging.WARNING, logger="ctxbench_server.machines.service"):
        await agent.connect()
    m = (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()
    assert m["agent_labels"] == {"ok": "1"}
    warnings = [r for r in caplog.records if "labels" in r.getMessage()]
    assert len(warnings) == 1 and "bad key" in warnings[0].getMessage(), caplog.text

    many = make_agent(labels={f"k{i:02}": "v" for i in range(40)})
    await many.connect()
    m = (await http.get(f"/api/v1/machines/{many.agent_id}")).json()
    assert sorted(m["agent_labels"]) == [f"k{i:02}" for i in range(32)]
