from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    computed_field,
    field_validator,
    model_validator,
)

from ctxbench_server.contract.aliases import canonical
from ctxbench_server.models import ItemState, RunStatus
from ctxbench_server.sql.text import Note, Title
from ctxbench_server.stats.figure import FIGURE_DOC, FIGURE_STAT_DOC
from ctxbench_server.stats.figure import stat_of as figure_stat_of
from ctxbench_server.stats.interference import Interference, summarise_interference

MAX_ITEMS = 1000
MAX_BATCH = 100
# Budgets of one item (docs/operations.md "Budgets"): checked by the schema, before any expansion.
MAX_PARAMS = 32  # params given, and sweep axes, per item
MAX_SWEEP_VALUES = 256  # values of one sweep axis
MAX_PARAM_STRING = 1024  # characters of a string parameter value (a storage `dir`)
ParamName = Annotated[str, StringConstraints(min_length=1, max_length=64)]

Profile = Literal["quick", "default", "thorough"]


class ProfileSettings(NamedTuple):
    min_time_s: float | None  # None: the kernel's own default (0 on the wire)
    repetitions: int  # in all, shared over the launches (at least 2 per launch)
    thin_sweeps: bool  # `"default"` sweeps keep every other point (first and last kept)
    launches: int  # kernel processes per item, interleaved round-robin over the run's items
    sample_time_s: float  # timed work in one short sample (kernel --sample-time); 0: long samples


# Every profile measures in short samples of 0.5 ms, under a scheduler slice, so a busy host does not
# move the figure (kernels/contract/README.md "Short samples", docs/architecture.md "Statistics"); a
# repetition is a block of them (min_time_s of timed work), two blocks a launch (the agent's minimum).
# The profiles trade time for launches, not for longer samples: what is left of a figure's run-to-run
# noise lives between kernel processes (address layout: call.function reads 4, 5 or 6 cycles by
# launch; where the scheduler put a ping-pong's two sides), so only more launches narrow it
# (docs/fidelity.md "How many launches"). Default's 7 (odd: its median is one launch's figure, not the
# mean of two layouts) give a real 95 % interval (6 or more: ci_method bootstrap95); quick keeps 3 and
# thins sweeps; thorough takes 15.
SAMPLE_TIME_S = 0.0005
PROFILES: dict[str, ProfileSettings] = {
    "quick": ProfileSettings(
        min_time_s=0.025, repetitions=6, thin_sweeps=True, launches=3, sample_time_s=SAMPLE_TIME_S
    ),
    "default": ProfileSettings(
        min_time_s=0.04, repetitions=14, thin_sweeps=False, launches=7, sample_time_s=SAMPLE_TIME_S
    ),
    "thorough": ProfileSettings(
        min_time_s=0.05, repetitions=30, thin_sweeps=False, launches=15, sample_time_s=SAMPLE_TIME_S
    ),
}
MAX_LAUNCHES = 20


class RunItemIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kernel: str = Field(min_length=1, max_length=200)
    params: dict[ParamName, Any] = Field(
        default_factory=dict, max_length=MAX_PARAMS, description="typed values; omitted ones default"
    )
    sweep: (
        dict[ParamName, Annotated[list[Any], Field(max_length=MAX_SWEEP_VALUES)] | Literal["default"]] | None
    ) = Field(
        default=None,
        max_length=MAX_PARAMS,
        description='param -> values (at most 256), or "default" for the kernel\'s default sweep (thinned '
        "by the quick profile); items expand to the cartesian product",
    )

    @field_validator("kernel")
    @classmethod
    def _new_id(cls, v: str) -> str:
        return canonical(v)  # an old id (kernels/aliases.py) names its new one

    @field_validator("params")
    @classmethod
    def _short_param_strings(cls, v: dict[str, Any]) -> dict[str, Any]:
        for name, value in v.items():
            if isinstance(value, str) and len(value) > MAX_PARAM_STRING:
                raise ValueError(f"parameter {name!r}: a value over {MAX_PARAM_STRING} characters")
        return v

    @field_validator("sweep")
    @classmethod
    def _short_sweep_strings(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        for name, values in (v or {}).items():
            if isinstance(values, list) and any(
                isinstance(x, str) and len(x) > MAX_PARAM_STRING for x in values
            ):
                raise ValueError(f"sweep {name!r}: a value over {MAX_PARAM_STRING} characters")
        return v


class RunSpec(BaseModel):
    """What a run measures and how: a POST /runs body without its machines (a schedule's `run`)."""

    model_config = ConfigDict(extra="forbid")

    items: list[RunItemIn] = Field(min_length=1, max_length=MAX_ITEMS)
    profile: Profile = "default"
    repetitions: int | None = Field(default=None, ge=1, le=1000, description="overrides the profile")
    min_time_s: float | None = Field(default=None, ge=0.001, le=60, description="overrides the profile")
    sample_time_s: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="timed work in one short sample, seconds (kernel --sample-time), at most min_time_s; "
        "0: one long sample per repetition (the measure before short samples); overrides the profile",
    )
    launches: int | None = Field(
        default=None,
        ge=1,
        le=MAX_LAUNCHES,
        description="kernel processes per item, interleaved round-robin; overrides the profile",
    )
    rerun_cv: float | None = Field(
        default=None,
        ge=0,
        le=10,
        description="deprecated and ignored: agents re-measure disturbed launches instead of CV reruns",
    )
    max_reruns: int | None = Field(default=None, ge=0, le=20, description="deprecated and ignored")


class RunCreate(RunSpec):
    machine_id: str | None = Field(default=None, min_length=1, max_length=64)
    machine_ids: list[str] | None = Field(
        default=None, min_length=1, max_length=MAX_BATCH, description="one run per machine, one batch"
    )

    @model_validator(mode="after")
    def _one_target(self) -> RunCreate:
        if (self.machine_id is None) == (self.machine_ids is None):
            raise ValueError("give exactly one of machine_id and machine_ids")
        return self


# Responses are read off ORM rows with from_attributes (`Out.model_validate(row)`): their fields are the
# columns' names, but for a kernel id, which the API calls `kernel` (the column: `kernel_id`).
KernelId = Annotated[str, Field(validation_alias=AliasChoices("kernel_id", "kernel"))]


class RunItemOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    index: int
    kernel: KernelId
    params: dict[str, Any]
    state: ItemState
    error: str | None
    result_id: str | None
    timeout_s: float
    attempt: int
    launches_done: int = Field(
        default=0,
        description="its launches (kernel processes) finished so far, re-measurements included; launches "
        "interleave round-robin over the run's items, so this moves while every item is running",
    )
    launches_planned: int = Field(
        default=0,
        description="launches it takes as planned so far (re-measurements add to it); once the item is "
        "finished, the launches it ran",
    )
    launches_wall_s: float = Field(default=0.0, description="wall time of its finished launches, seconds")
    launch_at: datetime | None = Field(
        default=None, description="when one of its launches last started or ended (server clock)"
    )

    @field_validator("launches_planned", mode="before")
    @classmethod
    def _not_told(cls, v: Any) -> Any:
        return 0 if v is None else v  # the column's null: not told yet (runs.service fills it in)


class Progress(BaseModel):
    total: int
    done: int
    failed: int
    running: int
    launches_done: int = Field(default=0, description="launches finished, over all items")
    launches_planned: int = Field(
        default=0, description="launches planned so far, over all items (a finished item: those it ran)"
    )
    launches_wall_s: float = Field(
        default=0.0, description="wall time of the finished launches, seconds: what an ETA is measured from"
    )
    launch_at: datetime | None = Field(
        default=None, description="when a launch last started or ended (server clock); null: none yet"
    )


class RunColumns(BaseModel):
    """A run's own columns (RunOut adds what is read or counted around them)."""

    model_config = ConfigDict(from_attributes=True)

    id: str
    machine_id: str
    batch_id: str
    name: str | None = Field(default=None, description="a person's title for it (PATCH); null: none")
    note: str | None = Field(default=None, description="a person's free-text note (PATCH); null: none")
    batch_name: str | None = Field(default=None, description="its batch's title (PATCH /batches/{id})")
    status: RunStatus
    profile: Profile
    created_at: datetime
    queued_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    error: str | None
    repetitions: int | None
    min_time_s: float | None
    sample_time_s: float | None = Field(
        default=None,
        description="timed work in one short sample, seconds; null: one long sample per repetition",
    )
    rerun_cv: float | None
    max_reruns: int | None
    launches: int | None
    facts: dict[str, Any] | None
    schedule_id: str | None = Field(
        default=None, description="the schedule that made it (GET /schedules/{id}); null: posted by hand"
    )


class RunOut(RunColumns):
    request: dict[str, Any] = Field(
        description="the POST /runs body as posted (items with their sweeps, profile and overrides), machine "
        "ids left out: posting it again with other machine ids repeats the run exactly"
    )
    items: list[RunItemOut] = Field(
        description="every item, by index; empty in the light list (GET /runs?items=false), where "
        "`progress` and `kernels` still count them all"
    )
    progress: Progress
    kernels: list[str] = Field(
        default_factory=list,
        description="the distinct kernel ids of its items, in the order they first appear",
    )


class BatchOut(BaseModel):
    batch_id: str
    runs: list[RunOut]


class LaunchOut(BaseModel):
    """One kernel process of a result (docs/architecture.md "Sampling design"); null: not measured."""

    index: int
    wall_s: float | None
    cpu_s: float | None
    other_busy_frac: float | None = Field(description="other processes' CPU time / (wall x CPUs)")
    steal_frac: float | None
    throttled_s: float | None
    disturbed: bool
    remeasured: bool = Field(description="run again because an earlier launch was disturbed")
    kept: bool
    samples: int = Field(description="repetitions this launch measured")
    short_samples: int | None = Field(
        default=None,
        description="short samples it timed (blocks of them make its repetitions); null: long samples",
    )
    disturbed_samples: int | None = Field(
        default=None,
        description="of those, the ones the host disturbed (the kernel switched out involuntarily beyond its "
        "own switching, or short of CPU time)",
    )


class ResultOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    run_id: str
    item_id: str
    machine_id: str
    kernel: KernelId
    status: str
    params: dict[str, Any]
    params_key: str
    unit: str
    n: int
    median: float | None
    figure: float | None = Field(description=FIGURE_DOC)
    estimator: str | None = Field(
        default=None, description='what a sample is: "p5" of a block of short samples; null: a long sample'
    )
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
    attempt: int
    reruns: int
    noisy: bool
    attempt_cvs: list[float | None]
    sample_launches: list[int] | None
    launches: list[LaunchOut] | None
    disturbance: float | None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def interference(self) -> Interference | None:
        """How much the host took away while this result was measured (from its kept launches)."""
        got = summarise_interference([lr.model_dump() for lr in self.launches or []])
        return None if got is None else Interference(**got)

    agent_version: str | None
    exit_code: int
    error: str | None
    started_at: datetime | None
    finished_at: datetime | None
    created_at: datetime

    @computed_field(description=FIGURE_STAT_DOC)  # type: ignore[prop-decorator]
    @property
    def figure_stat(self) -> str:
        return figure_stat_of(self.estimator)


class TitleNotePatch(BaseModel):
    """PATCH of a run or a batch: the fields given change, those left out stay; null or "" clears."""

    model_config = ConfigDict(extra="forbid")

    name: Title | None = Field(default=None, description="at most 200 characters on one line")
    note: Note | None = Field(default=None, description="at most 4000 characters")


class BatchInfo(BaseModel):
    """GET /batches/{id}: a batch's title and note, and which runs it holds."""

    id: str
    name: str | None
    note: str | None
    run_ids: list[str]
    machine_ids: list[str]
