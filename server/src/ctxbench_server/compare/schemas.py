"""The compare and share answers, for OpenAPI (the compare JSON is built as plain dicts: it is large)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, NotRequired, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator, with_config
from typing_extensions import TypedDict

from ctxbench_server.stats.figure import FIGURE_DOC, FIGURE_STAT_DOC
from ctxbench_server.stats.interference import Interference


class CompareCell(BaseModel):
    result_id: str
    run_id: str
    median: float | None
    figure: float | None = Field(description=FIGURE_DOC)
    figure_stat: str = Field(description=FIGURE_STAT_DOC)
    ci_low: float | None = Field(description="CI of the figure: see ci_kind")
    ci_high: float | None
    ci_kind: Literal["bootstrap95", "minmax"] | None = Field(
        default=None,
        description="bootstrap95: 95 % percentile interval of a hierarchical bootstrap (launches, then"
        " samples; 2000 resamples); minmax: the samples' min and max, with fewer than 6 launches (or"
        " fewer than 6 samples of one launch) no interval reaches 95 %",
    )
    n_launches: int | None = Field(default=None, description="kernel processes the samples came from")
    n: int
    cv: float | None
    noisy: bool = Field(description="CV > 3 % or the agent's rerun flag")
    interference: Interference | None = Field(
        default=None,
        description="what the host took away while it was measured (beside the figure, never in it); null: "
        "a result stored before launches",
    )
    samples: list[float]
    created_at: str | None


class Significance(BaseModel):
    significant: bool
    rule: Literal["ci_excludes_noise", "ci_includes_1", "within_noise", "too_few_launches"] = Field(
        description="ci_excludes_noise: the CI lies outside [1/(1+noise), 1+noise] (significant);"
        " ci_includes_1; within_noise: the CI excludes 1 but not the noise band; too_few_launches: a side"
        " has one launch of fewer than 5 samples"
    )
    noise: float = Field(description="run-to-run noise of this point on these machines, relative")
    noise_source: Literal["runs", "default"] = Field(
        description="runs: the spread of the machines' own run medians (at least 2 runs); default: the"
        " kernel family's default floor"
    )
    ci_level: float
    n_launches: list[int] = Field(description="[this machine's launches, the baseline's]")


class CompareRatio(BaseModel):
    ratio: float | None = Field(description="machine figure / baseline figure")
    ci_low: float | None = Field(
        description="percentile interval of the ratios of two independent hierarchical bootstraps"
        " (launches, then samples; 2000 resamples each); see ci_kind"
    )
    ci_high: float | None
    p_value: float | None = Field(
        description="always null since issue 11 (Mann-Whitney U on samples of several launches is far"
        " too confident); `significance` says why a row is significant or not"
    )
    significant: bool = Field(description="significance.significant")
    ci_kind: Literal["bootstrap95", "bootstrap_few_launches"] | None = Field(
        default=None,
        description="bootstrap_few_launches: a side has fewer than 6 launches, the interval covers less"
        " than 95 %; null for the baseline itself",
    )
    significance: Significance | None = Field(default=None, description="null for the baseline itself")


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


@with_config(ConfigDict(extra="forbid"))
class CompareWarning(TypedDict):
    """A message, and the row it is about when it is about one (units differ: no ratio)."""

    message: str
    row: NotRequired[str]
    kernel: NotRequired[str]
    params_key: NotRequired[str]


class CompareOut(BaseModel):
    machines: list[CompareMachine]
    baseline: str
    rows: list[CompareRow]
    geomean: dict[str, float | None]
    geomean_by_family: dict[str, dict[str, float | None]]
    geomean_direction: str
    facts_diff: list[FactDiff]
    result_ids: list[str]
    warnings: list[CompareWarning]


MAX_VIEW_KERNELS = 500
MAX_VIEW_RUNS = 200
MAX_VIEW_DEPTH = 8
MAX_VIEW_STATE_BYTES = 16 * 1024


def _depth(value: Any, level: int = 1) -> int:
    """Nesting depth of a JSON value; stops counting past MAX_VIEW_DEPTH (no deep recursion)."""
    if level > MAX_VIEW_DEPTH or not isinstance(value, dict | list):
        return level
    children = value.values() if isinstance(value, dict) else value
    return max((_depth(c, level + 1) for c in children), default=level)


class ShareView(BaseModel):
    """What a share freezes: the compare query, and any UI state the explorer keeps beside it."""

    model_config = ConfigDict(extra="allow")

    machines: list[Annotated[str, Field(max_length=64)]] = Field(default_factory=list, max_length=20)
    kernels: list[Annotated[str, Field(max_length=200)]] | Annotated[str, Field(max_length=20_000)] = Field(
        default_factory=list, max_length=MAX_VIEW_KERNELS
    )
    baseline: str | None = Field(default=None, max_length=64)
    runs: list[Annotated[str, Field(max_length=64)]] | None = Field(default=None, max_length=MAX_VIEW_RUNS)
    batch: str | None = Field(default=None, max_length=64)
    sides: str | None = Field(
        default=None, max_length=20_000, description="sets of runs as columns: label:run,run;label:run"
    )

    @model_validator(mode="after")
    def _small_ui_state(self) -> ShareView:
        """The explorer's own keys (extra) stay small and shallow: a view is a few bookmarks, not a store."""
        extra = self.model_extra or {}
        if len(extra) > 32:
            raise ValueError("a view holds at most 32 keys of UI state")
        if any(_depth(v) > MAX_VIEW_DEPTH for v in extra.values()):
            raise ValueError(f"UI state nests at most {MAX_VIEW_DEPTH} levels deep")
        if len(json.dumps(extra, default=str)) > MAX_VIEW_STATE_BYTES:
            raise ValueError(f"UI state over {MAX_VIEW_STATE_BYTES} bytes of JSON")
        return self


# A machine's facts (MachineFacts, proto names) a share may carry.
ShareFact = Literal[
    "cpu_model",
    "arch",
    "logical_cpus",
    "physical_cores",
    "smt_active",
    "memory_bytes",
    "kernel_release",
    "virtualization",
    "os_release",
    "governor",
    "boost",
    "clocksource",
    "caches",
    "extra",
    "load_average",
    "preflight",
    "hostname",
    "kernel_cmdline",
    "vulnerabilities",
]
# What a comparison needs, and what a share carries unless its sharer chooses: no hostname, kernel
# command line or vulnerability list for anonymous viewers.
DEFAULT_SHARE_FACTS: tuple[ShareFact, ...] = (
    "cpu_model",
    "arch",
    "logical_cpus",
    "physical_cores",
    "smt_active",
    "memory_bytes",
    "kernel_release",
    "virtualization",
)


class ShareCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    view: ShareView
    facts: list[ShareFact] | None = Field(
        default=None,
        max_length=len(get_args(ShareFact)),
        description="the machine facts the share shows (each machine's facts, its hostname, the facts diff); "
        "null: " + ", ".join(DEFAULT_SHARE_FACTS),
    )


class ShareCreated(BaseModel):
    slug: str
    url: str


class ShareOut(BaseModel):
    view: dict[str, Any]
    result_ids: list[str]
    created_at: str
    compare: CompareOut | None
