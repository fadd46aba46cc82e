"""The CI of a result's median after its ack (ingest/ci.py), over real gRPC and a real database: a result
is stored with its summary and no CI, the filler writes the CI the full statistics give (seeded by the
result id), a reader never sees "not yet", and results a stopped server left unfilled are found again."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

import httpx
from sqlalchemy import select, update

from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.ingest.ci import CIFiller
from ctxbench_server.main import CtxbenchServer
from ctxbench_server.models import Result
from ctxbench_server.stats import summary as stats

from .conftest import eventually
from .fake_agent import FakeAgent
from .runs_helpers import PIPE, started

MakeAgent = Callable[..., FakeAgent]
SAMPLES = [10.0, 11.0, 12.0, 10.5, 11.5, 10.2, 10.8, 11.1, 10.9, 11.3]


async def stored_ci(server: CtxbenchServer, rid: str) -> tuple[Any, Any, Any]:
    async with server.sessionmaker() as session:
        r = (await session.execute(select(Result).where(Result.id == rid))).scalar_one()
        return r.ci_low, r.ci_high, r.ci_method


async def test_the_ci_is_filled_after_the_ack_with_the_full_statistics(
    server: CtxbenchServer, make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent, run, start = await started(make_agent, http, [PIPE])
    rid = await agent.report(run["id"], start.items[0], samples=SAMPLES)
    full = stats.compute(SAMPLES, None, rid)

    await eventually(lambda: _filled(server, rid))
    assert await stored_ci(server, rid) == (full.ci_low, full.ci_high, full.ci_method)
    [r] = (await http.get(f"/api/v1/runs/{run['id']}/results")).json()
    assert (r["ci_low"], r["ci_high"], r["ci_method"]) == (full.ci_low, full.ci_high, full.ci_method)
    assert server.ci_filler.filled >= 1 and server.ci_filler.pending() == 0


async def test_readers_compute_a_ci_not_filled_yet_and_a_new_filler_finds_it(
    server: CtxbenchServer, make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent, run, start = await started(make_agent, http, [PIPE])
    rid = await agent.report(run["id"], start.items[0], samples=SAMPLES)
    full = stats.compute(SAMPLES, None, rid)
    await eventually(lambda: _filled(server, rid))
    async with server.sessionmaker() as session:  # as a server that stopped before its filler came
        await session.execute(update(Result).values(ci_low=None, ci_high=None, ci_method=None))
        await session.commit()
    [r] = (await http.get(f"/api/v1/runs/{run['id']}/results")).json()
    assert (r["ci_low"], r["ci_high"], r["ci_method"]) == (full.ci_low, full.ci_high, full.ci_method)
    assert (await stored_ci(server, rid))[2] is None  # reading wrote nothing

    fresh = CIFiller(server.sessionmaker)  # a server starting looks in the index first
    assert await fresh.fill_once() == 1
    assert await stored_ci(server, rid) == (full.ci_low, full.ci_high, full.ci_method)
    assert await fresh.fill_once() == 0


async def test_a_runs_stream_sends_a_result_again_with_its_ci(
    server: CtxbenchServer, make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent, run, start = await started(make_agent, http, [PIPE, PIPE])
    feeds = server.dispatcher.events
    sub = await feeds.subscribe(run["id"], "watcher")
    seen: list[dict[str, Any]] = []

    async def watch() -> None:
        async for chunk in feeds.stream(sub):
            if chunk.startswith("event: result"):
                seen.append(json.loads(chunk.split("data: ", 1)[1]))

    task = asyncio.create_task(watch())
    rid = await agent.report(run["id"], start.items[0], samples=SAMPLES)
    full = stats.compute(SAMPLES, None, rid)

    async def sent_with_ci() -> bool:
        return any(r["id"] == rid and r["ci_method"] for r in seen)

    await eventually(sent_with_ci)
    # (sent at once without its CI, and again once it is written; a loaded host may read it late enough
    # that the first send already has it)
    last = [r for r in seen if r["id"] == rid][-1]
    assert (last["ci_low"], last["ci_high"], last["ci_method"]) == (full.ci_low, full.ci_high, full.ci_method)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def test_failed_results_get_no_ci(
    server: CtxbenchServer, make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent, run, start = await started(make_agent, http, [PIPE])
    rid = await agent.report(run["id"], start.items[0], status=pb.RESULT_STATUS_FAILED, error="boom")
    assert (await stored_ci(server, rid)) == (None, None, None)
    assert await CIFiller(server.sessionmaker).fill_once() == 0


async def _filled(server: CtxbenchServer, rid: str) -> bool:
    return (await stored_ci(server, rid))[2] is not None
