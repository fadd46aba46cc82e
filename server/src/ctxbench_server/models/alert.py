from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ctxbench_server.models.base import Base, UTCDateTime, new_id, utcnow


class Alert(Base):
    """A significant step in one series (machine, kernel, parameter point), found by History's rule
    (history/changes.py) when results land (migration 0015; alerts/ owns the rules). One per series and
    step: the step's first run after it is part of the unique key, so every server and every re-check
    that finds the same step inserts nothing new."""

    __tablename__ = "alerts"
    __table_args__ = (
        UniqueConstraint("machine_id", "kernel_id", "params_key", "run_id"),
        # The list and the header's count: alerts in a state, newest first.
        Index("ix_alerts_state_opened_at", "state", "opened_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    machine_id: Mapped[str] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"))
    kernel_id: Mapped[str] = mapped_column(String(200))
    params_key: Mapped[str] = mapped_column(String(1024))
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    unit: Mapped[str] = mapped_column(String(32), default="")
    # The first run after the step and the last one before it (no foreign key: a deleted run leaves the
    # alert as it was found).
    run_id: Mapped[str] = mapped_column(String(36))
    before_run_id: Mapped[str] = mapped_column(String(36))
    at: Mapped[datetime] = mapped_column(UTCDateTime())  # when run_id's result was stored
    median_before: Mapped[float] = mapped_column(Float)
    median_after: Mapped[float] = mapped_column(Float)
    ratio: Mapped[float] = mapped_column(Float)
    ci_low: Mapped[float] = mapped_column(Float)
    ci_high: Mapped[float] = mapped_column(Float)
    # History's StepSignificance as found: {significant, rule, noise, noise_source, ci_level, runs}
    significance: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # History's fact changes between the two runs: [{run_id, at, fact, before, after, hint}]
    facts_changed: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    state: Mapped[str] = mapped_column(String(16), default="open")  # open | acknowledged | resolved
    opened_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    acknowledged_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    acknowledged_by: Mapped[str | None] = mapped_column(String(200), default=None)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    resolved_by: Mapped[str | None] = mapped_column(String(200), default=None)
    note: Mapped[str | None] = mapped_column(Text, default=None)
