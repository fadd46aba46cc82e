"""The "result stored" event: ingest tells what it stored, and the read models built from results follow
it (compare's latest_results pointers inside the same transaction, SSE after the commit), so ingest writes
no other domain's tables. Wired once per server process in main.py."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResultStored:
    result_id: str
    machine_id: str
    run_id: str
    item_id: str
    kernel_id: str
    params_key: str
    status: str  # ok: a measurement; anything else has no statistics
    created_at: datetime


# Runs inside ingest's transaction (what it writes commits or rolls back with the results).
InTransaction = Callable[[AsyncSession, Sequence[ResultStored]], Awaitable[None]]
# Runs after the commit (never raises into ingest: the results are stored already).
Committed = Callable[[Sequence[ResultStored]], None]


class StoredEvents:
    """A small in-process pub/sub, one per server process. Subscribing the same callable twice keeps one."""

    def __init__(self) -> None:
        self._in_transaction: list[InTransaction] = []
        self._committed: list[Committed] = []

    def on_transaction(self, fn: InTransaction) -> None:
        if fn not in self._in_transaction:
            self._in_transaction.append(fn)

    def on_commit(self, fn: Committed) -> None:
        if fn not in self._committed:
            self._committed.append(fn)

    async def stored(self, session: AsyncSession, results: Sequence[ResultStored]) -> None:
        if results:
            for fn in self._in_transaction:
                await fn(session, results)

    def committed(self, results: Sequence[ResultStored]) -> None:
        if results:
            for fn in self._committed:
                try:
                    fn(results)
                except Exception:  # a listener's failure is its own: the results are committed
                    log.exception("result-stored listener %r failed", fn)
