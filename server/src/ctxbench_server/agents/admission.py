"""Admission for what an agent's (re)connect writes: an Enroll, a Hello's machine and catalog.

After a server restart every agent of a fleet reconnects at once. Recording a Hello is a write (the
machine, its facts, its catalog), and on SQLite writes go one at a time: 200 Hellos let in together held
every pooled connection while they queued for the write, so credential checks and REST requests waited
for a connection until they failed, agents were refused with tracebacks and backed off to a minute.

So a few connects are recorded at a time (`concurrent`) and a bounded number wait their turn (`queue`);
a connect beyond that is refused at once, before it touches the database, with UNAVAILABLE and the time
to come back: gRPC's `grpc-retry-pushback-ms` trailer (gRFC A6), which the agent honours. Each refused
connect is booked a turn of its own after the queue ahead and after every connect refused before it, one
`gap` apart, and told to come back half a queue of turns before it, with ±10 % jitter: the refused agents
come back one after the other at the rate the server records them, not together, and join a queue that
still has work ahead of them rather than an idle server. A turn past MAX_RETRY_S is not booked: that
connect comes back at a random time in the horizon's second half and gets a turn then.

The gap is the server's recent rate, measured where it is a rate: the time between connects that finish
while others wait or are inside (the server busy all along), over the last few. Not a connect's own
duration: in a storm it mostly waits for the CPU that the others' handshakes and refusals take, so
duration / concurrent booked the refused ones at half the rate the server kept, and a fleet of 200 at
half a CPU was 157 online at 60 s (all by 73 s); booked at the rate, all by 45 s, and with the
default queue of 256 (a fleet of 200 waits whole, none refused) by 18 s.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import grpc

PUSHBACK_KEY = "grpc-retry-pushback-ms"
MIN_RETRY_S = 0.5
MAX_RETRY_S = 60.0
_JITTER = 0.1
_FIRST_GAP_S = 0.05  # before the server was ever busy: optimistic (one back too early is refused again)
_MIN_GAP_S = 0.001  # turns never collapse into one, whatever a window of fast connects measured
_RATE_WINDOW = 16  # connects finished back to back that the gap is measured over
# A connect with a deadline (an Enroll) waits only if its turn likely comes within this share of the
# time it has left, and when refused comes back at most this share of it before its turn.
_WAIT_WITHIN = 0.5
_LEAD_WITHIN = 0.25


class Busy(Exception):
    """Refused for now: come back after `retry_after_s` (`starting`: the server has not finished its
    start)."""

    def __init__(self, retry_after_s: float, starting: bool = False) -> None:
        super().__init__(f"retry in {retry_after_s:.1f} s")
        self.retry_after_s = retry_after_s
        self.starting = starting


class Admission:
    def __init__(
        self, concurrent: int, queue: int, rand: Callable[[], float] = random.random, is_open: bool = True
    ) -> None:
        if concurrent < 1 or queue < 0:
            raise ValueError("admission needs concurrent >= 1 and queue >= 0")
        self.concurrent = concurrent
        self.queue = queue
        self._slots = asyncio.Semaphore(concurrent)
        self._waiting = 0
        self._inside = 0
        self._gap_s = _FIRST_GAP_S
        self._finished: deque[float] = deque(maxlen=_RATE_WINDOW)  # back to back, the server busy between
        self._booked = 0.0  # monotonic time of the last turn given to a refused connect
        self._rand = rand
        self._clock = time.monotonic
        self.refused = 0
        # False until the server has finished starting (main.py opens it once HTTP answers): a fleet
        # that reconnects the moment gRPC listens is told its turns and costs the start-up nothing.
        self.is_open = is_open

    @property
    def waiting(self) -> int:
        return self._waiting

    def book(self, lead_cap_s: float = MAX_RETRY_S) -> float:
        """Seconds until a refused connect comes back: its own turn, after the queue ahead and the turns
        booked before it, one `gap` apart, less half a queue of turns (it waits behind those, so a rate
        that rose since does not leave the server idle; at most `lead_cap_s`), ±10 %, within
        [MIN_RETRY_S, MAX_RETRY_S]."""
        now = self._clock()
        gap = self._gap_s
        turn = max(self._booked, now + (self._waiting + self._inside) * gap) + gap
        back = turn - now - min((self.queue // 2) * gap, lead_cap_s)
        if back > MAX_RETRY_S:
            # Past the horizon: not booked (they would all get MAX_RETRY_S and come back together), but
            # spread over its second half; they are booked turns when they come back.
            return MAX_RETRY_S * (0.5 + 0.5 * self._rand())
        self._booked = turn
        jitter = 1.0 + _JITTER * (2.0 * self._rand() - 1.0)
        return min(MAX_RETRY_S, max(MIN_RETRY_S, back * jitter))

    def until_open(self) -> None:
        """Raises Busy, with a turn, while the server is still starting; a connect checks it first."""
        if not self.is_open:
            self.refused += 1
            raise Busy(self.book(), starting=True)

    @asynccontextmanager
    async def admit(self, deadline_s: float | None = None) -> AsyncIterator[None]:
        """Waits for a turn, or raises Busy when `queue` connects wait already (or not open yet), or
        when its turn would likely come after half of `deadline_s`, the seconds the caller still waits
        for an answer (an Enroll's deadline: recorded after the agent gave up, its answer would be lost;
        an agent without an enrollment key would then be refused as a takeover of an enrolled id)."""
        self.until_open()
        full = self._waiting >= self.queue
        late = deadline_s is not None and (self._waiting + 1) * self._gap_s > deadline_s * _WAIT_WITHIN
        if (full or late) and self._slots.locked():
            self.refused += 1
            # one with a deadline comes back to a wait well within it
            raise Busy(self.book(MAX_RETRY_S if deadline_s is None else deadline_s * _LEAD_WITHIN))
        self._waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self._waiting -= 1
        self._inside += 1
        try:
            yield
        finally:
            self._inside -= 1
            self._slots.release()
            self._finished_one()

    def _finished_one(self) -> None:
        """Measures the gap over the connects finished back to back (others waiting or inside at each
        end); a connect that leaves the server idle ends the window, the next one starts a new one."""
        now = self._clock()
        self._finished.append(now)
        if len(self._finished) > max(3, self.concurrent):  # more than one round of the slots
            span = self._finished[-1] - self._finished[0]
            self._gap_s = max(_MIN_GAP_S, span / (len(self._finished) - 1))
        if not (self._inside or self._waiting):
            self._finished.clear()


async def refuse(context: grpc.aio.ServicerContext, busy: Busy, what: str) -> None:
    """Aborts the RPC with UNAVAILABLE and the pushback trailer (abort raises)."""
    ms = max(1, round(busy.retry_after_s * 1000))
    context.set_trailing_metadata(((PUSHBACK_KEY, str(ms)),))
    why = "the server is starting" if busy.starting else f"the server is recording other agents' {what}"
    await context.abort(grpc.StatusCode.UNAVAILABLE, f"{why}; retry in {ms / 1000:.1f} s")
