from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxbench_server.models import MachineStatus
from ctxbench_server.sql.text import MachineName


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
    agent_offered_version: str | None = Field(
        default=None,
        description="the agent version this server's installer installs on the host's architecture (the "
        "newest bundle of `make dist`); null: none offered for it",
    )
    agent_outdated: bool = Field(
        default=False,
        description="its agent runs another version than the one offered, and not a later release",
    )
    upgrade_command: str | None = Field(
        default=None,
        description="when agent_outdated: one line to run on the host that upgrades its agent in place "
        "(the installer, checked against its sha256; no token)",
    )
    online: bool
    status: MachineStatus = Field(description='"pending": waits for an admin\'s approval (no runs)')
    first_seen: datetime
    last_seen: datetime
    facts: dict[str, Any]
    # Empty for agents that predate the preflight.
    preflight: list[PreflightOut]
    kernels: list[str]
    labels: dict[str, str] = Field(
        description="its agent's labels, overridden key by key by an admin's: what selectors match",
    )
    admin_labels: dict[str, str] = Field(description="labels an admin set (PATCH)")
    agent_labels: dict[str, str] = Field(description="labels its agent sent (--label), as of its last Hello")
    hardware_class: str = Field(
        description='CPU model, logical CPUs, memory and kernel ("AMD EPYC 7B13 · 2 CPUs · 24 GiB · 6.1.0"): '
        "machines of one class are peers",
    )


class MachinePatch(BaseModel):
    """PATCH /machines/{id}: a display name (the id stays), admin labels, or both; a field left out is
    left as it is."""

    model_config = ConfigDict(extra="forbid")

    name: MachineName | None = Field(
        default=None,
        description='at most 255 characters on one line; null or "": the agent\'s own name again',
    )
    labels: dict[str, str | None] | None = Field(
        default=None,
        description="admin only. A JSON merge patch (RFC 7396) of the admin's labels: a string sets the "
        "key, null removes it; `labels: null` removes them all. Keys and values: 1-63 of letters, digits, "
        "'-', '_', '.', '/', a letter or digit at both ends (a value may be empty); at most 32 labels",
    )
