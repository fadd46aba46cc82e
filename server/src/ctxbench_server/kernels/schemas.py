from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ParamOut(BaseModel):
    name: str
    type: str  # int | float | choice | bool | string
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
