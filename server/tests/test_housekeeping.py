"""Host housekeeping (issue 13): rename and delete machines, name, note and delete runs and batches.
Budgets (422 naming the field), scopes (write to edit, admin to delete a machine), refusals (409) and
what a delete takes with it. Real server, real database, real gRPC (tests/fake_agent.py)."""

from __future__ import annotations

import grpc
import httpx
import pytest
from sqlalchemy import func, select

from ctxbench_server.main import CtxbenchServer
from ctxbench_server.models import Batch, LatestResult, Result, RunItem

from .conftest import eventually
from .runs_helpers import PIPE, MakeAgent, agents, finish, get_run, post


async def token(http: httpx.AsyncClient, scope: str) -> dict[str, str]:
    r = await http.post("/api/v1/tokens", json={"name": f"pw-{scope}", "scope": scope})
    assert r.status_code == 201, r.text
    return {"authorization": f"Bearer {r.json()['token']}"}


async def offline(http: httpx.AsyncClient, machine_id: str) -> None:
    async def check() -> bool:
        return bool((await http.get(f"/api/v1/machines/{machine_id}")).json()["online"] is False)

    await eventually(check)


def loc(r: httpx.Response) -> list[object]:
    assert r.status_code == 422, r.text
    return list(r.json()["detail"][0]["loc"])


# --- machines ---------------------------------------------------------------------------------------


async def test_rename_keeps_the_id_survives_hellos_and_resets(
    make_agent: MakeAgent, http: httpx.AsyncClient, anon: httpx.AsyncClient
) -> None:
    [agent] = await agents(make_agent, 1)
    url = f"/api/v1/machines/{agent.agent_id}"
    r = await http.patch(url, json={"name": "  rack 3, left  "})
    assert r.status_code == 200, r.text
    m = r.json()
    assert (m["id"], m["name"], m["display_name"], m["agent_name"]) == (
        agent.agent_id,
        "rack 3, left",
        "rack 3, left",
        "fake-host",
    )
    # The agent says hello again (a restart): the name someone gave stays.
    await agent.close()
    again = make_agent(agent_id=agent.agent_id)
    await again.connect()
    assert (await http.get(url)).json()["name"] == "rack 3, left"
    listed = {x["id"]: x["name"] for x in (await http.get("/api/v1/machines")).json()}
    assert listed[agent.agent_id] == "rack 3, left"
    # null (or "") gives the agent's own name back
    r = await http.patch(url, json={"name": None})
    assert (r.json()["name"], r.json()["display_name"]) == ("fake-host", None)
    assert (await http.patch(url, json={"name": ""})).json()["name"] == "fake-host"

    # budgets: the column's 255 characters, one line, nothing unknown
    assert loc(await http.patch(url, json={"name": "x" * 256})) == ["body", "name"]
    assert (await http.patch(url, json={"name": "é" * 255})).status_code == 200
    assert loc(await http.patch(url, json={"name": "a\nb"})) == ["body", "name"]
    assert loc(await http.patch(url, json={"name": "a\x00b"})) == ["body", "name"]
    assert loc(await http.patch(url, json={"name": "x", "id": "other"})) == ["body", "id"]
    assert (await http.patch("/api/v1/machines/no-such", json={"name": "x"})).status_code == 404
    # scopes: a credential to write; reading is not enough
    assert (await anon.patch(url, json={"name": "x"})).status_code == 401
    reader = await token(http, "read")
    assert (await anon.patch(url, headers=reader, json={"name": "x"})).status_code == 403
    writer = await token(http, "write")
    assert (await anon.patch(url, headers=writer, json={"name": "by a script"})).json()[
        "name"
    ] == "by a script"


async def test_delete_machine_is_admin_only_refused_while_online_or_busy_and_takes_its_data(
    server: CtxbenchServer, make_agent: MakeAgent, http: httpx.AsyncClient, anon: httpx.AsyncClient
) -> None:
    keep, doomed = await agents(make_agent, 2)
    done = await post(http, {"machine_id": doomed.agent_id, "items": [PIPE, PIPE]})
    await finish(doomed, (await doomed.expect("start_run")).start_run)
    kept = await post(http, {"machine_id": keep.agent_id, "items": [PIPE]})
    await finish(keep, (await keep.expect("start_run")).start_run)
    url = f"/api/v1/machines/{doomed.agent_id}"

    writer = await token(http, "write")
    assert (await anon.delete(url, headers=writer)).status_code == 403
    r = await http.delete(url)
    assert r.status_code == 409 and "online" in r.json()["detail"]

    # offline, with a run waiting in its queue: cancel it first
    waiting = await post(http, {"machine_id": doomed.agent_id, "items": [PIPE]})
    await doomed.close()
    await offline(http, doomed.agent_id)
    r = await http.delete(url)
    assert r.status_code == 409 and "cancel" in r.json()["detail"]
    assert (await http.post(f"/api/v1/runs/{waiting['id']}/cancel")).status_code == 200
    assert (
        await http.patch(f"/api/v1/batches/{done['batch_id']}", json={"name": "before"})
    ).status_code == 200

    assert (await http.delete(url)).status_code == 204
    assert (await http.get(url)).status_code == 404
    assert (await http.delete(url)).status_code == 404
    for run in (done, waiting):
        assert (await http.get(f"/api/v1/runs/{run['id']}")).status_code == 404
    assert doomed.agent_id not in {m["id"] for m in (await http.get("/api/v1/machines")).json()}
    async with server.sessionmaker() as s:
        for model in (Result, LatestResult):
            assert (
                await s.scalar(
                    select(func.count()).select_from(model).where(model.machine_id == doomed.agent_id)
                )
                == 0
            )
        assert await s.get(Batch, done["batch_id"]) is None
    # the other machine keeps everything
    assert (await get_run(http, kept["id"]))["status"] == "succeeded"
    assert len((await http.get(f"/api/v1/runs/{kept['id']}/results")).json()) == 1
    # its credential went with it: the agent cannot connect again without enrolling
    back = make_agent(agent_id=doomed.agent_id)  # the same id, so the same credential (see FakeAgent)
    assert back.credential is not None
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await back.connect()
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


# --- runs and batches -------------------------------------------------------------------------------


async def test_run_title_and_note(
    make_agent: MakeAgent, http: httpx.AsyncClient, anon: httpx.AsyncClient
) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    assert (run["name"], run["note"]) == (None, None)
    url = f"/api/v1/runs/{run['id']}"
    r = await http.patch(url, json={"name": "after the BIOS update", "note": "governor=performance\nSMT off"})
    assert r.status_code == 200, r.text
    assert (r.json()["name"], r.json()["note"]) == ("after the BIOS update", "governor=performance\nSMT off")
    # a field left out stays; "" clears
    assert (await http.patch(url, json={"note": ""})).json()["name"] == "after the BIOS update"
    got = await get_run(http, run["id"])
    assert (got["name"], got["note"]) == ("after the BIOS update", None)
    listed = (await http.get("/api/v1/runs?items=false")).json()
    assert [x["name"] for x in listed if x["id"] == run["id"]] == ["after the BIOS update"]

    assert loc(await http.patch(url, json={"name": "x" * 201})) == ["body", "name"]
    assert loc(await http.patch(url, json={"note": "x" * 4001})) == ["body", "note"]
    assert (await http.patch(url, json={"note": "é" * 4000})).status_code == 200
    assert loc(await http.patch(url, json={"note": "a\x00b"})) == ["body", "note"]
    lone = b'{"note": "a\\ud800b"}'  # a lone surrogate: valid JSON, no storable text
    assert loc(await http.patch(url, content=lone, headers={"content-type": "application/json"})) == [
        "body",
        "note",
    ]
    assert loc(await http.patch(url, json={"name": 5})) == ["body", "name"]
    assert (await http.patch("/api/v1/runs/no-such", json={"name": "x"})).status_code == 404
    reader = await token(http, "read")
    assert (await anon.patch(url, headers=reader, json={"name": "x"})).status_code == 403


async def test_delete_run_only_when_finished_and_compare_falls_back(
    server: CtxbenchServer, make_agent: MakeAgent, http: httpx.AsyncClient, anon: httpx.AsyncClient
) -> None:
    [agent] = await agents(make_agent, 1)
    older = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    await finish(agent, (await agent.expect("start_run")).start_run)
    newer = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    start = (await agent.expect("start_run")).start_run
    url = f"/api/v1/runs/{newer['id']}"
    r = await http.delete(url)
    assert r.status_code == 409 and "cancel it first" in r.json()["detail"]
    await finish(agent, start)
    [older_result] = (await http.get(f"/api/v1/runs/{older['id']}/results")).json()
    [newer_result] = (await http.get(f"/api/v1/runs/{newer['id']}/results")).json()

    async def latest_ids() -> set[str]:
        async with server.sessionmaker() as s:
            return set(
                await s.scalars(
                    select(LatestResult.result_id).where(LatestResult.machine_id == agent.agent_id)
                )
            )

    assert await latest_ids() == {newer_result["id"]}
    reader = await token(http, "read")
    assert (await anon.delete(url, headers=reader)).status_code == 403
    assert (await http.delete(url)).status_code == 204
    assert (await http.get(url)).status_code == 404
    assert (await http.get(f"{url}/results")).status_code == 404
    # what compare shows by default is now the older run's result
    assert await latest_ids() == {older_result["id"]}
    async with server.sessionmaker() as s:
        assert (
            await s.scalar(select(func.count()).select_from(RunItem).where(RunItem.run_id == newer["id"]))
            == 0
        )
        assert await s.get(Result, newer_result["id"]) is None
    assert (await http.delete(url)).status_code == 404


async def test_batch_title_note_and_delete(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    a, b = await agents(make_agent, 2)
    batch = await post(http, {"machine_ids": [a.agent_id, b.agent_id], "items": [PIPE]})
    bid = batch["batch_id"]
    url = f"/api/v1/batches/{bid}"
    info = (await http.get(url)).json()
    assert info["name"] is None and sorted(info["machine_ids"]) == sorted([a.agent_id, b.agent_id])
    assert sorted(info["run_ids"]) == sorted(r["id"] for r in batch["runs"])
    r = await http.patch(url, json={"name": "kernel 6.8 vs 6.12", "note": "same BIOS"})
    assert (r.status_code, r.json()["name"], r.json()["note"]) == (200, "kernel 6.8 vs 6.12", "same BIOS")
    assert (await http.get(url)).json()["name"] == "kernel 6.8 vs 6.12"
    # every answer about its runs carries the batch's title: the list (light and full) and each run
    for form in ("false", "true"):
        listed = (await http.get(f"/api/v1/runs?batch_id={bid}&items={form}")).json()
        assert [x["batch_name"] for x in listed] == ["kernel 6.8 vs 6.12"] * 2
    assert (await get_run(http, batch["runs"][0]["id"]))["batch_name"] == "kernel 6.8 vs 6.12"
    assert loc(await http.patch(url, json={"name": "x" * 201})) == ["body", "name"]
    assert (await http.get("/api/v1/batches/no-such")).status_code == 404
    assert (await http.patch("/api/v1/batches/no-such", json={"name": "x"})).status_code == 404

    # one run still going: nothing is deleted
    await finish(a, (await a.expect("start_run")).start_run)
    start_b = (await b.expect("start_run")).start_run
    r = await http.delete(url)
    assert r.status_code == 409
    assert len((await http.get(url)).json()["run_ids"]) == 2
    await finish(b, start_b)
    assert (await http.delete(url)).status_code == 204
    assert (await http.get(url)).status_code == 404
    for run in batch["runs"]:
        assert (await http.get(f"/api/v1/runs/{run['id']}")).status_code == 404
