from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from ctxbench_server.models.base import Base, UTCDateTime


class LatestResult(Base):
    """Each machine's newest successful result per (kernel, canonical params): what compare shows by
    default. Kept up to date when a result is stored, so compare reads one row per cell instead of
    scanning a point's whole history (results are never updated; a newer one moves the pointer)."""

    __tablename__ = "latest_results"

    machine_id: Mapped[str] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"), primary_key=True)
    kernel_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    params_key: Mapped[str] = mapped_column(String(1024), primary_key=True)
    result_id: Mapped[str] = mapped_column(ForeignKey("results.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
