"""What an agent reports, as the domain sees it (agents/reports_wire.py is the only place that reads the
protobuf): a result, an item's progress, and why a message is refused. Plain data: no protobuf, no
gRPC codes (agents/reports_wire.py maps a Refused's kind to the Reject code the agent acts on)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

# Ids the server handed out (runs, items, results) are UUIDs: 36 characters.
ID_LENGTH = 36

# malformed: the agent drops it (and its item fails); not_yours: a run or result of another machine;
# unavailable: not stored now, the agent keeps it and sends it again.
RefusedKind = Literal["malformed", "not_yours", "unavailable"]


class Refused(Exception):
    """A message the server will not act on; answered with a Reject on the same stream, which stays open."""

    def __init__(
        self, message: str, kind: RefusedKind = "malformed", run_id: str = "", result_id: str = ""
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind: RefusedKind = kind
        self.run_id = run_id
        self.result_id = result_id
        # Set when refusing the report failed its item and that finished the run.
        self.run_finished = False


@dataclass
class Report:
    """One kernel result as reported (strings and lists already bounded by the wire's checks).
    `malformed`: why it is refused before anything is looked up (then only its ids, exit code and
    times are filled in: enough to fail its item)."""

    result_id: str
    run_id: str
    item_id: str
    status: str = "failed"  # ok | failed | unsupported | cancelled
    malformed: str | None = None
    kernel_id: str = ""
    params: dict[str, str] = field(default_factory=dict)  # the wire's strings (contract.params.from_wire)
    unit: str = ""
    samples: list[float] = field(default_factory=list)
    iterations: list[int] = field(default_factory=list)
    sample_launches: list[int] | None = None
    counters: dict[str, float] = field(default_factory=dict)
    harness: dict[str, Any] = field(default_factory=dict)
    reruns: int = 0
    noisy: bool = False
    attempt_cvs: list[float | None] = field(default_factory=list)
    launches: list[dict[str, Any]] | None = None
    disturbance: float | None = None
    exit_code: int = 0
    error: str = ""
    stderr_tail: str = ""
    started_at: datetime | None = None
    finished_at: datetime | None = None


@dataclass(frozen=True)
class LaunchProgress:
    """Where an item stands in its launches (kernel processes), as a RUNNING update tells it."""

    done: int
    planned: int
    wall_s: float = 0.0  # of the finished launches, summed; 0: not told (an agent from before)


@dataclass
class Update:
    """An item's progress: `running` marks it running and `launches` (when told) counts its launches;
    the rest is advisory (logged)."""

    run_id: str
    item_id: str
    running: bool
    state: str  # the wire's name, for the log
    message: str = ""
    launches: LaunchProgress | None = None


Message = Report | Update
