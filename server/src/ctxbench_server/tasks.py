"""Ending a background task for sure."""

from __future__ import annotations

import asyncio


async def cancel_and_wait(task: asyncio.Task[None]) -> BaseException | None:
    """Cancels task and waits for it to end, cancelling it again every second while it goes on: a task
    can swallow a cancel (Python 3.11's asyncio.wait_for does when the cancel arrives as what it waits
    for completes), and one waited on after a single cancel is waited on for ever (a clean-clone run hung
    in the server's stop(), its CI filler back in its loop). Returns the exception it had failed with."""
    while not task.done():
        task.cancel()
        await asyncio.wait([task], timeout=1.0)
    return None if task.cancelled() else task.exception()
