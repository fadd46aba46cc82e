from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from ctxbench_server.models.base import Base, UTCDateTime, utcnow


class Result(Base):
    """One finished item as the agent reported it, with computed statistics when it measured."""

    __tablename__ = "results"
    __table_args__ = (
        # Compare and history: a kernel's results on a machine, per parameter point, over time.
        Index("ix_results_kernel_machine_params", "kernel_id", "machine_id", "params_key", "created_at"),
        # Results whose CI of the median is not filled in yet (ingest/ci.py): few at any time.
        Index(
            "ix_results_ci_pending",
            "status",
            sqlite_where=text("ci_method IS NULL"),
            postgresql_where=text("ci_method IS NULL"),
        ),
    )

    # The agent's UUID: a repeat of the same report is the same row.
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    item_id: Mapped[str] = mapped_column(ForeignKey("run_items.id", ondelete="CASCADE"), index=True)
    machine_id: Mapped[str] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"))
    kernel_id: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16))  # ok | failed | unsupported | cancelled
    params: Mapped[dict[str, Any]] = mapped_column(JSON)  # typed values
    params_key: Mapped[str] = mapped_column(String(1024))  # canonical "a=1&b=x", sorted by name
    unit: Mapped[str] = mapped_column(String(32), default="")
    samples: Mapped[list[float]] = mapped_column(JSON, default=list)
    iterations: Mapped[list[int]] = mapped_column(JSON, default=list)
    counters: Mapped[dict[str, float]] = mapped_column(JSON, default=dict)
    harness: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    n: Mapped[int] = mapped_column(Integer, default=0)
    median: Mapped[float | None] = mapped_column(Float, default=None)
    # The compared figure (stats/figure.py; migration 0020): the median of long samples, a low quantile
    # of short samples' repetitions. ci_low / ci_high are its CI.
    figure: Mapped[float | None] = mapped_column(Float, default=None)
    mean: Mapped[float | None] = mapped_column(Float, default=None)
    stddev: Mapped[float | None] = mapped_column(Float, default=None)
    cv: Mapped[float | None] = mapped_column(Float, default=None)
    min: Mapped[float | None] = mapped_column(Float, default=None)
    max: Mapped[float | None] = mapped_column(Float, default=None)
    ci_low: Mapped[float | None] = mapped_column(Float, default=None)
    ci_high: Mapped[float | None] = mapped_column(Float, default=None)
    ci_method: Mapped[str | None] = mapped_column(String(128), default=None)
    # The item's attempt this result belongs to (see RunItem.attempt).
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    # Dynamic reruns: how many, whether the kept attempt was still noisy, every attempt's CV (None when
    # the agent sent a non-finite one).
    reruns: Mapped[int] = mapped_column(Integer, default=0)
    noisy: Mapped[bool] = mapped_column(Boolean, default=False)
    attempt_cvs: Mapped[list[float | None]] = mapped_column(JSON, default=list)
    # Launches (migration 0006; None on older results = one launch): the launch index of each sample,
    # every launch the agent ran ({index, wall_s, cpu_s, other_busy_frac, steal_frac, throttled_s,
    # disturbed, remeasured, kept, samples}), the largest other_busy_frac over the kept launches, and the
    # agent version that measured it (from the stream's Hello). With launches, `reruns` counts re-measured
    # launches and `noisy` says disturbed launches are still kept.
    sample_launches: Mapped[list[int] | None] = mapped_column(JSON, default=None)
    launches: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, default=None)
    disturbance: Mapped[float | None] = mapped_column(Float, default=None)
    # What a sample is (harness.estimator): "p5" of a block of short samples, None for long samples (every
    # result before issue 24). Results of different kinds measure different quantities: compare learns a
    # point's run-to-run noise only from results of the kind it compares.
    estimator: Mapped[str | None] = mapped_column(String(16), default=None)
    agent_version: Mapped[str | None] = mapped_column(String(64), default=None)
    exit_code: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    stderr_tail: Mapped[str | None] = mapped_column(Text, default=None)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
