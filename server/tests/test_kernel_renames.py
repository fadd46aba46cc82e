"""Renamed kernels (kernels/contract/legacy-ids.json): old ids keep working at every door, old agents keep
getting runs under the id their catalog lists, and results under either id are one series — through real
gRPC with the protocol-speaking test agent, and through migration 0008 for what older servers stored."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from alembic import command
from sqlalchemy import text
from sqlalchemy.engine import Connection

from ctxbench_server.compare import significance
from ctxbench_server.contract import aliases
from ctxbench_server.db import alembic_config, migrate
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb

from .fake_agent import FakeAgent
from .test_agent_flow import post_run
from .test_db import fresh_engine

MakeAgent = Callable[..., FakeAgent]
CONTRACT = Path(__file__).resolve().parents[2] / "kernels" / "contract" / "legacy-ids.json"


def mutex(kernel_id: str, family: str) -> pb.KernelSpec:
    """lock.go_mutex as an agent lists it: an old agent as go.mutex, a new one as lock.go_mutex."""
    return pb.KernelSpec(
        id=kernel_id,
        title="sync.Mutex",
        family=family,
        unit="ns/op",
        executable="ctxbench-kernels-go",
        params=[
            pb.ParamSpec(
                name="goroutines", type=pb.PARAM_TYPE_INT, default_value="2", min=1, max=64, sweep=["1", "2"]
            )
        ],
    )


def test_the_packaged_map_is_the_contracts() -> None:
    assert json.loads(CONTRACT.read_text())["renames"] == aliases.RENAMES
    assert aliases.canonical("go.mutex") == "lock.go_mutex"
    assert aliases.canonical("py.loop") == "call.py_loop"
    assert aliases.canonical("lock.go_mutex") == "lock.go_mutex"
    assert aliases.aliases_of("sched.gosched") == ["go.gosched"]


def test_noise_floors_name_new_ids_only() -> None:
    """The measured default floors are looked up by the stored (new) id and its family: an old key or the
    language family `py` would never be found."""
    floors = significance.load_floors(significance.FLOORS_FILE)
    assert not set(floors.kernels) & set(aliases.RENAMES)
    assert set(aliases.RENAMES.values()) - {
        "goroutine.memory",
        "coroutine.py_yield_from",
        "coroutine.py_asyncio",
    } <= set(floors.kernels)  # the A/A points (scripts/bench_aa.py) measure the other seven
    assert set(floors.families) == {k.partition(".")[0] for k in floors.kernels}


async def run_one(
    agent: FakeAgent, http: httpx.AsyncClient, kernel: str, samples: list[float]
) -> dict[str, Any]:
    """POSTs a one-item run of `kernel` (as given: old or new id), checks what the agent is sent, and
    reports its result. Returns the run."""
    run = await post_run(
        http, agent.agent_id, [{"kernel": kernel, "params": {"goroutines": 2}}], repetitions=10
    )
    start = (await agent.expect("start_run")).start_run
    listed = agent.kernels[0].id
    assert [it.kernel_id for it in start.items] == [listed]  # the id this agent's own catalog has
    await agent.running(run["id"], start.items[0].item_id)
    await agent.report(run["id"], start.items[0], samples=samples)  # reported under that id too
    return run


async def test_old_and_new_agents_one_series(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    old = make_agent(kernels=[mutex("go.mutex", "lock")], name="old-host")
    new = make_agent(kernels=[mutex("lock.go_mutex", "lock")], name="new-host")
    await old.connect()
    await new.connect()

    # The old agent's catalog is stored under the new id; both machines have the one kernel.
    machines = {m["id"]: m for m in (await http.get("/api/v1/machines")).json()}
    assert machines[old.agent_id]["kernels"] == ["lock.go_mutex"]
    assert machines[new.agent_id]["kernels"] == ["lock.go_mutex"]
    listing = {k["id"]: k for k in (await http.get("/api/v1/kernels")).json()}
    assert "go.mutex" not in listing
    assert listing["lock.go_mutex"]["aliases"] == ["go.mutex"]
    assert sorted(listing["lock.go_mutex"]["machines"]) == sorted([old.agent_id, new.agent_id])

    # POST /runs with the old id on the new agent, with the new id on the old agent: both run.
    r_old = await run_one(old, http, "lock.go_mutex", [float(x) for x in range(20, 30)])
    r_new = await run_one(new, http, "go.mutex", [float(x) for x in range(10, 20)])
    for run in (r_old, r_new):
        assert [it["kernel"] for it in run["items"]] == ["lock.go_mutex"]
        results = (await http.get(f"/api/v1/runs/{run['id']}/results")).json()
        assert [r["kernel"] for r in results] == ["lock.go_mutex"]
        done = (await http.get(f"/api/v1/runs/{run['id']}")).json()
        assert done["status"] == "succeeded"

    # Compare: one row, both machines' cells, whatever id the filter names.
    for kernels in ("go.mutex", "lock.go_mutex", "lock.*", "go.*"):
        r = await http.get(
            "/api/v1/compare",
            params={
                "machines": f"{new.agent_id},{old.agent_id}",
                "kernels": kernels,
                "baseline": new.agent_id,
            },
        )
        assert r.status_code == 200, (kernels, r.text)
        rows = r.json()["rows"]
        assert [(row["kernel"], row["family"]) for row in rows] == [("lock.go_mutex", "lock")], kernels
        assert set(rows[0]["cells"]) == {old.agent_id, new.agent_id}
        assert rows[0]["ratios"][old.agent_id]["ratio"] > 1.5
    unknown = await http.get("/api/v1/compare", params={"machines": new.agent_id, "kernels": "go.nope"})
    assert unknown.status_code == 422

    # History and the kernel page read the old id as the new one.
    for kid in ("go.mutex", "lock.go_mutex"):
        h = await http.get("/api/v1/history", params={"machine": old.agent_id, "kernel": kid})
        assert h.status_code == 200, h.text
        assert h.json()["kernel"] == "lock.go_mutex" and len(h.json()["points"]) == 1
        ranked = (await http.get(f"/api/v1/kernels/{kid}/latest")).json()
        assert len(ranked) == 1 and len(ranked[0]["results"]) == 2

    # A share saved with the old id opens, its view naming the new id.
    created = await http.post(
        "/api/v1/shares",
        json={
            "view": {
                "machines": [new.agent_id, old.agent_id],
                "kernels": "go.mutex",
                "baseline": new.agent_id,
            }
        },
    )
    assert created.status_code == 201, created.text
    share = (await http.get(f"/api/v1/shares/{created.json()['slug']}")).json()
    assert share["view"]["kernels"] == "lock.go_mutex"
    assert [row["kernel"] for row in share["compare"]["rows"]] == ["lock.go_mutex"]
    assert len(share["result_ids"]) == 2
    await old.close()
    await new.close()


async def test_0008_rewrites_stored_ids(tmp_path: Path) -> None:
    """What a server before 0008 stored under go.mutex: results, items, the latest pointer, the run's spec,
    a share and the catalog, all under lock.go_mutex afterwards; the old agent's id kept for dispatch."""
    engine = await fresh_engine(tmp_path)

    def alembic(conn: Connection, step: Callable[..., None], rev: str) -> None:
        cfg = alembic_config()
        cfg.attributes["connection"] = conn
        step(cfg, rev)

    sqlite = engine.dialect.name == "sqlite"

    def at(t: str) -> Any:  # asyncpg binds a timestamp only as a datetime; SQLite stores the text
        return t if sqlite else datetime.fromisoformat(t).replace(tzinfo=UTC)

    old_spec = json.dumps({"id": "py.loop", "family": "py", "unit": "ns/op", "params": []})
    try:
        async with engine.begin() as conn:
            await conn.run_sync(alembic, command.upgrade, "0007")
            t = "2026-11-22 01:00:00"
            await conn.execute(
                text(
                    "INSERT INTO machines (id, name, hostname, agent_version, first_seen, last_seen, facts)"
                    " VALUES ('m', 'm', 'm', 'v', :t, :t, '{}')"
                ),
                {"t": at(t)},
            )
            await conn.execute(
                text("INSERT INTO kernels (id, spec, updated_at) VALUES ('py.loop', :s, :t)"),
                {"s": old_spec, "t": at(t)},
            )
            await conn.execute(
                text("INSERT INTO machine_kernels (machine_id, kernel_id, spec) VALUES ('m', 'py.loop', :s)"),
                {"s": old_spec},
            )
            spec = json.dumps({"items": [{"kernel": "py.loop", "params": {}}, {"kernel": "syscall.getppid"}]})
            await conn.execute(
                text(
                    "INSERT INTO runs (id, machine_id, batch_id, status, spec, created_at, queued_at)"
                    " VALUES ('r', 'm', 'r', 'succeeded', :spec, :t, :t)"
                ),
                {"spec": spec, "t": at(t)},
            )
            await conn.execute(
                text(
                    'INSERT INTO run_items (id, run_id, "index", kernel_id, params, state, timeout_s,'
                    " attempt) VALUES ('i', 'r', 0, 'py.loop', '{}', 'succeeded', 60, 1)"
                )
            )
            # Two results of one point: under the old id, and a newer one under the new id (a new agent
            # reporting before the upgrade); each had its latest pointer.
            for rid, kid, when in (("res", "py.loop", t), ("res2", "call.py_loop", "2026-11-22 02:00:00")):
                await conn.execute(
                    text(
                        "INSERT INTO results (id, run_id, item_id, machine_id, kernel_id, status, params,"
                        " params_key, unit, samples, iterations, counters, harness, n, median, exit_code,"
                        " created_at, attempt, reruns, noisy, attempt_cvs) VALUES (:id, 'r', 'i', 'm',"
                        " :k, 'ok', '{}', '', 'ns/op', '[1.0]', '[1]', '{}', '{}', 1, 1.0, 0, :t, 1, 0,"
                        " false, '[]')"
                    ),
                    {"id": rid, "k": kid, "t": at(when)},
                )
                await conn.execute(
                    text(
                        "INSERT INTO latest_results (machine_id, kernel_id, params_key, result_id,"
                        " created_at) VALUES ('m', :k, '', :id, :t)"
                    ),
                    {"id": rid, "k": kid, "t": at(when)},
                )
            view = json.dumps({"machines": ["m"], "kernels": "py.loop,syscall.getppid", "baseline": "m"})
            answer = json.dumps({"rows": [{"kernel": "py.loop", "family": "py"}], "result_ids": ["res"]})
            await conn.execute(
                text(
                    "INSERT INTO shares (slug, view, result_ids, compare, created_at)"
                    " VALUES ('s0123456789ab', :v, '[\"res\"]', :c, :t)"
                ),
                {"v": view, "c": answer, "t": at(t)},
            )
        await migrate(engine)
        async with engine.connect() as conn:

            async def one(sql: str) -> list[Any]:
                return [tuple(r) for r in (await conn.execute(text(sql))).all()]

            assert await one("SELECT kernel_id FROM results") == [("call.py_loop",)] * 2
            assert await one("SELECT kernel_id FROM run_items") == [("call.py_loop",)]
            assert await one("SELECT kernel_id, result_id FROM latest_results") == [("call.py_loop", "res2")]
            [(run_spec,)] = await one("SELECT spec FROM runs")
            run_spec = json.loads(run_spec) if isinstance(run_spec, str) else run_spec
            assert [it["kernel"] for it in run_spec["items"]] == ["call.py_loop", "syscall.getppid"]
            [(v, c)] = await one("SELECT view, compare FROM shares")
            v, c = (json.loads(x) if isinstance(x, str) else x for x in (v, c))
            assert v["kernels"] == "call.py_loop,syscall.getppid"
            assert c["rows"][0]["kernel"] == "call.py_loop"
            [(kid, kspec)] = await one("SELECT id, spec FROM kernels")
            kspec = json.loads(kspec) if isinstance(kspec, str) else kspec
            assert (kid, kspec["id"], kspec["family"]) == ("call.py_loop", "call.py_loop", "call")
            assert aliases.LISTED_AS not in kspec
            [(mk, mspec)] = await one("SELECT kernel_id, spec FROM machine_kernels")
            mspec = json.loads(mspec) if isinstance(mspec, str) else mspec
            assert (mk, mspec["id"], mspec[aliases.LISTED_AS]) == ("call.py_loop", "call.py_loop", "py.loop")

        # And back: a downgrade restores the old ids.
        async with engine.begin() as conn:
            await conn.run_sync(alembic, command.downgrade, "0007")
            rows = (await conn.execute(text("SELECT kernel_id FROM results"))).all()
            assert [tuple(r) for r in rows] == [("py.loop",)] * 2
            rows = (await conn.execute(text("SELECT id FROM kernels"))).all()
            assert [tuple(r) for r in rows] == [("py.loop",)]
    finally:
        await engine.dispose()
