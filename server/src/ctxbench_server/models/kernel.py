from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ctxbench_server.models.base import Base, UTCDateTime, utcnow

if TYPE_CHECKING:
    from ctxbench_server.models.machine import MachineKernel


class Kernel(Base):
    """One measured primitive, as last described by any agent's catalog."""

    __tablename__ = "kernels"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)

    machines: Mapped[list[MachineKernel]] = relationship(back_populates="kernel", lazy="raise")
