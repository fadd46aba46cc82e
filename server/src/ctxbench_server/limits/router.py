"""GET /api/v1/limits: the run profiles and the request budgets, from the tables the server enforces, and
the kernels' own defaults, from the kernel contract, so a client (the explorer's New run page) reads them
instead of keeping a copy that drifts."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from ctxbench_server.compare import service as compare_service
from ctxbench_server.config import Settings
from ctxbench_server.contract import schema as contract
from ctxbench_server.runs import schemas as runs

router = APIRouter(tags=["limits"])


class ProfileOut(BaseModel):
    min_time_s: float | None = Field(
        description="seconds one repetition runs for; null: the kernel's own default"
    )
    repetitions: int = Field(description="repetitions in all per item, shared over the launches")
    launches: int = Field(description="kernel processes per item, interleaved round-robin over the run")
    thin_sweeps: bool = Field(description='"default" sweeps keep every other point (first and last kept)')
    sample_time_s: float = Field(
        description="timed work in one short sample (a repetition is a block of them); 0: long samples"
    )


class KernelDefaultsOut(BaseModel):
    """What a kernel uses for an option a run leaves unset (kernels/contract/kernel-cli.schema.json)."""

    min_time_s: float = Field(description="seconds one repetition runs for (a profile's null min_time_s)")
    repetitions: int


class LimitsOut(BaseModel):
    profiles: dict[str, ProfileOut]
    default_profile: str
    max_items_per_run: int = Field(description="items after sweep expansion, per machine")
    max_machines_per_batch: int
    max_batch_items: int = Field(description="items over all the machines of one batch")
    max_params_per_item: int = Field(description="parameters given, and sweep axes, per item")
    max_sweep_values: int = Field(description="values of one sweep axis")
    max_param_string: int = Field(description="characters of one string parameter value")
    max_launches: int
    max_run_kernel_s: float = Field(description="estimated kernel seconds of one run")
    max_body_bytes: int
    max_compare_machines: int
    item_timeout_s: float = Field(description="default time limit of one item")
    kernel_defaults: KernelDefaultsOut


@router.get("/limits", response_model=LimitsOut)
async def limits(request: Request) -> LimitsOut:
    """The run profiles and every budget a run request is checked against (docs/operations.md "Budgets")."""
    settings: Settings = request.app.state.settings
    return LimitsOut(
        profiles={
            name: ProfileOut(
                min_time_s=p.min_time_s,
                repetitions=p.repetitions,
                launches=p.launches,
                thin_sweeps=p.thin_sweeps,
                sample_time_s=p.sample_time_s,
            )
            for name, p in runs.PROFILES.items()
        },
        default_profile="default",
        max_items_per_run=runs.MAX_ITEMS,
        max_machines_per_batch=runs.MAX_BATCH,
        max_batch_items=settings.max_batch_items,
        max_params_per_item=runs.MAX_PARAMS,
        max_sweep_values=runs.MAX_SWEEP_VALUES,
        max_param_string=runs.MAX_PARAM_STRING,
        max_launches=runs.MAX_LAUNCHES,
        max_run_kernel_s=settings.max_run_kernel_s,
        max_body_bytes=settings.max_body_bytes,
        max_compare_machines=compare_service.MAX_MACHINES,
        item_timeout_s=settings.item_timeout_s,
        kernel_defaults=KernelDefaultsOut(
            min_time_s=contract.KERNEL_DEFAULT_MIN_TIME_S, repetitions=contract.KERNEL_DEFAULT_REPETITIONS
        ),
    )
