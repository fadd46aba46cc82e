from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_ITEMS = 1000


class RunItemIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kernel: str = Field(min_length=1, max_length=200)
    params: dict[str, Any] = Field(default_factory=dict, description="typed values; omitted ones default")
    sweep: dict[str, list[Any]] | None = Field(
        default=None, description="param -> values; items expand to the cartesian product"
    )


class RunCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    machine_id: str = Field(min_length=1, max_length=64)
    items: list[RunItemIn] = Field(min_length=1, max_length=MAX_ITEMS)
    repetitions: int | None = Field(default=None, ge=1, le=1000)
    min_time_s: float | None = Field(default=None, ge=0.001, le=60)


class RunItemOut(BaseModel):
    id: str
    index: int
    kernel: str
    params: dict[str, Any]
    state: str
    error: str | None
    result_id: str | None
    timeout_s: float


class Progress(BaseModel):
    total: int
    done: int
    failed: int
    running: int


class RunOut(BaseModel):
    id: str
    machine_id: str
    status: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    error: str | None
    repetitions: int | None
    min_time_s: float | None
    facts: dict[str, Any] | None
    items: list[RunItemOut]
    progress: Progress


class ResultOut(BaseModel):
    id: str
    run_id: str
    item_id: str
    machine_id: str
    kernel: str
    status: str
    params: dict[str, Any]
    params_key: str
    unit: str
    n: int
    median: float | None
    mean: float | None
    stddev: float | None
    cv: float | None
    min: float | None
    max: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str | None
    samples: list[float]
    iterations: list[int]
    counters: dict[str, float]
    harness: dict[str, Any]
    started_at: datetime | None
    finished_at: datetime | None
    created_at: datetime
