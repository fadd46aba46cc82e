"""Access control: API tokens, browser sessions and one-time login codes, each stored as a SHA-256 hash."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from ctxbench_server.models.base import Base, UTCDateTime, new_id, utcnow

SCOPES = ("admin", "write", "read")
# What a browser session was made from: the admin token, an API token, or a one-time sign-in link.
SESSION_SOURCES = ("admin", "token", "login_link")


class ApiToken(Base):
    """A named bearer token an admin created for a script or a colleague. The secret is shown once."""

    __tablename__ = "api_tokens"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    scope: Mapped[str] = mapped_column(String(16))  # one of SCOPES
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class AuthSession(Base):
    """A signed-in browser: the cookie holds the secret, the table its hash. A session lasts while the
    credential it was made from does: its API token (not revoked, not expired; expires_at never later
    than the token's), or the admin token it recorded (admin_fp: a session made from an admin token the
    server no longer has is refused)."""

    __tablename__ = "auth_sessions"

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    # What GET /api/v1/sessions shows and DELETE /api/v1/sessions/{id} takes: the cookie's hash stays in.
    id: Mapped[str] = mapped_column(String(36), unique=True, default=new_id)
    scope: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(16))  # one of SESSION_SOURCES
    # A fingerprint of the admin token signed in with (auth/service.py admin_fingerprint); None for a
    # session made from an API token.
    admin_fp: Mapped[str | None] = mapped_column(String(32), default=None)
    # The API token signed in with (None: the admin token or a login code); revoking it ends the session.
    token_id: Mapped[str | None] = mapped_column(
        ForeignKey("api_tokens.id", ondelete="CASCADE"), default=None, index=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class LoginCode(Base):
    """A one-time sign-in link's code (the server prints one at each start): single use, expiring."""

    __tablename__ = "login_codes"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    # The admin token of the server that made it (as AuthSession.admin_fp): another admin token refuses
    # it. None: made without one (before migration 0010), good with any.
    admin_fp: Mapped[str | None] = mapped_column(String(32), default=None)
