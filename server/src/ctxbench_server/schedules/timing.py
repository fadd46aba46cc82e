"""When a schedule fires: its slots (every interval_s since the Unix epoch, or a 5-field cron line in
UTC), each slot's jitter (a hash of the schedule and the slot, so every server process computes the
same), and the slot after a firing (a firing late by more than a few ticks was missed while the servers
were down: it fires once, and the next slot is counted from now, not from the missed one).

Pure functions of their arguments; `now` always comes from the caller (the scheduler's clock)."""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from croniter import CroniterBadCronError, CroniterBadDateError, CroniterNotAlphaError, croniter

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
CRON_FIELDS = 5
# A cron line's jitter is checked against the gaps between its next few slots (a weekday-only line has a
# long one at the weekend: the short ones bound the jitter).
CRON_GAPS_CHECKED = 8


class TimingError(ValueError):
    """A cron line that does not parse or never fires; the message says which."""


@dataclass(frozen=True)
class Timing:
    """Exactly one of interval_s and cron."""

    interval_s: int | None
    cron: str | None
    jitter_s: int = 0

    def slot_after(self, t: datetime) -> datetime:
        """The first slot strictly after t."""
        if self.interval_s is not None:
            k = int((t - EPOCH).total_seconds() // self.interval_s) + 1
            return EPOCH + timedelta(seconds=k * self.interval_s)
        assert self.cron is not None
        try:
            got = croniter(self.cron, t.astimezone(UTC)).get_next(datetime)
        except CroniterBadDateError as e:
            raise TimingError(f"cron {self.cron!r} never fires") from e
        return got.astimezone(UTC)


def check_cron(cron: str) -> str:
    """The line with its fields separated by one space, or TimingError saying what is wrong."""
    fields = cron.split()
    if len(fields) != CRON_FIELDS:
        raise TimingError(
            f"a cron line has {CRON_FIELDS} fields (minute hour day-of-month month day-of-week), "
            f"got {len(fields)}"
        )
    line = " ".join(fields)
    try:
        ok = croniter.is_valid(line)
    except (CroniterBadCronError, CroniterNotAlphaError, ValueError):
        ok = False
    if not ok:
        raise TimingError(f"cron {line!r} does not parse")
    return line


def shortest_gap_s(timing: Timing, now: datetime) -> float:
    """The shortest time between two of the next slots (interval_s itself for an interval)."""
    if timing.interval_s is not None:
        return float(timing.interval_s)
    slots = [timing.slot_after(now)]
    for _ in range(CRON_GAPS_CHECKED):
        slots.append(timing.slot_after(slots[-1]))
    return min((b - a).total_seconds() for a, b in itertools.pairwise(slots))


def jitter(schedule_id: str, due_at: datetime, jitter_s: int) -> timedelta:
    """0 … jitter_s whole seconds, the same on every server: SHA-256 of the schedule's id and the slot."""
    if jitter_s <= 0:
        return timedelta(0)
    key = f"{schedule_id}|{due_at.astimezone(UTC).isoformat()}".encode()
    n = int.from_bytes(hashlib.sha256(key).digest()[:8], "big")
    return timedelta(seconds=n % (jitter_s + 1))


@dataclass(frozen=True)
class Next:
    due_at: datetime  # the slot
    fire_at: datetime  # the slot plus its jitter


def first(schedule_id: str, timing: Timing, now: datetime) -> Next:
    """The schedule's next slot counted from now (on create, on resume, after an edit of its timing)."""
    due = timing.slot_after(now)
    return Next(due, due + jitter(schedule_id, due, timing.jitter_s))


def after_firing(
    schedule_id: str, timing: Timing, due_at: datetime, now: datetime, late_after_s: float
) -> Next:
    """The slot after `due_at`, which fires at `now`. A firing later than late_after_s past its own fire
    time was missed (the servers were down, or stopped): it stands for every slot missed, and the next is
    counted from now. Otherwise the next slot follows due_at, even if it is due already (large jitter)."""
    fire_at = due_at + jitter(schedule_id, due_at, timing.jitter_s)
    if (now - fire_at).total_seconds() > late_after_s:
        return first(schedule_id, timing, now)
    nxt = timing.slot_after(due_at)
    return Next(nxt, nxt + jitter(schedule_id, nxt, timing.jitter_s))


def late_after_s(tick_s: float) -> float:
    """How late a firing may be and still count as on time: three ticks of the scheduler, at least 10 s."""
    return max(3 * tick_s, 10.0)
