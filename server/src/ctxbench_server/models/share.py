from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, String
from sqlalchemy.orm import Mapped, mapped_column

from ctxbench_server.models.base import Base, UTCDateTime, utcnow


class Share(Base):
    """A frozen comparison: its view spec and the exact result ids, under an unguessable slug."""

    __tablename__ = "shares"

    slug: Mapped[str] = mapped_column(String(64), primary_key=True)
    view: Mapped[dict[str, Any]] = mapped_column(JSON)
    result_ids: Mapped[list[str]] = mapped_column(JSON)
    # The compare answer as it was when shared (None only for shares stored before 0003).
    compare: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
