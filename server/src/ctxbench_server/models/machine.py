from __future__ import annotations

import enum
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ctxbench_server.models.base import Base, UTCDateTime, utcnow

if TYPE_CHECKING:
    from ctxbench_server.models.kernel import Kernel


class MachineStatus(enum.StrEnum):
    """Whether a host gets runs: "pending" waits for an admin's approval (approve_new_hosts: it connects,
    gets no runs); "revoked" has its credential refused."""

    ACTIVE = "active"
    PENDING = "pending"
    REVOKED = "revoked"


class Machine(Base):
    """A test host. Its id is the agent's stable agent_id."""

    __tablename__ = "machines"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    # What the explorer shows: the display name when someone set one, else what the agent calls itself.
    name: Mapped[str] = mapped_column(String(255), default="")
    # A person's name for the host (PATCH /machines/{id}); None: the agent's own name. A Hello never
    # overwrites it (migration 0007).
    display_name: Mapped[str | None] = mapped_column(String(255), default=None)
    # What the agent calls its host (its --name, else the hostname), as of its last Hello (0007).
    agent_name: Mapped[str | None] = mapped_column(String(255), default=None)
    hostname: Mapped[str] = mapped_column(String(255), default="")
    agent_version: Mapped[str] = mapped_column(String(64), default="")
    # SHA-256 (hex) of the machine credential handed out by Enroll; NULL for machines from before
    # enrollment existed (their first Enroll may claim them once).
    token_hash: Mapped[str | None] = mapped_column(String(128), default=None, index=True)
    # SHA-256 (hex) of the agent's EnrollRequest.enrollment_key: its retry of an Enroll whose answer was
    # lost gets a fresh credential (fleet.service.enroll). NULL once the machine's first Hello is
    # recorded (the agent proved it holds a credential), and for agents without a key (0019).
    enroll_key_hash: Mapped[str | None] = mapped_column(String(128), default=None)
    status: Mapped[str] = mapped_column(String(16), default=MachineStatus.ACTIVE, server_default="active")
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    facts: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # key=value labels (machines/labels.py). `labels`: set by an admin (PATCH), never touched by a Hello;
    # `agent_labels`: the agent's --label flags as of its last Hello. An admin's label wins on the same key.
    labels: Mapped[dict[str, str]] = mapped_column(JSON, default=dict, server_default="{}")
    agent_labels: Mapped[dict[str, str]] = mapped_column(JSON, default=dict, server_default="{}")

    kernels: Mapped[list[MachineKernel]] = relationship(
        back_populates="machine", lazy="raise", cascade="all, delete-orphan"
    )


class MachineKernel(Base):
    """A kernel in one machine's catalog, with that machine's own spec of it (catalogs may differ)."""

    __tablename__ = "machine_kernels"

    machine_id: Mapped[str] = mapped_column(ForeignKey("machines.id", ondelete="CASCADE"), primary_key=True)
    kernel_id: Mapped[str] = mapped_column(
        ForeignKey("kernels.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)

    machine: Mapped[Machine] = relationship(back_populates="kernels", lazy="raise")
    kernel: Mapped[Kernel] = relationship(back_populates="machines", lazy="raise")


class RetiredMachine(Base):
    """A machine id that was revoked and then deleted: Enroll refuses it for good (issue 26, item 3).
    Without this row a deleted machine leaves nothing behind, and its agent, still holding the shared
    enrollment token, would enroll under the same id again."""

    __tablename__ = "retired_machines"

    machine_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    retired_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    retired_by: Mapped[str] = mapped_column(String(255), default="")
