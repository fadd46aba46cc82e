"""Runs you can trust to finish (1/2): batches, profiles and default sweeps, the per-machine queue,
launches. Real server, real gRPC (tests/fake_agent.py)."""

import asyncio
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from ctxbench_server.cluster import advisory_key
from ctxbench_server.db import create_engine
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb

from .conftest import TEST_DATABASE_URL
from .fake_agent import fake_catalog
from .runs_helpers import PIPE, MakeAgent, agents, finish, get_run, post

# --- batches --------------------------------------------------------------------------------------


async def test_batch_one_run_per_machine(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    a, b = await agents(make_agent, 2)
    out = await post(http, {"machine_ids": [a.agent_id, b.agent_id], "items": [PIPE, PIPE]})
    assert set(out) == {"batch_id", "runs"}
    runs = out["runs"]
    assert [r["machine_id"] for r in runs] == [a.agent_id, b.agent_id]
    assert {r["batch_id"] for r in runs} == {out["batch_id"]}
    assert all(r["status"] == "running" and r["profile"] == "default" for r in runs)
    assert len({r["id"] for r in runs} | {out["batch_id"]}) == 3
    for agent, run in zip((a, b), runs, strict=True):
        start = (await agent.expect("start_run")).start_run
        assert start.run_id == run["id"] and len(start.items) == 2

    listed = (await http.get("/api/v1/runs", params={"batch_id": out["batch_id"]})).json()
    assert {r["id"] for r in listed} == {r["id"] for r in runs}
    only_b = await http.get("/api/v1/runs", params={"batch_id": out["batch_id"], "machine_id": b.agent_id})
    assert [r["id"] for r in only_b.json()] == [runs[1]["id"]]

    alone = await post(http, {"machine_id": a.agent_id, "items": [PIPE]})
    assert alone["batch_id"] == alone["id"]  # a run posted alone is its own batch
    assert (await http.get("/api/v1/runs", params={"batch_id": "nope"})).json() == []


async def test_batch_waits_for_every_machine_another_server_changes(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    """PostgreSQL: a batch's start takes the advisory lock of each of its machines (before, only that of
    the last one it locked), so a change another server process makes to any of them comes first."""
    if not TEST_DATABASE_URL:
        return  # one process per SQLite file: nothing else to wait for
    a, b = await agents(make_agent, 2)
    first = min(a.agent_id, b.agent_id)  # not the last lock the POST enters
    elsewhere = create_engine(TEST_DATABASE_URL)
    try:
        async with elsewhere.connect() as conn:
            await conn.execute(
                text("SELECT pg_advisory_xact_lock(:k)"), {"k": advisory_key("machine", first)}
            )
            posting = asyncio.create_task(
                post(http, {"machine_ids": [a.agent_id, b.agent_id], "items": [PIPE]})
            )
            await asyncio.sleep(1.0)
            assert not posting.done()  # waits for the other process's transaction
            await a.expect_nothing(0.1)
            await b.expect_nothing(0.1)
            await conn.rollback()
        out = await asyncio.wait_for(posting, 10)
        assert all(r["status"] == "running" for r in out["runs"])
        for agent in (a, b):
            assert (await agent.expect("start_run")).start_run.run_id in {r["id"] for r in out["runs"]}
    finally:
        await elsewhere.dispose()


async def test_batch_all_or_nothing(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    full = await agents(make_agent, 1)
    small = await agents(make_agent, 1, kernels=[k for k in fake_catalog() if k.id == "ctxsw.pipe"])
    ids = [full[0].agent_id, small[0].agent_id]

    r = await post(http, {"machine_ids": [ids[0], "ghost", ids[1], "ghost2"], "items": [PIPE]}, 422)
    assert [(e["loc"], e["type"]) for e in r["detail"]] == [
        (["body", "machine_ids", 1], "unknown_machine"),
        (["body", "machine_ids", 3], "unknown_machine"),
    ]
    assert "ghost" in r["detail"][0]["msg"]
    r = await post(http, {"machine_ids": [ids[0], ids[0]], "items": [PIPE]}, 422)
    assert [e["loc"] for e in r["detail"]] == [["body", "machine_ids", 1]]

    # a kernel one machine lacks: 422 naming that machine, and nothing stored for the other one
    r = await post(http, {"machine_ids": ids, "items": [PIPE, {"kernel": "syscall.getppid"}]}, 422)
    assert [e["loc"] for e in r["detail"]] == [["body", "items", 1, "kernel"]]
    assert small[0].agent_id in r["detail"][0]["msg"]
    assert (await http.get("/api/v1/runs")).json() == []
    await full[0].expect_nothing(0.1)

    # an unknown machine_id (single) stays 404
    assert (await http.post("/api/v1/runs", json={"machine_id": "ghost", "items": [PIPE]})).status_code == 404


# --- profiles and "default" sweeps ----------------------------------------------------------------


def sweep_catalog() -> list[pb.KernelSpec]:
    kernels = fake_catalog()
    threads = kernels[0].params[0]
    del threads.sweep[:]
    threads.sweep.extend(["1", "2", "4", "8"])
    return kernels


@pytest.mark.parametrize(
    ("profile", "extra", "reps", "min_time", "launches", "sample_time", "threads"),
    [
        ("quick", {}, 6, 0.025, 3, 0.0005, [1, 4, 8]),  # every other point, the last kept
        ("default", {}, 14, 0.04, 7, 0.0005, [1, 2, 4, 8]),
        ("thorough", {}, 30, 0.05, 15, 0.0005, [1, 2, 4, 8]),
        # explicit values win; sample_time_s 0: one long sample per repetition
        (
            "quick",
            {"repetitions": 7, "min_time_s": 0.2, "launches": 2, "sample_time_s": 0},
            7,
            0.2,
            2,
            0.0,
            [1, 4, 8],
        ),
        ("default", {"sample_time_s": 0.001}, 14, 0.04, 7, 0.001, [1, 2, 4, 8]),
    ],
)
async def test_profiles(
    make_agent: MakeAgent,
    http: httpx.AsyncClient,
    profile: str,
    extra: dict[str, Any],
    reps: int,
    min_time: float,
    launches: int,
    sample_time: float,
    threads: list[int],
) -> None:
    [agent] = await agents(make_agent, 1, kernels=sweep_catalog())
    body = {
        "machine_id": agent.agent_id,
        "profile": profile,
        "items": [{"kernel": "syscall.getppid", "sweep": {"threads": "default", "direct": [True]}}],
        **extra,
    }
    run = await post(http, body)
    assert run["profile"] == profile
    assert (run["repetitions"], run["min_time_s"] or 0.0, run["launches"]) == (reps, min_time, launches)
    assert (run["sample_time_s"] or 0.0) == sample_time
    assert [it["params"]["threads"] for it in run["items"]] == threads
    start = (await agent.expect("start_run")).start_run
    assert [(it.repetitions, it.min_time_s, it.launches, it.sample_time_s) for it in start.items] == [
        (reps, min_time, launches, sample_time)
    ] * len(threads)
    assert [it.params["threads"] for it in start.items] == [str(t) for t in threads]


async def test_a_short_sample_longer_than_a_repetition_is_refused(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    [agent] = await agents(make_agent, 1)
    body = {"machine_id": agent.agent_id, "items": [PIPE], "min_time_s": 0.01, "sample_time_s": 0.05}
    r = await http.post("/api/v1/runs", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "sample_time_s"]
    assert "longer than a repetition" in r.json()["detail"][0]["msg"]
    r = await http.post("/api/v1/runs", json={**body, "sample_time_s": 2})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "sample_time_s"], r.text


async def test_default_sweep_needs_one(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    [agent] = await agents(make_agent, 1)
    r = await post(
        http,
        {
            "machine_id": agent.agent_id,
            "items": [{"kernel": "syscall.getppid", "sweep": {"ratio": "default"}}],
        },
        422,
    )
    assert [(e["loc"], e["type"]) for e in r["detail"]] == [
        (["body", "items", 0, "sweep", "ratio"], "no_default_sweep")
    ]


def test_thin() -> None:
    from ctxbench_server.runs.expand import thin

    assert thin([1, 2, 4]) == [1, 4]
    assert thin([1, 2, 4, 8]) == [1, 4, 8]
    assert thin([1]) == [1]
    assert thin([1, 2]) == [1, 2]


# --- the queue ------------------------------------------------------------------------------------


async def test_fifo_per_machine_across_runs_and_batches(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    a, b = await agents(make_agent, 2)
    both = [a.agent_id, b.agent_id]
    batch1 = await post(http, {"machine_ids": both, "items": [PIPE]})
    single = await post(http, {"machine_id": a.agent_id, "items": [PIPE]})
    batch2 = await post(http, {"machine_ids": both, "items": [PIPE]})
    assert single["status"] == "queued"
    assert [r["status"] for r in batch2["runs"]] == ["queued", "queued"]
    start_a = (await a.expect("start_run")).start_run
    start_b = (await b.expect("start_run")).start_run
    assert (start_a.run_id, start_b.run_id) == (batch1["runs"][0]["id"], batch1["runs"][1]["id"])
    await a.expect_nothing(0.1)  # one run at a time

    await finish(b, start_b)
    assert (await b.expect("start_run")).start_run.run_id == batch2["runs"][1]["id"]
    await finish(a, start_a)
    start_a = (await a.expect("start_run")).start_run
    assert start_a.run_id == single["id"]  # posted before batch2
    await finish(a, start_a)
    assert (await a.expect("start_run")).start_run.run_id == batch2["runs"][0]["id"]
    assert (await get_run(http, single["id"]))["status"] == "succeeded"


async def test_batch_starts_idle_machines_and_queues_the_rest(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    """One POST to idle, busy and offline machines: the idle ones start at once (their StartRun before
    the response), the busy one queues behind its run, the offline one waits for its agent."""
    idle = await agents(make_agent, 4)
    (busy,) = await agents(make_agent, 1)
    offline = make_agent()
    await offline.connect()
    await offline.close()
    first = await post(http, {"machine_id": busy.agent_id, "items": [PIPE]})
    busy_start = (await busy.expect("start_run")).start_run

    machines = [a.agent_id for a in idle] + [busy.agent_id, offline.agent_id]
    out = await post(http, {"machine_ids": machines, "items": [PIPE, {"kernel": "syscall.getppid"}]})
    runs = out["runs"]
    assert [r["status"] for r in runs] == ["running"] * 4 + ["queued", "queued"]
    for agent, run in zip(idle, runs, strict=False):
        start = (await agent.expect("start_run")).start_run
        assert start.run_id == run["id"]
        assert [it.item_id for it in start.items] == [it["id"] for it in run["items"]]
        assert run["facts"] and run["started_at"]
    await busy.expect_nothing(0.1)

    await finish(busy, busy_start)
    assert (await get_run(http, first["id"]))["status"] == "succeeded"
    assert (await busy.expect("start_run")).start_run.run_id == runs[4]["id"]
    await offline.connect()
    assert (await offline.expect("start_run")).start_run.run_id == runs[5]["id"]


# --- launches (CV reruns are gone) ----------------------------------------------------------------


async def test_launches_round_trip(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": [PIPE], "launches": 4})
    assert run["launches"] == 4
    start = (await agent.expect("start_run")).start_run
    # The server no longer asks for CV reruns: agents re-measure disturbed launches themselves.
    assert (start.items[0].launches, start.items[0].rerun_cv, start.items[0].max_reruns) == (4, 0, 0)
    req = agent.result(run["id"], start.items[0], samples=[10.0, 11.0, 10.5, 12.0])
    rep = req.result_report
    rep.sample_launches.extend([0, 0, 2, 2])
    rep.launches.extend(
        [
            pb.Launch(index=0, wall_s=0.5, cpu_s=0.49, other_busy_frac=0.02, kept=True, samples=2),
            pb.Launch(index=1, wall_s=0.6, cpu_s=0.3, other_busy_frac=0.4, disturbed=True, samples=2),
            pb.Launch(
                index=2,
                wall_s=0.5,
                cpu_s=0.5,
                other_busy_frac=0.03,
                steal_frac=float("nan"),
                throttled_s=0.1,
                remeasured=True,
                kept=True,
                samples=2,
            ),
        ]
    )
    rep.disturbance = 0.03
    rep.reruns = 1
    await agent.send(req)
    await agent.expect("result_ack")
    [res] = (await http.get(f"/api/v1/runs/{run['id']}/results")).json()
    assert res["sample_launches"] == [0, 0, 2, 2]
    assert (res["n"], res["reruns"], res["noisy"]) == (4, 1, False)
    assert res["disturbance"] == pytest.approx(0.03)
    assert res["agent_version"] == "test"  # from the stream's Hello
    # The run's facts snapshot carries the machine's preflight.
    assert [c["check"] for c in (await get_run(http, run["id"]))["facts"]["preflight"]] == ["governor", "smt"]
    assert res["launches"][1] == {
        "index": 1,
        "wall_s": 0.6,
        "cpu_s": 0.3,
        "other_busy_frac": 0.4,
        "steal_frac": 0.0,
        "throttled_s": 0.0,
        "disturbed": True,
        "remeasured": False,
        "kept": False,
        "samples": 2,
        "short_samples": None,  # long samples: no per-sample facts
        "disturbed_samples": None,
    }
    assert (res["launches"][2]["steal_frac"], res["launches"][2]["throttled_s"]) == (None, 0.1)
    # Long samples: no per-sample facts; the kept launches' throttling over their wall time.
    assert res["interference"] == {
        "short_samples": None,
        "disturbed_frac": None,
        "throttled_frac": pytest.approx(0.1),
        "steal_frac": 0.0,
        "other_busy_frac": 0.03,
        # every launch run, the replaced one too: how many the host disturbed, and why in words
        "launches": 3,
        "disturbed_launches": 1,
        "disturbed_why": "other processes kept 40 % of its CPUs busy",
    }

    # An old-style report (no launches) still works: one launch, nothing said about disturbance.
    other = await post(http, {"machine_id": agent.agent_id, "items": [PIPE], "rerun_cv": 0.05})
    item = (await agent.expect("start_run")).start_run.items[0]
    assert (item.rerun_cv, item.max_reruns, item.launches) == (0, 0, 7)
    req = agent.result(other["id"], item)
    req.result_report.reruns = 2
    req.result_report.noisy = True
    req.result_report.attempt_cvs.extend([0.2, 0.09, float("nan")])
    await agent.send(req)
    await agent.expect("result_ack")
    [res] = (await http.get(f"/api/v1/runs/{other['id']}/results")).json()
    assert (res["reruns"], res["noisy"], res["attempt_cvs"]) == (2, True, [0.2, 0.09, None])
    assert (res["sample_launches"], res["launches"], res["disturbance"]) == (None, None, None)


async def test_short_samples_report_how_much_the_host_disturbed(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    item = (await agent.expect("start_run")).start_run.items[0]
    assert item.sample_time_s == 0.0005
    req = agent.result(run["id"], item, samples=[10.0, 10.2, 10.1, 10.3])
    rep = req.result_report
    rep.harness.estimator, rep.harness.sample_time_s = "p5", 0.0005
    rep.harness.sample_ops, rep.harness.samples_per_repetition = 3000, 200
    rep.sample_launches.extend([0, 0, 1, 1])
    rep.launches.extend(
        [
            pb.Launch(index=0, wall_s=0.5, kept=True, samples=2, short_samples=400, disturbed_samples=120),
            # a kernel that says more disturbed samples than it took is capped, not trusted
            pb.Launch(index=1, wall_s=0.5, kept=True, samples=2, short_samples=400, disturbed_samples=900),
        ]
    )
    await agent.send(req)
    await agent.expect("result_ack")
    [res] = (await http.get(f"/api/v1/runs/{run['id']}/results")).json()
    assert res["harness"]["estimator"] == "p5" and res["harness"]["samples_per_repetition"] == 200
    assert [(lr["short_samples"], lr["disturbed_samples"]) for lr in res["launches"]] == [
        (400, 120),
        (400, 400),
    ]
    assert res["interference"]["short_samples"] == 800
    assert res["interference"]["disturbed_frac"] == pytest.approx(520 / 800)
    assert res["median"] == pytest.approx(10.15)  # the figure is the samples' (each a block's p5), untouched


async def test_sample_launches_must_match_samples(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    item = (await agent.expect("start_run")).start_run.items[0]
    req = agent.result(run["id"], item)
    req.result_report.sample_launches.extend([0])
    await agent.send(req)
    assert "sample_launches" in (await agent.expect("reject")).reject.message
