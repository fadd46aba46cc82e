from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ctxbench_server.models.base import Base, UTCDateTime, new_id, utcnow


class Schedule(Base):
    """A run spec that fires on a machine selection, every interval_s or on a cron line (migration 0012;
    schedules/ owns the rules, docs/architecture.md "Schedules")."""

    __tablename__ = "schedules"
    # The scheduler's one query: the unpaused schedules due by now.
    __table_args__ = (Index("ix_schedules_paused_next_fire_at", "paused", "next_fire_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    # The run body (runs.schemas.RunSpec) as posted: items, profile, overrides; no machines.
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    # The selection: explicit machine ids, or a label selector (machines/labels.py) resolved at each firing.
    machine_ids: Mapped[list[str] | None] = mapped_column(JSON, default=None)
    selector: Mapped[str | None] = mapped_column(String(1024), default=None)
    # The timing: every interval_s seconds (slots at multiples of it since the Unix epoch), or a 5-field
    # cron line in UTC; each slot fires jitter_s or less later (a hash of the schedule and the slot).
    interval_s: Mapped[int | None] = mapped_column(Integer, default=None)
    cron: Mapped[str | None] = mapped_column(String(200), default=None)
    jitter_s: Mapped[int] = mapped_column(Integer, default=0)
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    # The next slot (its nominal time) and when it fires (slot + jitter). A firing claims the slot by
    # moving next_due_at on from exactly this value; `version` (bumped by every edit) makes a claimer that
    # read the schedule before an edit lose.
    next_due_at: Mapped[datetime] = mapped_column(UTCDateTime())
    next_fire_at: Mapped[datetime] = mapped_column(UTCDateTime())
    version: Mapped[int] = mapped_column(Integer, default=1)
    created_by: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ScheduleFiring(Base):
    """One slot of a schedule fired: which runs it made and which machines it skipped, and why. Unique
    per (schedule, slot): the claim's second guard."""

    __tablename__ = "schedule_firings"
    __table_args__ = (
        UniqueConstraint("schedule_id", "due_at"),
        Index("ix_schedule_firings_schedule_fired", "schedule_id", "fired_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    schedule_id: Mapped[str] = mapped_column(ForeignKey("schedules.id", ondelete="CASCADE"))
    due_at: Mapped[datetime] = mapped_column(UTCDateTime())  # the slot's nominal time
    fired_at: Mapped[datetime] = mapped_column(UTCDateTime())
    run_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    # [{machine_id, reason}]: "busy" (a run of this schedule still queued or running on it), not active,
    # unknown, or the spec does not validate against its catalog.
    skipped: Mapped[list[dict[str, str]]] = mapped_column(JSON, default=list)
    # Why no run was made at all (no machine selected, a budget), else None.
    error: Mapped[str | None] = mapped_column(Text, default=None)
