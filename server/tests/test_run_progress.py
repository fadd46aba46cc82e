"""Progress coalesced by the agent (issue 24 item 5): Welcome says how often at most an agent sends
progress (CTXBENCH_PROGRESS_INTERVAL_MS), and one RunProgress carries several items' latest RunUpdates,
each stored as if sent alone; one over the budget is refused with a Reject, and the stream lives on.
Real server, real gRPC (tests/fake_agent.py)."""

from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from ctxbench_server.agents.reports_wire import MAX_PROGRESS_UPDATES
from ctxbench_server.config import Settings
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb

from .runs_helpers import PIPE, MakeAgent, get_run
from .test_launch_progress import launch, launches_done, started


def progress(*updates: Any) -> pb.ConnectRequest:
    """One RunProgress of the RunUpdates in `updates` (each a ConnectRequest as `launch` makes it)."""
    return pb.ConnectRequest(run_progress=pb.RunProgress(updates=[u.run_update for u in updates]))


async def test_one_run_progress_moves_each_items_launches(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent, run, start = await started(make_agent, http, [PIPE] * 3)
    items = start.items
    await agent.send(
        progress(
            launch(run["id"], items[0], 0, 2, wall=1.0),
            launch(run["id"], items[1], 1, 1, wall=0.4),
            launch(run["id"], items[2], 2, 3, wall=1.5),
        )
    )
    got = await launches_done(http, run["id"], 6)
    assert [(it["launches_done"], it["launches_planned"]) for it in got["items"]] == [(2, 3), (1, 3), (3, 3)]
    assert [it["launches_wall_s"] for it in got["items"]] == [1.0, 0.4, 1.5]
    assert [it["state"] for it in got["items"]] == ["running"] * 3
    assert got["status"] == "running"

    # the same checks as a RunUpdate alone: one of another run is refused by itself, the others stored
    await agent.send(
        progress(
            launch(run["id"], items[1], 1, 2, wall=0.9),
            launch("00000000-0000-0000-0000-000000000000", items[0], 0, 3),
        )
    )
    reject = (await agent.expect("reject")).reject
    assert reject.run_id == "00000000-0000-0000-0000-000000000000"
    got = await launches_done(http, run["id"], 7)
    assert [it["launches_done"] for it in got["items"]] == [2, 2, 3]


async def test_run_progress_over_the_budget_is_refused(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent, run, start = await started(make_agent, http, [PIPE])
    too_many = [launch(run["id"], start.items[0], 0, 1)] * (MAX_PROGRESS_UPDATES + 1)
    await agent.send(progress(*too_many))
    reject = (await agent.expect("reject")).reject
    assert reject.code == 3  # INVALID_ARGUMENT: the agent does not send it again
    assert f"{MAX_PROGRESS_UPDATES + 1} updates" in reject.message
    assert "MAX_PROGRESS_UPDATES" in reject.message
    assert reject.run_id == run["id"]
    # nothing of it was stored, and the stream lives on
    assert (await get_run(http, run["id"]))["items"][0]["launches_done"] == 0
    await agent.send(progress(launch(run["id"], start.items[0], 0, 2)))
    await launches_done(http, run["id"], 2)


async def test_welcome_says_the_progress_interval(make_agent: MakeAgent) -> None:
    welcome = await make_agent().connect()
    assert welcome.progress_interval_ms == 1000  # the default


@pytest.mark.parametrize("settings_overrides", [{"progress_interval_ms": 0}])
async def test_interval_zero_turns_coalescing_off(make_agent: MakeAgent) -> None:
    welcome = await make_agent().connect()
    assert welcome.progress_interval_ms == 0


def test_progress_interval_is_bounded() -> None:
    for bad in (-1, 60_001):
        with pytest.raises(ValidationError, match="progress_interval_ms"):
            Settings(progress_interval_ms=bad)
