"""How many event streams (Server-Sent Events) may be open: per client and in all, one budget for the
per-run streams (runs/events.py) and the push channel (push/changes.py). docs/operations.md "Budgets"."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

from ctxbench_server.errors import CtxbenchError


class TooManyStreams(CtxbenchError):
    """Too many event streams from this client."""

    status_code = 429
    headers: ClassVar[dict[str, str] | None] = {"Retry-After": "5"}


class StreamsFull(CtxbenchError):
    """Too many event streams open on this server."""

    status_code = 503
    headers: ClassVar[dict[str, str] | None] = {"Retry-After": "5"}


class StreamBudget:
    """Streams open per client (its credential, else its address) and in all; a stream counts from
    `take` until `give` (its response ended, a disconnect included)."""

    def __init__(self, max_per_client: int = 200, max_total: int = 2000) -> None:
        self.max_per_client = max_per_client
        self.max_total = max_total
        self.per_client: Counter[str] = Counter()
        self.open = 0

    def take(self, client: str) -> None:
        """Counts one more stream for `client`; raises TooManyStreams or StreamsFull (naming the
        setting) when the budget is spent."""
        if self.per_client[client] >= self.max_per_client:
            raise TooManyStreams(
                f"{self.per_client[client]} event streams open from this client, the most "
                f"CTXBENCH_MAX_SSE_PER_CLIENT ({self.max_per_client}) allows; close one or retry later"
            )
        if self.open >= self.max_total:
            raise StreamsFull(
                f"{self.open} event streams open on this server, the most CTXBENCH_MAX_SSE_TOTAL "
                f"({self.max_total}) allows; retry later"
            )
        self.per_client[client] += 1
        self.open += 1

    def give(self, client: str) -> None:
        self.per_client[client] -= 1
        if self.per_client[client] <= 0:
            del self.per_client[client]
        self.open -= 1
