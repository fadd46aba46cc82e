"""History's load rule (history/changes.py, 3.): a step across which other processes kept the host's CPUs
far busier on one side is the host's load changing, not the primitive (issue 24: "History over >= 8 runs
of one unchanged host, whether or not the load beside it changes: no change flagged"); the same step
under an unchanged load (or one that moved less than LOAD_SHIFT) is still a change. Through the rule
itself, GET /history and /changes, and the alert watcher."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from ctxbench_server.alerts.watch import AlertWatcher
from ctxbench_server.compare import significance as sig
from ctxbench_server.history import changes

from .compare_helpers import FACTS, T0, Seeder, spread
from .conftest import RolledBack
from .schedules_helpers import Db

QUIET, BUILD = 0.05, 0.85  # other processes' share of the CPUs: a quiet host, a build beside it
# sched.yield as the phases bench read it: 4 runs on the host as it is, 4 beside a build, +10 %.
NOW = T0 + timedelta(days=1)
YIELD = [497.0, 496.0, 498.0, 497.5, 547.0, 548.0, 546.5, 547.5]


def steps(medians: Sequence[float], busy: Sequence[float | None] | None) -> list[changes.Step]:
    keys = [f"run-{i}" for i in range(len(medians))]
    return changes.detect(medians, "sched.yield", "sched", keys, None, busy)


def test_a_step_that_came_with_the_build_is_the_load() -> None:
    [step] = steps(YIELD, [QUIET] * 4 + [BUILD] * 4)
    assert step.index == 4 and step.ratio == pytest.approx(1.10, rel=0.01)
    assert step.rule == changes.RULE_LOAD and not step.significant
    assert (step.busy_before, step.busy_after) == (pytest.approx(QUIET), pytest.approx(BUILD))


def test_the_same_step_under_one_load_is_a_change() -> None:
    for busy in ([QUIET] * 8, [BUILD] * 8, None, [None] * 8, [QUIET] * 4 + [QUIET + 0.25] * 4):
        [step] = steps(YIELD, busy)
        assert step.rule == sig.RULE_SIGNIFICANT and step.significant, busy


def test_a_load_change_explains_a_step_either_way() -> None:
    # the build stopped and the figure rose (thread.create_join's new thread then wakes an idle CPU)
    [up] = steps(YIELD, [BUILD] * 4 + [QUIET] * 4)
    assert up.rule == changes.RULE_LOAD
    # the build came and the figure fell
    [down] = steps(YIELD[4:] + YIELD[:4], [QUIET] * 4 + [BUILD] * 4)
    assert down.ratio < 1 and down.rule == changes.RULE_LOAD


def test_one_run_of_unknown_load_does_not_decide_a_side() -> None:
    [step] = steps(YIELD, [QUIET, None, QUIET, QUIET, BUILD, BUILD, None, BUILD])
    assert step.rule == changes.RULE_LOAD


@pytest.fixture
def db(tmp_path: Path, rolled_back: RolledBack) -> Db:
    return Db(tmp_path, rolled_back.engine, rolled_back)


async def _yield_series(db: Db, mid: str, busy: Sequence[float]) -> list[str]:
    seed = Seeder(db.sessionmaker)
    await seed.kernels()
    await seed.machine(mid)
    runs = []
    for i, (center, b) in enumerate(zip(YIELD, busy, strict=True)):
        run = await seed.run(mid, facts={**FACTS, "hostname": mid, "load_average": [i, 0, 0]})
        await seed.result(
            run, mid, "syscall.getppid", spread(center), sample_launches=[0, 1] * 5, disturbance=b
        )
        runs.append(run)
    return runs


async def test_history_changes_and_alerts_say_the_load_changed(db: Db, api: httpx.AsyncClient) -> None:
    runs = await _yield_series(db, "shared", [QUIET] * 4 + [BUILD] * 4)
    h = (await api.get("/api/v1/history", params={"machine": "shared", "kernel": "syscall.getppid"})).json()
    [step] = h["changes"]
    assert step["run_id"] == runs[4] and not step["significant"]
    assert step["significance"]["rule"] == "load_changed"
    assert step["significance"]["busy"] == [pytest.approx(QUIET), pytest.approx(BUILD)]
    assert [p["disturbance"] for p in h["points"]] == [pytest.approx(QUIET)] * 4 + [pytest.approx(BUILD)] * 4
    body = (await api.get("/api/v1/changes")).json()
    assert body["changes"] == []
    body = (await api.get("/api/v1/changes", params={"all": "true"})).json()
    assert [(c["run_id"], c["significance"]["rule"]) for c in body["changes"]] == [(runs[4], "load_changed")]
    watcher = AlertWatcher(db.sessionmaker, db.settings)
    assert await watcher.check([("shared", "syscall.getppid", "")], NOW) == []


async def test_the_same_series_under_one_load_opens_its_alert(db: Db) -> None:
    runs = await _yield_series(db, "steady", [BUILD] * 8)
    [opened] = await AlertWatcher(db.sessionmaker, db.settings).check(
        [("steady", "syscall.getppid", "")], NOW
    )
    assert opened.run_id == runs[4] and opened.significance["busy"] == [pytest.approx(BUILD)] * 2
