from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel


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
    kernels: list[str]
