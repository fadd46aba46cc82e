"""schedules/timing.py: slots of an interval and of a cron line, jitter, and the slot after a firing
(on time, late after a restart). Pure functions: time is an argument, nothing sleeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from ctxbench_server.schedules import timing
from ctxbench_server.schedules.timing import Timing

T0 = datetime(2026, 11, 27, 10, 0, 0, tzinfo=UTC)  # a Friday
S = timedelta(seconds=1)


def test_interval_slots_are_multiples_since_the_epoch() -> None:
    every = Timing(interval_s=300, cron=None)
    assert every.slot_after(T0) == T0 + 300 * S  # 10:00 is a slot: the next one is strictly after
    assert every.slot_after(T0 + 1 * S) == T0 + 300 * S
    assert every.slot_after(T0 + 299 * S) == T0 + 300 * S
    assert every.slot_after(T0 - 1 * S) == T0
    # Every server computes the same slots, whenever each started.
    slot = Timing(90, None).slot_after(T0)
    assert T0 < slot <= T0 + 90 * S and (slot - timing.EPOCH).total_seconds() % 90 == 0


def test_cron_slots_in_utc() -> None:
    quarter = Timing(interval_s=None, cron="*/15 * * * *")
    assert quarter.slot_after(T0) == T0 + 15 * 60 * S
    assert quarter.slot_after(T0 + 14 * 60 * S) == T0 + 15 * 60 * S
    weekdays = Timing(None, "0 9 * * 1-5")
    assert weekdays.slot_after(T0) == datetime(2026, 11, 30, 9, 0, tzinfo=UTC)  # Friday 10:00 -> Monday
    # A time in another zone is the same instant.
    berlin = T0.astimezone(timezone_plus(1))
    assert quarter.slot_after(berlin) == T0 + 15 * 60 * S


def timezone_plus(hours: int) -> timezone:
    return timezone(timedelta(hours=hours))


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("* * * * * *", "5 fields"),
        ("* * * *", "5 fields"),
        ("@hourly", "5 fields"),
        ("61 * * * *", "does not parse"),
        ("* * * * mon-xyz", "does not parse"),
    ],
)
def test_check_cron_refuses(line: str, says: str) -> None:
    with pytest.raises(timing.TimingError, match=says):
        timing.check_cron(line)


def test_check_cron_normalises_spaces_and_a_line_that_never_fires() -> None:
    assert timing.check_cron("  0   9 * *  1-5 ") == "0 9 * * 1-5"
    never = Timing(None, timing.check_cron("0 0 31 2 *"))  # 31 February
    with pytest.raises(timing.TimingError, match="never fires"):
        timing.shortest_gap_s(never, T0)


def test_shortest_gap() -> None:
    assert timing.shortest_gap_s(Timing(600, None), T0) == 600
    assert timing.shortest_gap_s(Timing(None, "0 9 * * 1-5"), T0) == 86400  # not the weekend's
    assert timing.shortest_gap_s(Timing(None, "0,5 * * * *"), T0) == 300


def test_jitter_is_deterministic_and_bounded() -> None:
    slots = [T0 + i * 60 * S for i in range(200)]
    a = [timing.jitter("sched-a", s, 30) for s in slots]
    assert a == [timing.jitter("sched-a", s, 30) for s in slots]  # another server: the same delays
    assert all(timedelta(0) <= j <= 30 * S for j in a)
    assert all(j.microseconds == 0 for j in a)
    assert len(set(a)) > 10  # spread over the range, not one value
    assert a != [timing.jitter("sched-b", s, 30) for s in slots]  # per schedule
    # The same instant in another zone is the same slot.
    assert timing.jitter("sched-a", T0.astimezone(timezone_plus(5)), 30) == a[0]
    assert timing.jitter("sched-a", T0, 0) == timedelta(0)


def test_first_fire_time_is_slot_plus_jitter() -> None:
    t = Timing(300, None, jitter_s=60)
    nxt = timing.first("s", t, T0)
    assert nxt.due_at == T0 + 300 * S
    assert nxt.fire_at == nxt.due_at + timing.jitter("s", nxt.due_at, 60)


def test_after_an_on_time_firing_the_next_slot_follows() -> None:
    t = Timing(60, None)
    nxt = timing.after_firing("s", t, T0, T0 + 2 * S, late_after_s=15)
    assert nxt.due_at == T0 + 60 * S
    # A firing a little late (a slow tick) still counts as on time: no slot is skipped.
    assert timing.after_firing("s", t, T0, T0 + 14 * S, late_after_s=15).due_at == T0 + 60 * S


def test_a_firing_missed_while_down_fires_once_and_the_next_counts_from_now() -> None:
    t = Timing(60, None)
    now = T0 + 3600 * S + 7 * S  # down for an hour: 60 slots missed
    nxt = timing.after_firing("s", t, T0, now, late_after_s=15)
    assert nxt.due_at == T0 + 3660 * S  # the first slot after now, not T0 + 60 s
    assert nxt.fire_at > now


def test_large_jitter_never_skips_a_slot() -> None:
    t = Timing(60, None, jitter_s=60)
    due = T0
    for _ in range(500):
        fire = due + timing.jitter("s", due, 60)
        nxt = timing.after_firing("s", t, due, fire + 1 * S, late_after_s=15)
        assert nxt.due_at == due + 60 * S
        due = nxt.due_at


def test_late_after_s() -> None:
    assert timing.late_after_s(5) == 15
    assert timing.late_after_s(0.1) == 10
