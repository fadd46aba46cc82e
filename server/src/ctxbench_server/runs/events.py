"""Run progress for browsers: publishers only say "run X changed"; each SSE stream re-reads the run.

Re-reading instead of shipping payloads keeps one source of truth (the database) and makes a slow
browser harmless: it skips intermediate states and still ends with the final one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server.models import FINISHED_RUN
from ctxbench_server.runs import service

KEEPALIVE_S = 15.0  # a comment line this often keeps proxies from closing an idle stream


class RunEvents:
    def __init__(self) -> None:
        self._waiters: defaultdict[str, set[asyncio.Event]] = defaultdict(set)
        self.closed = False

    def notify(self, run_id: str) -> None:
        for ev in self._waiters.get(run_id, ()):
            ev.set()

    @contextlib.contextmanager
    def subscribe(self, run_id: str) -> Iterator[asyncio.Event]:
        ev = asyncio.Event()
        self._waiters[run_id].add(ev)
        try:
            yield ev
        finally:
            self._waiters[run_id].discard(ev)
            if not self._waiters[run_id]:
                del self._waiters[run_id]

    def close(self) -> None:
        """Ends every stream (server shutdown)."""
        self.closed = True
        for evs in self._waiters.values():
            for ev in evs:
                ev.set()


def sse(event: str, data: object) -> str:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


async def stream(
    events: RunEvents, sessionmaker: async_sessionmaker[AsyncSession], run_id: str
) -> AsyncIterator[str]:
    """`run` (the Run) at once and whenever it changes, `result` per measured result (those already
    stored first), `end` (the final Run) when it finishes, then the stream ends."""
    seen: set[str] = set()
    last = ""
    with events.subscribe(run_id) as changed:
        while not events.closed:
            changed.clear()
            async with sessionmaker() as session:
                run = service.run_out(await service.load_run(session, run_id))
                results = await service.list_results(session, run_id)
            snapshot = run.model_dump(mode="json")
            text = json.dumps(snapshot, sort_keys=True)
            if not last:  # on connect the Run comes first
                last = text
                yield sse("run", snapshot)
            for r in results:
                if r.id not in seen:
                    seen.add(r.id)
                    yield sse("result", r.model_dump(mode="json"))
            if text != last:
                last = text
                yield sse("run", snapshot)
            if run.status in FINISHED_RUN:
                yield sse("end", snapshot)
                return
            try:
                await asyncio.wait_for(changed.wait(), KEEPALIVE_S)
            except TimeoutError:
                yield ": keepalive\n\n"
