"""One simulated agent's answers, paced: what load.py ingest and grpc_floor.py send the same way."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

TICK_S = 0.005  # a paced agent sends what is due this often


async def send_paced(
    send: Callable[[Any], Awaitable[Any]],
    todo: Sequence[tuple[Any, Any]],
    per_s: float,
    offset: float,
    sent: dict[str, float],
) -> None:
    """Sends each item's (RUNNING update, report) pair as it falls due at `per_s` items/s (0: all at
    once), what is due once a tick, after `offset` seconds (agents' ticks spread over one tick); each
    report's send time goes in `sent` by its result id."""
    await asyncio.sleep(offset)
    begin = time.perf_counter()
    done = 0
    while done < len(todo):
        due = len(todo)
        if per_s:
            due = min(due, int((time.perf_counter() - begin) * per_s) + 1)
        for running, report in todo[done:due]:
            await send(running)
            sent[report.result_report.result_id] = time.perf_counter()
            await send(report)
        done = max(done, due)
        if done < len(todo):
            await asyncio.sleep(TICK_S)
