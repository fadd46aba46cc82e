"""Alerts as the API gives them, for OpenAPI."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ctxbench_server.history.schemas import FactChange, StepSignificance
from ctxbench_server.sql.text import Note

MAX_LIST = 500  # GET /alerts: at most this many a page


class AlertState(StrEnum):
    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"


class AlertOut(BaseModel):
    id: str
    state: AlertState
    summary: str = Field(description='one line: "syscall.getppid +30.0 % on box (governor: powersave → …)"')
    machine_id: str
    machine_name: str
    kernel: str
    params_key: str = Field(description='the series\' canonical params key "a=1&b=x"')
    params: dict[str, Any]
    unit: str
    run_id: str = Field(description="the first run after the step")
    before_run_id: str = Field(description="the last run before it")
    at: datetime = Field(description="when the first run after the step was stored")
    before: float = Field(description="median of the runs before the step (up to 10)")
    after: float = Field(description="median of the runs after it (up to 10)")
    ratio: float = Field(description="after / before")
    ci_low: float = Field(description="95 % bootstrap CI of the ratio, runs as the unit")
    ci_high: float
    significance: StepSignificance = Field(description="History's rule, as it decided when the alert opened")
    facts_changed: list[FactChange] = Field(description="the host's fact changes between the two runs")
    opened_at: datetime
    acknowledged_at: datetime | None
    acknowledged_by: str | None
    resolved_at: datetime | None
    resolved_by: str | None
    note: str | None


class AlertCounts(BaseModel):
    open: int
    acknowledged: int
    resolved: int


class AlertPatch(BaseModel):
    """A state change (open → acknowledged → resolved; open → resolved) and/or a note."""

    model_config = ConfigDict(extra="forbid")

    state: AlertState | None = Field(
        default=None, description="acknowledged or resolved (open only as it is: an alert does not reopen)"
    )
    note: Note | None = Field(default=None, description='free text, at most 4000 characters; "" clears it')
