from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Scope = Literal["admin", "write", "read"]
SessionSource = Literal["admin", "token", "login_link"]


class SessionCreate(BaseModel):
    """Exactly one of `token` (the admin token or an API token) and `login_code` (a sign-in link's)."""

    model_config = ConfigDict(extra="forbid")

    token: str | None = Field(default=None, min_length=1, max_length=1000)
    login_code: str | None = Field(default=None, min_length=1, max_length=1000)

    @model_validator(mode="after")
    def _one(self) -> SessionCreate:
        if (self.token is None) == (self.login_code is None):
            raise ValueError("give exactly one of token and login_code")
        return self


class SessionCreated(BaseModel):
    scope: Scope
    expires_at: datetime


class SessionOut(BaseModel):
    authenticated: bool
    scope: Scope | None
    public_read: bool
    expires_at: datetime | None


class TokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, pattern=r"^[^\x00]*$")  # PostgreSQL stores no NUL
    scope: Scope = "write"
    # Unset: the token lasts until revoked.
    ttl_s: int | None = Field(default=None, ge=60, le=10 * 366 * 86400)


class TokenOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    name: str
    scope: Scope
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None


class TokenCreated(TokenOut):
    """The secret appears here only: it is stored hashed."""

    token: str


class SessionInfo(BaseModel):
    """A signed-in browser as GET /sessions lists it: never its cookie, nor the cookie's hash."""

    model_config = ConfigDict(from_attributes=True)

    id: str
    name: str = Field(description="who signed in: admin, admin (sign-in link), or the API token's name")
    scope: Scope
    source: SessionSource = Field(description="what it was made from; it ends when that does")
    token_id: str | None = Field(description="the API token signed in with (source token)")
    created_at: datetime
    expires_at: datetime
    last_used_at: datetime | None = Field(description="to the minute")
    current: bool = Field(default=False, description="the session of this request's own cookie")


class SessionsEnded(BaseModel):
    ended: int
