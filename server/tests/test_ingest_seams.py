"""The ingest seams without a server: agents/reports_wire.py turns a ResultReport into the domain's Report
(or says why it is malformed) and a Refused into the Reject code the agent acts on; stored.py tells
its listeners what was stored, once each, and a listener failing after the commit never fails ingest."""

from __future__ import annotations

import dataclasses
import logging
import math
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from ctxbench_server.agents import reports_wire
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.ingest.messages import Refused, Report, Update
from ctxbench_server.stats import pool as stats_pool
from ctxbench_server.stats import summary as stats
from ctxbench_server.stored import ResultStored, StoredEvents


def wire(**kw: object) -> pb.ResultReport:
    base: dict[str, object] = {
        "result_id": str(uuid.uuid4()),
        "run_id": str(uuid.uuid4()),
        "item_id": str(uuid.uuid4()),
        "status": pb.RESULT_STATUS_OK,
        "kernel_id": "syscall.getppid",
        "unit": "ns/op",
        "samples": [10.0, 11.0, 12.0, 10.5, 11.5, 10.2],
        "counters": {"voluntary_ctxsw_per_op": 0.0, "bad": math.inf},
    }
    base.update(kw)
    return pb.ResultReport(**base)  # type: ignore[arg-type]


def test_a_report_becomes_the_domains_report() -> None:
    r = wire(harness=pb.Harness(name="google-benchmark", version="1.7.1", min_time_s=math.nan))
    r.started_at.FromDatetime(datetime(2026, 1, 2, tzinfo=UTC))
    got = reports_wire.report(r)
    assert got.malformed is None and got.status == "ok" and got.samples == list(r.samples)
    assert got.counters == {"voluntary_ctxsw_per_op": 0.0}  # JSON has no infinity
    assert got.harness == {"name": "google-benchmark", "version": "1.7.1", "min_time_s": None}
    assert got.started_at == datetime(2026, 1, 2, tzinfo=UTC) and got.finished_at is None
    assert got.sample_launches is None and got.launches is None


def test_numbers_that_are_not_finite_are_found_however_the_rest_add_up() -> None:
    """reports_wire looks at each number only when their sum is not finite: a sum that overflows keeps
    finite numbers, a NaN or an infinity is still found (a launch's figure becomes None, a counter
    is dropped, a sample makes the report malformed)."""
    big = 1e308
    launch = pb.Launch(index=1, wall_s=big, cpu_s=big, other_busy_frac=0.5, steal_frac=0.0, throttled_s=0.0)
    odd = pb.Launch(index=2, wall_s=1.0, cpu_s=math.nan, other_busy_frac=0.1, steal_frac=math.inf)
    got = reports_wire.report(
        wire(samples=[big, big], counters={"a": big, "b": big, "c": -math.inf}, launches=[launch, odd])
    )
    assert got.malformed is None and got.samples == [big, big] and got.counters == {"a": big, "b": big}
    assert got.launches is not None and got.launches[0]["wall_s"] == big and got.launches[0]["cpu_s"] == big
    assert (got.launches[1]["wall_s"], got.launches[1]["cpu_s"], got.launches[1]["steal_frac"]) == (
        1.0,
        None,
        None,
    )
    assert (
        reports_wire.report(wire(samples=[big, big, math.inf])).malformed
        == "samples are not all finite numbers"
    )


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"result_id": "not-a-uuid"}, "is not a UUID"),
        ({"samples": [1.0, math.nan]}, "not all finite"),
        ({"iterations": [1, 2]}, "iteration counts"),
        ({"sample_launches": [0]}, "sample_launches"),
        ({"unit": "u" * 500}, "unit: 500 characters"),
        ({"params": {f"p{i}": "1" for i in range(65)}}, "65 parameters"),
    ],
)
def test_a_malformed_report_says_why_and_keeps_what_fails_its_item(
    change: dict[str, object], why: str
) -> None:
    r = wire(exit_code=7, **change)
    got = reports_wire.report(r)
    assert got.malformed is not None and why in got.malformed
    assert (got.run_id, got.item_id, got.exit_code) == (r.run_id, r.item_id, 7)
    assert got.samples == []  # nothing of a malformed report is stored


def test_updates_and_reject_codes() -> None:
    msgs = reports_wire.messages(
        [
            pb.ConnectRequest(run_update=pb.RunUpdate(run_id="r", item_id="i", state=pb.ITEM_STATE_RUNNING)),
            pb.ConnectRequest(run_update=pb.RunUpdate(run_id="r", state=pb.ITEM_STATE_DONE, message="m")),
            pb.ConnectRequest(result_report=wire()),
        ]
    )
    assert msgs[0] == Update("r", "i", True, "ITEM_STATE_RUNNING")
    assert msgs[1] == Update("r", "", False, "ITEM_STATE_DONE", "m")
    assert isinstance(msgs[2], Report)
    codes = {
        kind: reports_wire.reject(Refused("x" * 2000, kind, "r" * 100, "id"))
        for kind in reports_wire.REJECT_CODE
    }
    assert {k: v.code for k, v in codes.items()} == {"malformed": 3, "not_yours": 7, "unavailable": 14}
    assert len(codes["malformed"].message) == 1024 and len(codes["malformed"].run_id) == 64


def test_a_measured_report_is_described_without_its_ci() -> None:
    """Ingest stores a report's summary before its ack; the CI of its median comes after (ingest/ci.py),
    and is what the full statistics say (the same seed: the result id)."""
    ok = reports_wire.report(wire())
    s = stats.describe(ok.samples)
    full = stats.compute(ok.samples, ok.sample_launches, ok.result_id)
    assert s.n == 6 and s.as_dict() == dataclasses.asdict(s)
    assert {k: v for k, v in full.as_dict().items() if not k.startswith("ci_")} == s.as_dict()
    got = stats_pool.compute_all(
        [(ok.result_id, ok.samples, ok.sample_launches, 0.5), ("empty", [], None, 0.5)]
    )
    ci = got[ok.result_id]
    assert not isinstance(ci, ValueError) and (ci.low, ci.high, ci.method) == (
        full.ci_low,
        full.ci_high,
        full.ci_method,
    )
    assert isinstance(got["empty"], ValueError)
    with pytest.raises(ValueError):
        stats.describe([math.inf])


async def test_listeners_hear_each_batch_once_and_a_failing_one_never_fails_ingest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events = StoredEvents()
    heard: list[str] = []
    in_tx: list[int] = []

    async def read_model(_session: object, stored: Sequence[ResultStored]) -> None:
        in_tx.append(len(stored))

    def sse(stored: Sequence[ResultStored]) -> None:
        heard.extend(r.result_id for r in stored)

    def broken(_stored: Sequence[ResultStored]) -> None:
        raise RuntimeError("listener bug")

    for fn in (sse, sse, broken):
        events.on_commit(fn)
    events.on_transaction(read_model)
    events.on_transaction(read_model)
    one = ResultStored("a", "m", "r", "i", "k", "p", "ok", datetime.now(UTC))
    await events.stored(None, [one])  # type: ignore[arg-type]
    await events.stored(None, [])  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR):
        events.committed([one])
        events.committed([])
    assert in_tx == [1] and heard == ["a"]
    assert any("listener bug" in (r.exc_text or "") for r in caplog.records)
