"""Schedules, alerts and webhooks end to end, on real processes (issue 28, "Tests and figures").

1. A schedule every 2 s on two real agents, the server killed (SIGKILL) and restarted on the same SQLite
   data dir in between: every slot since creation fires exactly once, the one due while the server was
   down after it comes back, and every run a firing made succeeds.
2. A real step on a scheduled series: agent A restarted under seccomp filters (scripts/tools/seccomp_slow.c,
   as `make bench` section `power` slows a host on purpose) makes its syscall.getppid several times dearer;
   an alert opens at that step, and a webhook receiver in the test gets it twice (the first attempt
   answered 500, then retried), each signed with HMAC-SHA256 over "<timestamp>." + body. Alerts that
   History opens on unchanged series are printed, not asserted: how often an unchanged host opens one is
   `make bench` section `alerts`'s figure (docs/fidelity.md), with the default profile.

The dev settings make it fast: CTXBENCH_ENV=dev allows a 2 s schedule (CTXBENCH_SCHEDULE_MIN_INTERVAL_S),
ticks of 0.2 s; the alert settle time and the webhook backoff are ordinary settings, shortened here."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.e2e.stack import ROOT, TERMINAL, Agent, Process, Server, wait_until
from tests.e2e.webhook_receiver import Got, Receiver

INTERVAL_S = 2
FAST: dict[str, Any] = {"env": "dev", "schedule_tick_s": "0.2", "schedule_min_interval_s": str(INTERVAL_S)}
# schedules/timing.late_after_s at a 0.2 s tick: a firing later than this stood for every slot missed.
LATE_AFTER_S = 10.0
SETTLE_S = 0.5  # CTXBENCH_ALERT_SETTLE_S: a series is checked this long after a result lands on it
BACKOFF_S = 1.0  # CTXBENCH_WEBHOOK_BACKOFF_S: the retry after the receiver's 500
SECRET = "e2e-webhook-secret-0123456789"
GETPPID, FUNCTION = "syscall.getppid", "call.function"
# Seccomp filters on the slowed agent: each runs on every syscall (getppid ~2x dearer with 8, ~5x with 32),
# and a function call makes none. A step far above what load alone moves a short series (CI runs of this
# test saw +37 % and +99 % on an unchanged getppid while other suites ran beside it).
FILTERS = 32
LEARN_RUNS = 5  # runs of each series before the step: History's noise is learned from 3 a side
SEEN_AFTER = 3  # slowed runs the test waits for: the rule needs 2 (MIN_SEGMENT) after a step


@contextmanager
def stack(procs: list[Process]) -> Iterator[None]:
    """The processes stopped whatever happens; on a failure their output tails are printed (pytest shows
    them with the failure); on success each still running stops cleanly."""
    ok = False
    try:
        yield
        ok = True
    except BaseException:
        for p in procs:
            print(f"--- {p.name} (last lines) ---\n{p.output()}")
        raise
    finally:
        codes = [(p.name, p.stop()) for p in reversed(procs) if p.proc.poll() is None]
    if ok:
        assert all(rc == 0 for _, rc in codes), f"did not stop cleanly: {codes}"


def _at(s: str) -> datetime:
    return datetime.fromisoformat(s)


def _agents(
    server: Server, root: Path, names: list[str], procs: list[Process]
) -> tuple[list[Agent], list[str]]:
    """Starts an agent per name; them and their machine ids, once each is online with its catalog."""
    agents = []
    for name in names:
        (root / name).mkdir()
        agents.append(Agent(server, root / name / "spool", name=name))
        procs.append(agents[-1])
    ids = [wait_until(f"{a.name}'s id", _agent_id(a), 30) for a in agents]
    _online(server, ids)
    return agents, ids


def _agent_id(agent: Agent) -> Callable[[], str]:
    return lambda: agent.agent_id_file.read_text().strip() if agent.agent_id_file.exists() else ""


def _online(server: Server, ids: list[str]) -> None:
    def ready() -> bool:
        up = {m["id"] for m in server.http.get("/machines").json() if m["online"] and GETPPID in m["kernels"]}
        return set(ids) <= up

    wait_until(f"machines {ids} online with their catalogs", ready, 30)


def _schedule(server: Server, machines: list[str], items: list[str], **how: Any) -> dict:
    body = {
        "name": "every two seconds",
        "run": {"items": [{"kernel": k} for k in items], **how},
        "machine_ids": machines,
        "interval_s": INTERVAL_S,
    }
    r = server.http.post("/schedules", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def _runs(server: Server, sid: str) -> list[dict]:
    """The runs the schedule made, oldest first."""
    got = server.http.get("/runs", params={"limit": 500, "items": "false"}).json()
    return sorted((r for r in got if r["schedule_id"] == sid), key=lambda r: r["created_at"])


def _idle(server: Server, sid: str) -> bool:
    return all(r["status"] in TERMINAL for r in _runs(server, sid))


def _firings(server: Server, sid: str) -> list[dict]:
    return sorted(server.http.get(f"/schedules/{sid}").json()["firings"], key=lambda f: f["due_at"])


def test_each_slot_fires_once_across_a_server_kill(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    procs: list[Process] = []
    with stack(procs):
        server = Server(data, **FAST)
        procs.append(server)
        _, machines = _agents(server, tmp_path, ["sched-a", "sched-b"], procs)
        created = _schedule(server, machines, [FUNCTION], repetitions=2, min_time_s=0.01, launches=1)
        sid = created["id"]
        wait_until("3 firings", lambda: len(_firings(server, sid)) >= 3, 30)

        # Killed between firings, its runs finished, so that every run can be asked to succeed.
        def quiet() -> datetime | None:
            due = _at(server.http.get(f"/schedules/{sid}").json()["next_due_at"])
            spare = (due - datetime.now(UTC)).total_seconds()
            return due if spare > 0.5 and _idle(server, sid) else None

        missed = wait_until("the runs finished, the next slot 0.5 s away", quiet, 30)
        os.killpg(server.proc.pid, signal.SIGKILL)
        assert server.proc.wait(10) == -signal.SIGKILL
        server.http.close()
        wait_until(
            "the next slot to pass with the server down",
            lambda: datetime.now(UTC) > missed + timedelta(seconds=0.3),
            INTERVAL_S + 5,
            0.05,
        )
        restarted = datetime.now(UTC)
        server = Server(data, http_port=server.http_port, grpc_port=server.grpc_port, **FAST)
        procs.append(server)
        _online(server, machines)  # the agents reconnect by themselves
        wait_until(
            "3 firings after the restart",
            lambda: sum(_at(f["fired_at"]) > restarted for f in _firings(server, sid)) >= 3,
            30,
        )
        assert server.http.post(f"/schedules/{sid}/pause").status_code == 200
        wait_until("the schedule's runs to finish", lambda: _idle(server, sid), 30)

        _check_firings(server, sid, created, machines, missed, restarted)


def _check_firings(
    server: Server, sid: str, created: dict, machines: list[str], missed: datetime, restarted: datetime
) -> None:
    """Every slot since `created` fired once (`missed` after `restarted`), each machine ran once a slot or
    was busy, and every run succeeded."""
    firings, runs = _firings(server, sid), {r["id"]: r for r in _runs(server, sid)}
    shown = [(f["due_at"], f["fired_at"], f["run_ids"], f["skipped"]) for f in firings]
    due = [_at(f["due_at"]) for f in firings]
    assert due[0] == _at(created["next_due_at"]), f"the first slot did not fire: {shown}"
    assert len(set(due)) == len(due), f"a slot fired twice: {shown}"
    # The next slot follows each firing, unless the firing was so late that it stood for every slot
    # missed (schedules/timing.after_firing): then the first slot after it. The kill here is shorter.
    for a, b in itertools.pairwise(firings):
        fired, slot = _at(a["fired_at"]), _at(a["due_at"])
        late = (fired - slot).total_seconds() > LATE_AFTER_S
        step = INTERVAL_S * (int((fired - slot).total_seconds() // INTERVAL_S) + 1) if late else INTERVAL_S
        assert _at(b["due_at"]) == slot + timedelta(seconds=step), f"a slot lost or doubled: {shown}"
    after = next((f for f in firings if _at(f["due_at"]) == missed), None)
    assert after is not None and _at(after["fired_at"]) > restarted, f"{missed} did not fire: {shown}"

    # Each firing ran each machine once, or found its run of the slot before still going.
    for f in firings:
        ran = [runs[r]["machine_id"] for r in f["run_ids"]]
        busy = [s["machine_id"] for s in f["skipped"] if s["reason"] == "busy"]
        assert len(busy) == len(f["skipped"]), f
        # every machine busy: the firing made no run and that is no error; its skips say why
        assert f["error"] is None, f
        assert sorted(ran + busy) == sorted(machines), f"not one run per machine and slot: {f}"
    made = [r for f in firings for r in f["run_ids"]]
    assert sorted(made) == sorted(runs), "runs of the schedule that no firing made, or the reverse"
    assert {r["status"] for r in runs.values()} == {"succeeded"}, list(runs.values())
    for m in machines:
        assert any(r["machine_id"] == m and _at(r["created_at"]) > restarted for r in runs.values()), m
    print(f"{len(firings)} firings, {len(runs)} runs; restarted {restarted - missed} after the slot missed")


def _seccomp_tool(tmp: Path) -> Path:
    """scripts/tools/seccomp_slow.c built as scripts/bench_power.py builds it (gcc), in the test's dir."""
    tool = tmp / "seccomp_slow"
    src = ROOT / "scripts" / "tools" / "seccomp_slow.c"
    subprocess.run(["gcc", "-O2", "-Wall", "-o", str(tool), str(src)], check=True)
    return tool


def _signed(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """A receiver's check, written here from the documented format (webhooks/signing.py)."""
    ts = headers["x-ctxbench-timestamp"]
    mac = hmac.new(secret.encode(), ts.encode() + b"." + body, hashlib.sha256).hexdigest()
    fresh = abs(time.time() - int(ts)) < 300
    return fresh and hmac.compare_digest(headers["x-ctxbench-signature"], f"sha256={mac}")


def _succeeded_each(server: Server, sid: str, machines: list[str]) -> int:
    runs = _runs(server, sid)
    return min(sum(r["machine_id"] == m and r["status"] == "succeeded" for r in runs) for m in machines)


def _pause_until_idle(server: Server, sid: str) -> None:
    assert server.http.post(f"/schedules/{sid}/pause").status_code == 200
    wait_until("the schedule's runs to finish", lambda: _idle(server, sid), 30)


def test_a_real_step_opens_one_alert_delivered_signed_and_retried(tmp_path: Path) -> None:
    tool = _seccomp_tool(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    receiver = Receiver()
    procs: list[Process] = []
    try:
        with stack(procs):
            server = Server(
                data,
                **FAST,
                alert_settle_s=str(SETTLE_S),
                webhook_tick_s="0.2",
                webhook_backoff_s=str(BACKOFF_S),
            )
            procs.append(server)
            r = server.http.post("/webhooks", json={"name": "e2e", "url": receiver.url, "secret": SECRET})
            assert r.status_code == 201, r.text
            hook = r.json()["id"]
            agents, (a, b) = _agents(server, tmp_path, ["alert-a", "alert-b"], procs)
            how = {"repetitions": 10, "min_time_s": 0.02, "launches": 5}  # a launch's layout is outvoted
            sid = _schedule(server, [a, b], [GETPPID, FUNCTION], **how)["id"]
            wait_until(
                f"{LEARN_RUNS} runs on each machine",
                lambda: _succeeded_each(server, sid, [a, b]) >= LEARN_RUNS,
                60,
            )
            # Paused while A restarts, so that no run is cut in two: each is wholly before or after.
            _pause_until_idle(server, sid)
            before = [r for r in _runs(server, sid) if r["machine_id"] == a]
            procs.remove(agents[0])
            assert agents[0].stop() == 0, agents[0].output()
            slowed_agent = Agent(
                server, agents[0].spool, name="alert-a", wrap=[str(tool), str(FILTERS), "--"]
            )
            procs.append(slowed_agent)
            _online(server, [a])
            resumed = datetime.now(UTC)
            assert server.http.post(f"/schedules/{sid}/resume").status_code == 200

            def slowed() -> list[dict]:
                runs = [
                    r for r in _runs(server, sid) if r["machine_id"] == a and _at(r["created_at"]) > resumed
                ]
                done = [r for r in runs if r["status"] == "succeeded"]
                return runs if len(done) >= SEEN_AFTER else []

            after = wait_until(f"{SEEN_AFTER} runs on A slowed", slowed, 30)
            _pause_until_idle(server, sid)
            try:
                alert = wait_until("the step's alert", lambda: _step_alert(server, a, after[0]["id"]), 15)
            except TimeoutError:
                shown = [(x["summary"], x["before_run_id"], x["run_id"]) for x in _alerts_on(server, a)]
                h = server.http.get("/history", params={"machine": a, "kernel": GETPPID}).json()
                steps = [(c["run_id"], c["ratio"], c["significance"]) for c in h.get("changes", [])]
                raise AssertionError(
                    f"no alert at {before[-1]['id']} -> {after[0]['id']}: {shown}; History's steps: {steps}"
                ) from None
            wait_until("its delivery and its retry", lambda: len(_for_alert(receiver, alert["id"])) >= 2, 15)
            _check_alert(server, (a, b), alert, before[-1], after)
            _check_deliveries(server, hook, receiver, alert)
    finally:
        receiver.close()


def _alerts_on(server: Server, machine: str) -> list[dict]:
    return [x for x in server.http.get("/alerts").json() if x["machine_id"] == machine]


def _step_alert(server: Server, machine: str, first_slowed: str) -> dict | None:
    """The alert on the machine's getppid whose first run after the step is the first slowed run."""
    got = [x for x in _alerts_on(server, machine) if x["kernel"] == GETPPID and x["run_id"] == first_slowed]
    return got[0] if got else None


def _for_alert(receiver: Receiver, alert_id: str) -> list[Got]:
    """The deliveries of one alert."""
    return [g for g in receiver.got if json.loads(g.body)["data"].get("id") == alert_id]


def _check_alert(
    server: Server, machines: tuple[str, str], alert: dict, last_before: dict, after: list[dict]
) -> None:
    """The step's alert: on A's getppid, between the last run before the restart and the first slowed one,
    open, the step's size. Alerts elsewhere (B, A's call.function, A's getppid before the step) are printed:
    on this 2-CPU host a short series can read a level change with nothing changed (module docstring)."""
    a, b = machines
    others = [x for x in _alerts_on(server, a) + _alerts_on(server, b) if x["id"] != alert["id"]]
    if others:
        print(f"unchanged series opened {len(others)} alert(s): {[x['summary'] for x in others]}")
    first, second = after[0], after[1]
    assert (alert["before_run_id"], alert["state"]) == (last_before["id"], "open"), alert
    assert alert["ratio"] > 2 and alert["ci_low"] > 1, alert
    # History's rule needs MIN_SEGMENT (2) runs after a step: the alert cannot open before the second slowed
    # run, and it looked at 2 or more of them. When it opened is printed, not asserted: a result is checked
    # once its CI is filled (alerts/watch.py), and on a loaded host that bootstrap lags by seconds (a CI run
    # opened it 5 s after the second slowed run finished).
    opened = _at(alert["opened_at"])
    assert _at(second["started_at"]) < opened, alert
    assert alert["significance"]["runs"][1] >= 2, alert
    print(f"alert opened {opened - _at(first['created_at'])} after the first slowed run was made")


def _check_deliveries(server: Server, hook: str, receiver: Receiver, alert: dict) -> None:
    """The alert POSTed twice, the same signed delivery: 500, then after the backoff 204."""
    got = _for_alert(receiver, alert["id"])
    assert [g.answered for g in got] == [500, 204], got
    for g in got:
        assert _signed(SECRET, g.headers, g.body), g.headers
        assert g.headers["x-ctxbench-event"] == "alert.opened", g.headers
    assert not _signed("not-the-secret-0123456789", got[0].headers, got[0].body)
    assert got[0].body == got[1].body
    assert got[0].headers["x-ctxbench-delivery"] == got[1].headers["x-ctxbench-delivery"]
    assert got[1].at - got[0].at >= 0.9 * BACKOFF_S, got
    doc = json.loads(got[0].body)
    data = doc["data"]
    assert (doc["event"], data["id"]) == ("alert.opened", alert["id"]), doc
    assert (data["machine_id"], data["machine_name"], data["kernel"]) == (
        alert["machine_id"],
        "alert-a",
        GETPPID,
    )
    assert GETPPID in doc["summary"] and "alert-a" in doc["summary"], doc
    deliveries = server.http.get(f"/webhooks/{hook}/deliveries").json()
    [d] = [x for x in deliveries if x["id"] == got[0].headers["x-ctxbench-delivery"]]
    assert (d["status"], d["attempts"], [x["status_code"] for x in d["log"]]) == (
        "delivered",
        2,
        [500, 204],
    ), d
