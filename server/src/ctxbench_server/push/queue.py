"""One event stream's bounded queue (run streams, runs/events.py, and push streams, push/changes.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator


class StreamQueue:
    """Chunks for one open stream, then None (the stream ends). A browser reading too slowly to keep
    `max_queued` chunks is dropped by its publisher (`put` says so), never waited for."""

    def __init__(self, client: str, max_queued: int) -> None:
        self.client = client
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(max_queued)

    def put(self, chunk: str) -> bool:
        """False when the stream has fallen `max_queued` chunks behind."""
        try:
            self.queue.put_nowait(chunk)
        except asyncio.QueueFull:
            return False
        return True

    def end(self, last: str | None = None) -> None:
        """Ends the stream after what it holds; a full queue is emptied first (the stream is dropped)."""
        if self.queue.qsize() + (last is not None) >= self.queue.maxsize:
            while not self.queue.empty():
                self.queue.get_nowait()
        if last is not None:
            self.queue.put_nowait(last)
        self.queue.put_nowait(None)

    async def chunks(self, keepalive_s: float) -> AsyncIterator[str]:
        """What is put, until the end; a comment line whenever nothing came for `keepalive_s`."""
        while True:
            try:
                async with asyncio.timeout(keepalive_s):
                    got = await self.queue.get()
            except TimeoutError:
                yield ": keepalive\n\n"
                continue
            if got is None:
                return
            yield got
