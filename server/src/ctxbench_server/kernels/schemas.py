from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from ctxbench_server.contract.params import ParamType
from ctxbench_server.stats.figure import FIGURE_DOC, FIGURE_STAT_DOC


class ParamOut(BaseModel):
    name: str
    type: ParamType
    default: Any
    min: int | float | None = None
    max: int | float | None = None
    sweep: list[Any] = []
    choices: list[str] = []
    help: str = ""


class SeedReferenceOut(BaseModel):
    seed: str
    value: float
    unit: str
    machine: str
    params: dict[str, str] = {}
    note: str = ""


class KernelOut(BaseModel):
    id: str
    title: str
    family: str
    unit: str
    description: str
    params: list[ParamOut]
    seed_reference: SeedReferenceOut | None
    executable: str = ""
    machines: list[str]
    aliases: list[str] = Field(
        default=[], description="old ids of this kernel, still accepted wherever a kernel id is (renamed)"
    )


class RankedResult(BaseModel):
    machine_id: str
    machine_name: str
    result_id: str
    run_id: str
    at: datetime
    median: float | None
    figure: float | None = Field(description=FIGURE_DOC)
    figure_stat: str = Field(description=FIGURE_STAT_DOC)
    ci_low: float | None
    ci_high: float | None
    unit: str
    n: int


class RankedPoint(BaseModel):
    params_key: str
    params: dict[str, Any]
    unit: str
    higher_is_better: bool
    results: list[RankedResult] = Field(description="each machine's latest result here, best first")
