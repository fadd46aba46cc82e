from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxbench_server.kit.text import MachineName
from ctxbench_server.models import MachineStatus


class PreflightOut(BaseModel):
    """One check of what makes a host noisy (the agent's preflight, pyperf `system tune`'s list)."""

    check: str
    status: Literal["ok", "warn"]
    detail: str
    fix: str


class MachineOut(BaseModel):
    id: str
    # The display name when one was set (PATCH), else the agent's own name.
    name: str
    display_name: str | None = Field(
        default=None, description="the name someone gave it (PATCH); null: the agent's own name is shown"
    )
    agent_name: str = Field(default="", description="what its agent calls it (--name, else the hostname)")
    hostname: str
    agent_version: str
    online: bool
    status: MachineStatus = Field(description='"pending": waits for an admin\'s approval (no runs)')
    first_seen: datetime
    last_seen: datetime
    facts: dict[str, Any]
    # Empty for agents that predate the preflight.
    preflight: list[PreflightOut]
    kernels: list[str]


class MachinePatch(BaseModel):
    """PATCH /machines/{id}: a display name (the id stays); null or "" gives the agent's own name back."""

    model_config = ConfigDict(extra="forbid")

    name: MachineName | None = Field(
        description='at most 255 characters on one line; null or "": the agent\'s own name again'
    )
