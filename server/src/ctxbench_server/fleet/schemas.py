from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class JoinTokenCreate(BaseModel):
    uses: int = Field(default=1, ge=1, le=10_000)
    ttl_s: int = Field(default=3600, ge=60, le=30 * 86400)


class JoinTokenOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    created_at: datetime
    created_by: str
    expires_at: datetime
    uses_left: int
    uses: int
    revoked: bool
    expired: bool


class JoinTokenCreated(BaseModel):
    id: str
    token: str
    expires_at: datetime
    uses_left: int
    ca_fingerprint: str
    install_command: str
