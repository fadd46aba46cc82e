"""Failed sign-ins per client address: a token bucket each, in this process, bounded in memory.

An attempt (a token or a login code traded for a session) takes one token before anything is looked up;
a success gives it back, so only failures spend the bucket. An empty bucket refuses at once (429 with
Retry-After), whatever the attempt carries: a right guess is not told apart from a wrong one, and the
refusal costs no database work at all. Each server process keeps its own buckets.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import grpc
from fastapi import Request

from ctxbench_server.errors import CtxbenchError

# Addresses remembered at once; past this the least recently seen is forgotten (its bucket starts full).
MAX_CLIENTS = 10_000


class TooManySignIns(CtxbenchError, http=429, grpc_code=grpc.StatusCode.RESOURCE_EXHAUSTED):
    """Too many failed sign-ins from this address."""

    def __init__(self, detail: str, retry_after_s: int) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s
        # Per answer, where other errors name one class-wide: the handler sends `exc.headers`.
        vars(self)["headers"] = {"Retry-After": str(retry_after_s)}


@dataclass
class _Bucket:
    tokens: float
    at: float


class SignInLimiter:
    """`burst` failed sign-ins per client at once, then one more every `refill_s` seconds."""

    def __init__(
        self,
        burst: int,
        refill_s: float,
        max_clients: int = MAX_CLIENTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.burst = burst
        self.refill_s = refill_s
        self.max_clients = max_clients
        self.clock = clock
        self.buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def take(self, client: str) -> None:
        """Spends one attempt of `client`'s, or raises TooManySignIns when none is left."""
        now = self.clock()
        bucket = self.buckets.get(client)
        if bucket is None:
            bucket = self.buckets[client] = _Bucket(float(self.burst), now)
            if len(self.buckets) > self.max_clients:
                self.buckets.popitem(last=False)
        else:
            bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) / self.refill_s)
            bucket.at = now
            self.buckets.move_to_end(client)
        if bucket.tokens < 1:
            wait = max(1, math.ceil((1 - bucket.tokens) * self.refill_s))
            raise TooManySignIns(
                f"too many failed sign-ins from this address (CTXBENCH_SIGN_IN_BURST {self.burst}, then one "
                f"every CTXBENCH_SIGN_IN_REFILL_S {self.refill_s:g} s): retry in {wait} s",
                wait,
            )
        bucket.tokens -= 1

    def give_back(self, client: str) -> None:
        """The attempt succeeded: it does not count. A full bucket is forgotten (nothing to remember)."""
        bucket = self.buckets.get(client)
        if bucket is None:
            return
        bucket.tokens += 1
        if bucket.tokens >= self.burst:
            del self.buckets[client]

    @contextmanager
    def attempt(self, client: str) -> Iterator[None]:
        """Around one sign-in: spent before it, given back if it raised nothing."""
        self.take(client)
        yield
        self.give_back(client)


def client_address(request: Request) -> str:
    """The bucket's key: the peer's address (uvicorn puts X-Forwarded-For's there for a proxy it trusts,
    by default one on 127.0.0.1 or ::1); an IPv6 address by its /64, which one host usually holds whole."""
    host = request.client.host if request.client else ""
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return host or "?"
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.IPv6Network((addr, 64), strict=False))
    return str(addr)


def sign_in_limiter(request: Request) -> SignInLimiter:
    """This app's limiter, made on first use from its settings."""
    state = request.app.state
    limiter: SignInLimiter | None = getattr(state, "sign_in_limiter", None)
    if limiter is None:
        s = state.settings
        limiter = state.sign_in_limiter = SignInLimiter(s.sign_in_burst, s.sign_in_refill_s)
    return limiter
