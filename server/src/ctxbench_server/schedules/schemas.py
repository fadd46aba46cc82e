from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxbench_server.machines.labels import MAX_SELECTOR_CHARS
from ctxbench_server.runs.schemas import MAX_BATCH, RunSpec
from ctxbench_server.sql.text import Title

MAX_INTERVAL_S = 366 * 86400
MAX_JITTER_S = 7 * 86400
MAX_CRON_CHARS = 200
FIRINGS_SHOWN = 20  # GET /schedules/{id}: the newest firings
FIRINGS_KEPT = 100  # per schedule; older ones are deleted as new ones are stored

MachineIds = list[str]


class _Target(BaseModel):
    model_config = ConfigDict(extra="forbid")

    machine_ids: MachineIds | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_BATCH,
        description="these machines (each must be known; pending or revoked ones are skipped when it fires)",
    )
    selector: str | None = Field(
        default=None,
        max_length=MAX_SELECTOR_CHARS,
        description="a label selector (`env=prod,!gpu`), resolved at each firing over the active machines; "
        '"" selects every active machine',
    )
    interval_s: int | None = Field(
        default=None,
        ge=1,
        le=MAX_INTERVAL_S,
        description="fire every this many seconds (slots at multiples of it since the Unix epoch); at least "
        "60 (CTXBENCH_SCHEDULE_MIN_INTERVAL_S)",
    )
    cron: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_CRON_CHARS,
        description="fire on a 5-field cron line (minute hour day-of-month month day-of-week), in UTC",
    )
    jitter_s: int | None = Field(
        default=None,
        ge=0,
        le=MAX_JITTER_S,
        description="each slot fires 0 … jitter_s seconds late, the same delay on every server (a hash of "
        "the schedule and the slot); at most the interval (a cron line: its shortest gap)",
    )


class ScheduleCreate(_Target):
    name: Title = Field(min_length=1, description="one line, at most 200 characters")
    run: RunSpec = Field(description="what each firing runs: a POST /runs body without its machines")
    paused: bool = False

    @model_validator(mode="after")
    def _one_each(self) -> ScheduleCreate:
        if (self.machine_ids is None) == (self.selector is None):
            raise ValueError("give exactly one of machine_ids and selector")
        if (self.interval_s is None) == (self.cron is None):
            raise ValueError("give exactly one of interval_s and cron")
        return self


class SchedulePatch(_Target):
    """The fields given change, the others stay. machine_ids replaces a selector and the other way
    round; interval_s replaces a cron line and the other way round."""

    name: Title | None = Field(default=None, min_length=1)
    run: RunSpec | None = None
    paused: bool | None = None

    @model_validator(mode="after")
    def _not_both(self) -> SchedulePatch:
        if self.machine_ids is not None and self.selector is not None:
            raise ValueError("give at most one of machine_ids and selector")
        if self.interval_s is not None and self.cron is not None:
            raise ValueError("give at most one of interval_s and cron")
        return self


class SkippedOut(BaseModel):
    machine_id: str
    reason: str = Field(description='"busy" (a run of this schedule still queued or running), or why not')


class FiringOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    due_at: datetime = Field(description="the slot it fired for (before its jitter)")
    fired_at: datetime
    run_ids: list[str]
    skipped: list[SkippedOut]
    error: str | None = Field(description="why it made no run at all; null otherwise")


class ScheduleOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    name: str
    run: dict[str, Any] = Field(description="the run body as posted (RunSpec)")
    machine_ids: list[str] | None
    selector: str | None
    interval_s: int | None
    cron: str | None
    jitter_s: int
    paused: bool
    next_fire_at: datetime | None = Field(
        description="when its next slot fires (jitter included); null: paused"
    )
    next_due_at: datetime | None = Field(description="its next slot; null: paused")
    created_by: str | None
    created_at: datetime
    updated_at: datetime
    last_firing: FiringOut | None


class ScheduleDetail(ScheduleOut):
    firings: list[FiringOut] = Field(description=f"the newest {FIRINGS_SHOWN} firings, newest first")
