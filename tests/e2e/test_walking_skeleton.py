"""One run from REST to a kernel on a real agent and back, on real parts (issue: walking skeleton)."""

from __future__ import annotations

import math
import os
import re
import signal
import socket
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import httpx

from tests.e2e.stack import ROOT, Agent, Server, base_env, post_run, wait_run, wait_until


def test_getppid_run_lands_with_samples_and_statistics(server: Server, machine: dict) -> None:
    assert "syscall.getppid" in machine["kernels"]
    facts = machine["facts"]
    assert facts["hostname"] and facts["logical_cpus"] >= 1 and facts["kernel_release"]

    run = post_run(server, machine["id"], [{"kernel": "syscall.getppid"}], repetitions=5, min_time_s=0.05)
    assert run["status"] in {"queued", "running"}
    run = wait_run(server, run["id"])
    assert run["status"] == "succeeded", run

    results = server.http.get(f"/runs/{run['id']}/results").json()
    assert len(results) == 1
    res = results[0]
    assert res["kernel"] == "syscall.getppid" and res["unit"] == "ns/op"
    assert res["n"] >= 5 and len(res["samples"]) == res["n"]
    assert 10 <= res["median"] <= 100_000, res
    # the CI is its figure's: the p5 of the short samples' repetitions (the kernels' default)
    assert res["figure_stat"] == "p5" and res["min"] <= res["figure"] <= res["median"]
    assert res["min"] <= res["ci_low"] <= res["figure"] <= res["ci_high"] <= res["max"]
    assert math.isclose(res["mean"], sum(res["samples"]) / res["n"], rel_tol=1e-9)
    assert all(it > 0 for it in res["iterations"])
    started, finished = (datetime.fromisoformat(res[k]) for k in ("started_at", "finished_at"))
    assert timedelta(0) < finished - started < timedelta(minutes=1), (started, finished)


def test_every_listed_kernel_runs_through_the_agent(server: Server, machine: dict) -> None:
    kernels = server.http.get("/kernels").json()
    ids = sorted(k["id"] for k in kernels if machine["id"] in k["machines"])
    assert {"call.function", "syscall.getppid", "ctxswitch.pipe"} <= set(ids)

    # Two launches an item (every kernel's launch and its interleaving, in a third of the default
    # profile's launches; the default profile's own counts are test_batches_and_queue's business).
    items = [{"kernel": k} for k in ids]
    run = post_run(server, machine["id"], items, repetitions=3, min_time_s=0.01, launches=2)
    run = wait_run(server, run["id"], timeout=60 + 10 * len(ids))
    failed = [(i["kernel"], i["error"]) for i in run["items"] if i["state"] != "succeeded"]
    assert not failed, failed
    results = server.http.get(f"/runs/{run['id']}/results").json()
    assert sorted(r["kernel"] for r in results) == ids
    for r in results:
        # 3 repetitions over 2 launches: each launch takes at least 2
        assert r["n"] == 4 and all(s > 0 for s in r["samples"]), r
        assert len(set(r["sample_launches"])) == 2, r


def test_items_are_measured_in_interleaved_launches(server: Server, machine: dict) -> None:
    assert {c["check"] for c in machine["preflight"]} >= {"governor", "smt", "isolated_cpus", "cpu_quota"}
    items = [{"kernel": "syscall.getppid"}, {"kernel": "call.function"}]
    run = post_run(server, machine["id"], items, repetitions=6, min_time_s=0.02, launches=3)
    assert run["launches"] == 3
    run = wait_run(server, run["id"])
    assert run["status"] == "succeeded", run
    results = {r["kernel"]: r for r in server.http.get(f"/runs/{run['id']}/results").json()}
    for r in results.values():
        assert r["n"] == 6 and len(r["sample_launches"]) == 6, r
        kept = [lr for lr in r["launches"] if lr["kept"]]
        assert len(kept) == 3 and sorted({*r["sample_launches"]}) == sorted(lr["index"] for lr in kept), r
        for lr in r["launches"]:
            assert lr["wall_s"] > 0 and lr["cpu_s"] > 0 and lr["samples"] == 2, lr
            assert 0 <= lr["other_busy_frac"] <= 1 and lr["throttled_s"] >= 0, lr
        assert r["reruns"] == sum(lr["remeasured"] for lr in r["launches"])
        assert r["disturbance"] == max(lr["other_busy_frac"] for lr in kept)
        assert r["agent_version"]
    # Interleaved: each item's span overlaps the other's.
    a, b = results["syscall.getppid"], results["call.function"]
    assert a["started_at"] < b["started_at"] < a["finished_at"], (a, b)
    if a["reruns"] == b["reruns"] == 0:
        # Without remeasured launches, the last launch runs the items in order. A remeasured
        # launch of the first item comes after the round, so its span may end last.
        assert a["finished_at"] <= b["finished_at"], (a, b)


def test_context_switch_counters_prove_the_switches(server: Server, machine: dict) -> None:
    run = post_run(
        server,
        machine["id"],
        [{"kernel": "ctxswitch.pipe", "params": {"placement": "same_core"}}],
        repetitions=5,
        min_time_s=0.05,
    )
    run = wait_run(server, run["id"])
    assert run["status"] == "succeeded", run
    (res,) = server.http.get(f"/runs/{run['id']}/results").json()
    assert res["params"]["placement"] == "same_core"
    # Pinned to one core, every hand-off over the pipe blocks: about one voluntary switch per switch.
    assert 0.5 <= res["counters"]["voluntary_ctxsw_per_op"] <= 3, res["counters"]


def test_bad_run_specs_are_refused_naming_the_field(server: Server, machine: dict) -> None:
    mid = machine["id"]
    r = server.http.post("/runs", json={"machine_id": mid, "items": [{"kernel": "no.such_kernel"}]})
    assert r.status_code == 422 and "no.such_kernel" in r.text
    r = server.http.post(
        "/runs",
        json={"machine_id": mid, "items": [{"kernel": "ctxswitch.pipe", "params": {"placement": "moon"}}]},
    )
    assert r.status_code == 422 and "placement" in r.text
    unknown_machine = {"machine_id": "no-such-machine", "items": [{"kernel": "call.function"}]}
    r = server.http.post("/runs", json=unknown_machine)
    assert r.status_code == 404
    r = server.http.post("/runs", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422
    # Nothing was stored by the refused requests.
    assert server.http.get("/runs").json() == []


def test_queued_run_waits_for_its_agent_and_identity_survives_restart(
    server: Server, agent: Agent, machine: dict, tmp_path: Path
) -> None:
    assert agent.stop() == 0
    wait_until(
        "the machine to go offline",
        lambda: not server.http.get(f"/machines/{machine['id']}").json()["online"],
        15,
    )
    run = post_run(server, machine["id"], [{"kernel": "call.function"}], repetitions=5, min_time_s=0.01)
    assert run["status"] == "queued"
    assert server.http.get(f"/runs/{run['id']}").json()["status"] == "queued"

    again = Agent(server, agent.spool)  # same spool: same identity
    try:
        run = wait_run(server, run["id"])
        assert run["status"] == "succeeded", run
        machines = server.http.get("/machines").json()
        assert [m["id"] for m in machines] == [machine["id"]]
    finally:
        assert again.stop() == 0


def test_agent_with_a_wrong_token_is_refused(server: Server, tmp_path: Path) -> None:
    bad = tmp_path / "bad-token"
    bad.write_text("not-the-token\n")
    intruder = Agent(server, tmp_path / "spool-bad", name="intruder", token_file=bad)
    try:
        intruder.wait_for_line(re.compile(r"(?i)unauthenticated"), 20)
        assert server.http.get("/machines").json() == []
    finally:
        intruder.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_run_script_starts_both_and_ctrl_c_stops_both(tmp_path: Path) -> None:
    http_port, grpc_port = _free_port(), _free_port()
    env = base_env(
        CTXBENCH_HTTP_PORT=str(http_port),
        CTXBENCH_GRPC_PORT=str(grpc_port),
        CTXBENCH_DATA_DIR=str(tmp_path / "data"),
    )
    proc = subprocess.Popen(
        ["bash", str(ROOT / "scripts" / "run.sh")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        api = f"http://127.0.0.1:{http_port}/api/v1"

        def agent_online() -> bool:
            token_file = tmp_path / "data" / "admin-token"
            if not token_file.exists():
                return False
            auth = {"authorization": f"Bearer {token_file.read_text().strip()}"}
            try:
                return any(m["online"] for m in httpx.get(f"{api}/machines", headers=auth, timeout=2).json())
            except httpx.HTTPError:
                return False

        wait_until("make run's agent to come online", agent_online, 90, interval=0.5)
        assert (tmp_path / "data" / "ctxbench.db").exists()
        assert (tmp_path / "data" / "agent-token").exists()
        index = httpx.get(f"http://127.0.0.1:{http_port}/", timeout=5)
        assert index.status_code == 200 and "<html" in index.text.lower()
        # Ctrl-C reaches the whole foreground process group.
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
        assert proc.returncode == 0, out
        assert "http://127.0.0.1:" in out
        # The banner shows the one-time sign-in link the server printed.
        assert re.search(
            rf"ctxbench is running: sign in at http://127\.0\.0\.1:{http_port}/\?login=\S+", out
        ), out
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    leftovers = subprocess.run(
        ["pgrep", "-s", str(proc.pid)], capture_output=True, text=True, check=False
    ).stdout.split()
    assert leftovers == [], f"processes left running after Ctrl-C: {leftovers}"
