from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel


class PreflightOut(BaseModel):
    """One check of what makes a host noisy (the agent's preflight, pyperf `system tune`'s list)."""

    check: str
    status: Literal["ok", "warn"]
    detail: str
    fix: str


class MachineOut(BaseModel):
    id: str
    name: str
    hostname: str
    agent_version: str
    online: bool
    # "active", "pending" (waits for approval: no runs) or "revoked"
    status: str
    first_seen: datetime
    last_seen: datetime
    facts: dict[str, Any]
    # Empty for agents that predate the preflight.
    preflight: list[PreflightOut]
    kernels: list[str]
