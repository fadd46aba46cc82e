"""agents/wire.py: dispatch's commands on the wire, and the size bound dispatch splits StartRuns by."""

from __future__ import annotations

import pytest

from ctxbench_server.agents import wire
from ctxbench_server.dispatch import starts
from ctxbench_server.dispatch.commands import CancelRun, StartItem, StartRun, wire_size_bound
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb


def item(i: int, value: str = "x", params: int = 3) -> StartItem:
    return StartItem(
        item_id=f"item-{i:06d}",
        kernel_id="storage.write",
        params={f"p{j}": value * (j + 1) for j in range(params)},
        repetitions=-(2**31),  # the longest int32 varint
        min_time_s=0.25,
        timeout_s=3600.0,
        launches=2**31 - 1,
    )


@pytest.mark.parametrize(
    "it",
    [item(0), item(1, "é" * 300), item(2, "\U0001f600" * 5000, 5), item(3, "", 0), item(4, "d" * 200_000, 1)],
)
def test_the_bound_is_never_below_protobuf(it: StartItem) -> None:
    real = len(pb.StartRun(items=[wire.run_item(it)]).SerializeToString())
    assert real <= wire_size_bound(it) <= real + 64 + 16 * len(it.params)


def test_commands_on_the_wire() -> None:
    msg = wire.response(StartRun("r1", [item(0)], more=True, continued=True))
    assert msg.WhichOneof("msg") == "start_run"
    sr = msg.start_run
    assert (sr.run_id, sr.more, sr.continued, len(sr.items)) == ("r1", True, True, 1)
    got = sr.items[0]
    assert (got.item_id, got.kernel_id, dict(got.params)) == ("item-000000", "storage.write", item(0).params)
    assert (got.repetitions, got.min_time_s, got.timeout_s, got.launches) == (
        -(2**31),
        0.25,
        3600.0,
        2**31 - 1,
    )
    assert wire.response(CancelRun("r2")).cancel_run.run_id == "r2"
    ack = pb.ConnectResponse(result_ack=pb.ResultAck(result_id="x"))
    assert wire.response(ack) is ack


def test_parts_fit_the_budget_on_the_wire(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(starts, "MAX_START_RUN_BYTES", 64 * 1024)
    items = [item(i, "d" * 900) for i in range(300)]
    parts = starts.start_messages("r", items)
    assert len(parts) > 1
    assert [p.items for p in parts if p.items] and [it for p in parts for it in p.items] == items
    assert [(p.more, p.continued) for p in parts] == [(i < len(parts) - 1, i > 0) for i in range(len(parts))]
    assert all(wire.response(p).start_run.ByteSize() <= 64 * 1024 for p in parts)
    assert starts.start_messages("r", items[:10]) == [StartRun("r", items[:10])]


def test_items_of_one_point_keep_their_own_ids_and_fields() -> None:
    # items are copied from one RunItem per point (agents/wire.py _template): each keeps its id
    same = [item(i) for i in range(3)]
    other = StartItem("other", "syscall.getppid", {"threads": "2"}, 6, 0.1, 60.0, 3)
    big = item(9, "d" * 400)  # over MAX_TEMPLATE_PARAMS: built whole
    got = wire.response(StartRun("r", [*same, other, same[0], big])).start_run.items
    assert [it.item_id for it in got] == [
        "item-000000",
        "item-000001",
        "item-000002",
        "other",
        "item-000000",
        "item-000009",
    ]
    assert [wire.run_item(it) for it in [*same, other, same[0], big]] == list(got)


def test_items_sharing_one_params_dict_get_their_own_fields() -> None:
    # the templates by the identity of a params dict (a batch's machines share one per point): the rest
    # of the key still tells them apart, and a dict changed in place is never served a stale template
    shared = {"threads": "2", "placement": "same_core"}
    a = StartItem("a", "syscall.getppid", shared, 6, 0.1, 60.0, 3)
    b = StartItem("b", "syscall.getpid", shared, 6, 0.1, 60.0, 3)
    c = StartItem("c", "syscall.getppid", shared, 7, 0.1, 60.0, 3)
    first = wire.response(StartRun("r", [a, b, c])).start_run.items
    assert list(first) == [wire.run_item(it) for it in (a, b, c)]
    again = wire.response(StartRun("r2", [c, a])).start_run.items
    assert list(again) == [wire.run_item(it) for it in (c, a)]
    # a big point is built whole and not kept (the caches stay bounded in bytes)
    kept = len(wire._by_params.data)
    big = item(9, "d" * 400)
    assert list(wire.response(StartRun("r", [big])).start_run.items) == [wire.run_item(big)]
    assert len(wire._by_params.data) == kept
