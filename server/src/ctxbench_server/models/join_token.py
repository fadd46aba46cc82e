from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from ctxbench_server.models.base import Base, UTCDateTime, new_id, utcnow


class JoinToken(Base):
    """A secret an admin hands to new hosts; Enroll trades it for a machine credential."""

    __tablename__ = "join_tokens"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    # SHA-256 (hex) of the token; the token itself is shown once, in the 201 answer.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    created_by: Mapped[str] = mapped_column(String(255), default="")
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    uses_left: Mapped[int] = mapped_column(Integer)
    uses: Mapped[int] = mapped_column(Integer, default=0)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)

    @property
    def expired(self) -> bool:
        return self.expires_at <= utcnow()
