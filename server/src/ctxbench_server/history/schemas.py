"""History answers, for OpenAPI."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from ctxbench_server.stats.figure import FIGURE_DOC, FIGURE_STAT_DOC


class HistoryPoint(BaseModel):
    run_id: str
    result_id: str
    at: datetime = Field(description="when the result was stored")
    median: float
    figure: float = Field(description=FIGURE_DOC)
    figure_stat: str = Field(description=FIGURE_STAT_DOC)
    ci_low: float | None = Field(description="the result's CI of its figure (ci_method says which)")
    ci_high: float | None
    ci_method: str | None
    n: int
    n_launches: int
    unit: str
    agent_version: str | None
    noisy: bool
    disturbance: float | None


class FactChange(BaseModel):
    run_id: str = Field(description="the first run with the new value")
    at: datetime
    fact: str = Field(
        description='a machine fact ("governor", "vulnerabilities.spectre_v2", "extra.microcode")'
        ' or "agent_version"'
    )
    before: Any
    after: Any
    hint: str | None = Field(description="what this fact is known to change")


def _unknown_busy() -> list[float | None]:
    return [None, None]


class StepSignificance(BaseModel):
    significant: bool
    rule: Literal[
        "ci_excludes_noise", "ci_includes_1", "within_noise", "too_few_launches", "load_changed"
    ] = Field(
        description="as in Compare: ci_excludes_noise (significant), ci_includes_1, within_noise;"
        " too_few_launches: a side has fewer than 2 runs; load_changed: the CI clears the noise, but"
        " other processes kept the host's CPUs busier on one side by 0.3 or more (`busy`): the host's"
        " load changed, not called a change of the primitive"
    )
    noise: float = Field(description="run-to-run noise of this point, learned from each side's runs")
    noise_source: Literal["runs", "default"]
    ci_level: float
    runs: list[int] = Field(description="[runs before, runs after] the test looked at")
    busy: list[float | None] = Field(
        default_factory=_unknown_busy,
        description="[before, after]: the median over each side's runs of their `disturbance` (the largest"
        " share of the host's CPUs other processes kept busy during a launch); null: not known",
    )


class Step(BaseModel):
    at: datetime = Field(description="when the first run after the step was stored")
    run_id: str = Field(description="the first run after the step")
    before_run_id: str = Field(description="the last run before it")
    index: int = Field(description="index of run_id among the series' points")
    before: float = Field(description="median of the figures of the runs before (up to 10)")
    after: float = Field(description="median of the figures of the runs after (up to 10)")
    ratio: float = Field(description="after / before")
    ci_low: float = Field(description="95 % bootstrap CI of the ratio, runs as the unit")
    ci_high: float
    significant: bool
    significance: StepSignificance
    facts_changed: list[FactChange] = Field(description="facts that changed between the two runs")


class MachineRef(BaseModel):
    id: str
    name: str


class HistoryOut(BaseModel):
    machine: MachineRef
    kernel: str
    family: str
    params_key: str
    params: dict[str, Any]
    unit: str
    truncated: bool = Field(description="more results exist than the newest 200 shown")
    points: list[HistoryPoint]
    fact_changes: list[FactChange]
    changes: list[Step] = Field(description="every candidate step, tested; significant ones are real")


class PointKey(BaseModel):
    params_key: str
    params: dict[str, Any]
    runs: int
    last_at: datetime


class FleetStep(Step):
    machine_id: str
    machine_name: str
    kernel: str
    params_key: str
    params: dict[str, Any]
    unit: str


class ChangesOut(BaseModel):
    changes: list[FleetStep]
    more: bool = Field(description="more changes than `limit`")
    truncated: bool = Field(description="only the newest 200,000 results were scanned")
