from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint, select
from sqlalchemy.orm import Mapped, column_property, mapped_column, relationship

from ctxbench_server.models.base import Base, UTCDateTime, new_id, utcnow


class RunStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class ItemState(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


FINISHED_RUN = (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED)


class Batch(Base):
    """A batch's title and note (PATCH /batches/{id}; migration 0007). A batch itself is the runs that
    share a batch_id; this row exists only once someone names or notes it, and goes with its last run."""

    __tablename__ = "batches"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str | None] = mapped_column(String(200), default=None)
    note: Mapped[str | None] = mapped_column(String(4000), default=None)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class Run(Base):
    """A list of items for one machine, run one at a time by its agent."""

    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_machine_status_created", "machine_id", "status", "created_at"),
        # The per-machine FIFO: oldest queued_at first (a retried run queues again at the back).
        Index("ix_runs_machine_status_queued", "machine_id", "status", "queued_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    machine_id: Mapped[str] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"))
    # Runs posted together (machine_ids) share it; a run posted alone is its own batch (batch_id == id).
    batch_id: Mapped[str] = mapped_column(String(36), index=True)
    status: Mapped[str] = mapped_column(String(16), default=RunStatus.QUEUED)
    profile: Mapped[str] = mapped_column(String(16), default="default")
    # Dynamic reruns sent on every RunItem (None on runs stored before they existed: no reruns).
    rerun_cv: Mapped[float | None] = mapped_column(Float, default=None)
    max_reruns: Mapped[int | None] = mapped_column(Integer, default=None)
    # Kernel processes per item (RunItem.launches; None on runs stored before launches: one process).
    launches: Mapped[int | None] = mapped_column(Integer, default=None)
    # The request as posted (items with their sweeps, repetitions, min_time_s).
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    # The machine's facts when the run started.
    facts: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    repetitions: Mapped[int | None] = mapped_column(Integer, default=None)
    min_time_s: Mapped[float | None] = mapped_column(Float, default=None)
    # Timed work in one short sample (RunItem.sample_time_s); None: one long sample per repetition.
    sample_time_s: Mapped[float | None] = mapped_column(Float, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    # When it last joined its machine's queue: created_at, or the time of its last retry.
    queued_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    # A person's title and free-text note (PATCH /runs/{id}; migration 0007); None: none given.
    name: Mapped[str | None] = mapped_column(String(200), default=None)
    note: Mapped[str | None] = mapped_column(String(4000), default=None)
    # The schedule that made it (migration 0012); None: posted by hand. No foreign key: a deleted
    # schedule's runs keep its id (and ADD COLUMN cannot add one on SQLite).
    schedule_id: Mapped[str | None] = mapped_column(String(36), default=None, index=True)
    # Its batch's title (batches.name), read with the run in the same statement: every answer carries it.
    batch_name: Mapped[str | None] = column_property(
        select(Batch.name).where(Batch.id == batch_id).correlate_except(Batch).scalar_subquery()
    )

    items: Mapped[list[RunItem]] = relationship(
        back_populates="run", lazy="raise", order_by="RunItem.index", cascade="all, delete-orphan"
    )


class RunItem(Base):
    """One kernel invocation with fixed parameters (a sweep point)."""

    __tablename__ = "run_items"
    __table_args__ = (UniqueConstraint("run_id", "index"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column(Integer)
    kernel_id: Mapped[str] = mapped_column(String(200))
    # Typed values, every parameter of the kernel (defaults filled in).
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    state: Mapped[str] = mapped_column(String(16), default=ItemState.QUEUED)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    result_id: Mapped[str | None] = mapped_column(String(36), default=None)
    timeout_s: Mapped[float] = mapped_column(Float, default=0.0)
    # 1, then one more per retry; results of earlier attempts stay in `results` as history.
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    # Launch progress from the agent's RunUpdates (migration 0013; docs/architecture.md "Live progress"):
    # launches finished, launches planned so far (None: not told; the run's `launches`), their wall time
    # summed, and when one of its launches last started or ended (the ETA's clock).
    launches_done: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    launches_planned: Mapped[int | None] = mapped_column(Integer, default=None)
    launches_wall_s: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    launch_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)

    run: Mapped[Run] = relationship(back_populates="items", lazy="raise")
