"""The compare and share answers, for OpenAPI (the compare JSON is built as plain dicts: it is large)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class CompareCell(BaseModel):
    result_id: str
    run_id: str
    median: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    cv: float | None
    noisy: bool = Field(description="CV > 3 % or the agent's rerun flag")
    samples: list[float]
    created_at: str | None


class CompareRatio(BaseModel):
    ratio: float | None = Field(description="machine median / baseline median")
    ci_low: float | None = Field(description="95 % percentile bootstrap of medians, 2000 resamples")
    ci_high: float | None
    p_value: float | None = Field(description="two-sided Mann-Whitney U; null when n < 5 on a side")
    significant: bool


class CompareRow(BaseModel):
    kernel: str
    family: str
    params: dict[str, Any]
    params_key: str
    unit: str
    higher_is_better: bool
    cells: dict[str, CompareCell]
    ratios: dict[str, CompareRatio]
    seed_reference: dict[str, Any] | None
    warning: str | None = None
    units: dict[str, str] | None = Field(default=None, description="each machine's unit, when they differ")


class CompareMachine(BaseModel):
    id: str
    name: str
    hostname: str
    online: bool
    facts: dict[str, Any]
    facts_run_id: str | None = Field(description="the run whose facts snapshot is shown; null: current facts")


class FactDiff(BaseModel):
    fact: str
    values: dict[str, Any]
    hint: str | None


class CompareOut(BaseModel):
    machines: list[CompareMachine]
    baseline: str
    rows: list[CompareRow]
    geomean: dict[str, float | None]
    geomean_by_family: dict[str, dict[str, float | None]]
    geomean_direction: str
    facts_diff: list[FactDiff]
    result_ids: list[str]
    warnings: list[dict[str, Any]]


class ShareView(BaseModel):
    """What a share freezes: the compare query, and any UI state the explorer keeps beside it."""

    model_config = ConfigDict(extra="allow")

    machines: list[str] = Field(default_factory=list, max_length=20)
    kernels: list[str] | str = Field(default_factory=list)
    baseline: str | None = None
    runs: list[str] | None = None
    batch: str | None = None


class ShareCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    view: ShareView


class ShareCreated(BaseModel):
    slug: str
    url: str


class ShareOut(BaseModel):
    view: dict[str, Any]
    result_ids: list[str]
    created_at: str
    compare: CompareOut | None
