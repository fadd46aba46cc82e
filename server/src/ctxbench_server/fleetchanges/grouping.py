"""How steps of one kernel point on several hosts become one fleet change, and how it is told in words.

Pure functions over History's steps (history/series_steps.py, as alerts read them); service.py reads
them and the other hosts' facts. A group is one point and one direction (slower or faster): its steps,
in time order, each at most `window` after the group's first; a host counts once (its largest step)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any


@dataclass(frozen=True)
class HostStep:
    machine_id: str
    step: Mapping[str, Any]  # a significant step as series_steps gives it

    @property
    def at(self) -> datetime:
        return self.step["at"]  # type: ignore[no-any-return]

    @property
    def up(self) -> bool:
        return float(self.step["ratio"]) > 1.0


Change = tuple[str, str, str]  # fact, repr(before), repr(after): two hosts made the same change


def cluster(steps: Sequence[HostStep], window: timedelta) -> list[list[HostStep]]:
    """The steps of one point, grouped: same direction, each within `window` of its group's first step,
    one step per host (its largest, by |log ratio|). Groups in time order, their steps too."""
    out: list[list[HostStep]] = []
    for up in (True, False):
        group: list[HostStep] = []
        for s in sorted((s for s in steps if s.up == up), key=lambda s: (s.at, s.machine_id)):
            if group and s.at - group[0].at > window:
                out.append(group)
                group = []
            group.append(s)
        if group:
            out.append(group)
    return [_one_per_host(g) for g in sorted(out, key=lambda g: g[0].at)]


def _one_per_host(group: list[HostStep]) -> list[HostStep]:
    best: dict[str, HostStep] = {}
    for s in group:
        cur = best.get(s.machine_id)
        if cur is None or abs(math.log(float(s.step["ratio"]))) > abs(math.log(float(cur.step["ratio"]))):
            best[s.machine_id] = s
    return sorted(best.values(), key=lambda s: (s.at, s.machine_id))


def changes_of(facts_changed: Sequence[Mapping[str, Any]]) -> dict[str, Change]:
    return {f["fact"]: (f["fact"], repr(f["before"]), repr(f["after"])) for f in facts_changed}


def shared(group: Sequence[HostStep]) -> list[dict[str, Any]]:
    """The fact changes every host of the group made across its step, the same way (same before and
    after), in the order the first host lists them: {fact, before, after}."""
    first = group[0].step["facts_changed"]
    common = set(changes_of(first).values())
    for s in group[1:]:
        common &= set(changes_of(s.step["facts_changed"]).values())
    return [
        {"fact": f["fact"], "before": f["before"], "after": f["after"]}
        for f in first
        if (f["fact"], repr(f["before"]), repr(f["after"])) in common
    ]


def group_id(kernel: str, params_key: str, group: Sequence[HostStep]) -> str:
    first = group[0]
    text = f"{kernel}\n{params_key}\n{first.machine_id}\n{first.step['run_id']}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def median_ratio(group: Sequence[HostStep]) -> float:
    r = sorted(float(s.step["ratio"]) for s in group)
    n = len(r)
    return r[n // 2] if n % 2 else math.sqrt(r[n // 2 - 1] * r[n // 2])


def _when(first: datetime, last: datetime) -> str:
    if last - first < timedelta(minutes=1):
        return f"at {first:%Y-%m-%d %H:%M} UTC"
    if first.date() == last.date():
        return f"between {first:%Y-%m-%d %H:%M} and {last:%H:%M} UTC"
    return f"between {first:%Y-%m-%d %H:%M} and {last:%Y-%m-%d %H:%M} UTC"


def _others(n: int, changed: int) -> str:
    if n == 0:
        return "no other host measured it in the window"
    if changed == 0:
        return f"the other {n} did not" if n > 1 else "the other one did not"
    if changed == n:
        return f"the other {n} did too" if n > 1 else "the other one did too"
    return f"{changed} of the other {n} did too"


def summary(
    kernel: str,
    params_key: str,
    ratio: float,
    hosts: int,
    others: int,
    common: Sequence[Mapping[str, Any]],
    first_at: datetime,
    last_at: datetime,
) -> str:
    """`syscall.getppid +18.0 % on 3 of 5 hosts between …; all 3 went from kernel_release 6.1.0 to 6.8.0;
    the other 2 did not`. `common`: the shared changes with `others_changed`."""
    point = f" [{params_key}]" if params_key else ""
    when = _when(first_at, last_at)
    head = f"{kernel}{point} {(ratio - 1) * 100:+.1f} % on {hosts} of {hosts + others} hosts {when}"
    if not common:
        tail = _others(others, 0).replace("did not", "did not step")
        return f"{head}; no fact change common to all {hosts}; {tail}"
    moved = " and ".join(f"{c['fact']} {c['before']} to {c['after']}" for c in common[:3])
    more = f" (+{len(common) - 3} more)" if len(common) > 3 else ""
    all_of = "both" if hosts == 2 else f"all {hosts}"
    return f"{head}; {all_of} went from {moved}{more}; {_others(others, int(common[0]['others_changed']))}"
