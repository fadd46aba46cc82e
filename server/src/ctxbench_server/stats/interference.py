"""What the host took away while a result was measured, from its stored launches: facts reported beside
the figure, never folded into it (docs/architecture.md "Statistics"). One summary for the results table,
compare cells and anything else that shows a result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field


def summarise_interference(launches: Sequence[Mapping[str, Any]] | None) -> dict[str, Any] | None:
    """Over the kept launches (those whose samples are in the result): short samples timed and the share
    the host disturbed (null for long samples), throttled time over wall time, the largest steal and
    other-process shares. None for a result stored before launches."""
    kept = [lr for lr in launches or [] if lr.get("kept")]
    if not kept:
        return None
    short = sum(lr.get("short_samples") or 0 for lr in kept)
    disturbed = sum(min(lr.get("disturbed_samples") or 0, lr.get("short_samples") or 0) for lr in kept)
    wall = sum(lr.get("wall_s") or 0.0 for lr in kept)
    throttled = sum(lr.get("throttled_s") or 0.0 for lr in kept)
    steal = [lr["steal_frac"] for lr in kept if lr.get("steal_frac") is not None]
    busy = [lr["other_busy_frac"] for lr in kept if lr.get("other_busy_frac") is not None]
    ran = list(launches or [])
    upset = [lr for lr in ran if lr.get("disturbed")]
    return {
        "short_samples": short or None,
        "disturbed_frac": disturbed / short if short else None,
        "throttled_frac": min(1.0, throttled / wall) if wall > 0 else None,
        "steal_frac": max(steal, default=None),
        "other_busy_frac": max(busy, default=None),
        "launches": len(ran),
        "disturbed_launches": len(upset),
        "disturbed_why": disturbed_why(upset),
    }


# The agent's rule (agent/internal/runner: DisturbThreshold, MinCPUWallRatio): a launch is disturbed when
# other processes or steal took more than this share of its CPUs, or its kernel waited for a CPU.
DISTURB_THRESHOLD = 0.1


def _percents(fracs: list[float]) -> str:
    lo, hi = round(100 * min(fracs)), round(100 * max(fracs))
    return f"{lo} %" if lo == hi else f"{lo}\u2013{hi} %"  # an en dash, as the explorer writes ranges


def disturbed_why(upset: Sequence[Mapping[str, Any]]) -> str | None:
    """Why these launches were disturbed, in words (the agent's reasons, from their facts): "other
    processes kept 78-89 % of its CPUs busy; steal took 12 % of its CPUs". None: none was."""
    busy: list[float] = []
    steal: list[float] = []
    waited = 0
    for lr in upset:
        b, st = lr.get("other_busy_frac") or 0.0, lr.get("steal_frac") or 0.0
        if b > DISTURB_THRESHOLD:
            busy.append(b)
        elif st > DISTURB_THRESHOLD:
            steal.append(st)
        else:
            waited += 1
    words = []
    if busy:
        words.append(f"other processes kept {_percents(busy)} of its CPUs busy")
    if steal:
        words.append(f"steal took {_percents(steal)} of its CPUs")
    if waited:
        words.append("the kernel waited for a CPU (its CPU time fell well short of its wall time)")
    return "; ".join(words) or None


class Interference(BaseModel):
    """What the host took away while a result was measured: facts beside its figure, never folded into it
    (docs/architecture.md "Statistics"). Over the launches whose samples are in the result."""

    short_samples: int | None = Field(
        description="short samples timed; null: long samples (no per-sample facts)"
    )
    disturbed_frac: float | None = Field(description="share of the short samples the host disturbed")
    throttled_frac: float | None = Field(
        description="time the CPU quota throttled the agent's cgroup / wall time"
    )
    steal_frac: float | None = Field(description="the largest steal share of a launch (hypervisor)")
    other_busy_frac: float | None = Field(
        description="the largest share of its CPUs other processes kept busy during a launch"
    )
    launches: int | None = Field(
        default=None, description="launches (kernel processes) run for it, re-measurements included"
    )
    disturbed_launches: int | None = Field(
        default=None,
        description="of those, the ones the agent marked disturbed (other processes or steal took over "
        "10 % of its CPUs, or the kernel waited for a CPU)",
    )
    disturbed_why: str | None = Field(
        default=None,
        description='why, in words: "other processes kept 78-89 % of its CPUs busy"; null: none was',
    )
