"""The run list with 100 machines x 1000 items stored (issue 12): the light form (items=false) answers
fast and small with exact progress, and cursor pages walk the whole list once (served in-process on the
migrated, rolled-back database); the light and full forms agree on a real server with an agent."""

from __future__ import annotations

import time

import httpx
import pytest

from .conftest import RolledBack
from .runs_helpers import PIPE, MakeAgent, agents, fill_runs, post


@pytest.mark.timing
async def test_light_list_of_100k_items_is_fast_and_small(
    rolled_back: RolledBack, api: httpx.AsyncClient
) -> None:
    newest_first = await fill_runs(rolled_back.sessionmaker, machines=100, items_per_run=1000)
    await api.get("/api/v1/runs?limit=200&items=false")  # first use of the connection and caches
    t0 = time.perf_counter()
    r = await api.get("/api/v1/runs?limit=200&items=false")
    took = time.perf_counter() - t0
    assert r.status_code == 200, r.text
    runs = r.json()
    assert [run["id"] for run in runs] == newest_first
    for run in runs:
        assert run["items"] == []
        assert run["progress"] == {
            **{"total": 1000, "done": 1000, "failed": 0, "running": 0},
            # items stored before launch progress (and finished) count no launch
            **{"launches_done": 0, "launches_planned": 0, "launches_wall_s": 0.0, "launch_at": None},
        }
        assert run["kernels"] == ["ctxsw.pipe", "syscall.getppid"]
    # Before: 5-7 s and 21-23 MiB with the items embedded (docs/performance.md, "run list").
    assert len(r.content) < 512 * 1024, len(r.content)
    assert took < 2.0, f"GET /runs?limit=200&items=false took {took:.2f} s"
    assert "X-Next-Cursor" not in r.headers  # all 100 on one page


async def test_cursor_pages_walk_the_list_once(rolled_back: RolledBack, api: httpx.AsyncClient) -> None:
    newest_first = await fill_runs(rolled_back.sessionmaker, machines=70, items_per_run=3)
    seen: list[str] = []
    url: str | None = "/api/v1/runs?limit=30&items=false"
    pages = 0
    while url:
        r = await api.get(url)
        assert r.status_code == 200, r.text
        seen += [run["id"] for run in r.json()]
        pages += 1
        cursor = r.headers.get("X-Next-Cursor")
        if cursor is None:
            assert "Link" not in r.headers
            url = None
            continue
        assert r.headers["Link"].endswith('>; rel="next"')
        url = r.headers["Link"][1 : r.headers["Link"].index(">")]
        assert f"cursor={cursor}" in url and "items=false" in url and "limit=30" in url
    assert pages == 3 and seen == newest_first
    # the full form pages the same way and embeds the items
    r = await api.get("/api/v1/runs", params={"limit": 69})
    cursor = r.headers["X-Next-Cursor"]
    last = (await api.get("/api/v1/runs", params={"limit": 69, "cursor": cursor})).json()
    assert [run["id"] for run in last] == newest_first[69:]
    assert len(last[0]["items"]) == 3 and last[0]["kernels"] == ["ctxsw.pipe", "syscall.getppid"]
    r = await api.get("/api/v1/runs", params={"cursor": "not-a-cursor"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "cursor"]


async def test_light_and_full_forms_agree(make_agent: MakeAgent, http: httpx.AsyncClient) -> None:
    (a,) = await agents(make_agent, 1)
    run = await post(http, {"machine_id": a.agent_id, "items": [PIPE, {"kernel": "syscall.getppid"}, PIPE]})
    start = (await a.expect("start_run")).start_run
    await a.report(run["id"], start.items[0])
    full = (await http.get("/api/v1/runs")).json()[0]
    light = (await http.get("/api/v1/runs?items=false")).json()[0]
    assert full["kernels"] == light["kernels"] == ["ctxsw.pipe", "syscall.getppid"]
    assert (
        full["progress"]
        == light["progress"]
        == {
            **{"total": 3, "done": 1, "failed": 0, "running": 0},
            # the finished item ran one process (its result lists no launches), the others 7 each as planned
            **{"launches_done": 1, "launches_planned": 15, "launches_wall_s": 0.0, "launch_at": None},
        }
    )
    assert {k: v for k, v in full.items() if k != "items"} == {k: v for k, v in light.items() if k != "items"}
