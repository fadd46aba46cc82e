"""The server's stop() ends its background tasks even when one swallows a cancellation (Python 3.11's
asyncio.wait_for can, when what it waits for completes as the cancel arrives)."""

from __future__ import annotations

import asyncio

from ctxbench_server.main import _cancelled


async def test_a_task_that_swallowed_its_cancel_is_cancelled_again() -> None:
    swallowed = asyncio.Event()

    async def stubborn() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            swallowed.set()  # what a wait_for that lost the race does: the task goes on
        await asyncio.Event().wait()

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    await asyncio.wait_for(_cancelled(task), 10)
    assert swallowed.is_set() and task.cancelled()


async def test_a_task_that_had_failed_is_logged_not_raised(caplog) -> None:  # type: ignore[no-untyped-def]
    async def broken() -> None:
        raise RuntimeError("boom")

    task = asyncio.create_task(broken(), name="broken-task")
    await asyncio.sleep(0)
    await _cancelled(task)
    assert "broken-task had failed" in caplog.text and "boom" in caplog.text
