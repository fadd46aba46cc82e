"""Fleet changes and peer outliers as the API gives them, for OpenAPI."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from ctxbench_server.history.schemas import FactChange


class SharedChange(BaseModel):
    fact: str = Field(description='a watched fact ("kernel_release", "governor", "agent_version")')
    before: Any
    after: Any
    others_changed: int = Field(description="how many of the other hosts made the same change in the window")


class StepHost(BaseModel):
    machine_id: str
    machine_name: str
    run_id: str = Field(description="the first run after the step")
    before_run_id: str
    at: datetime
    ratio: float = Field(description="after / before, History's step on this host")
    ci_low: float
    ci_high: float
    facts_changed: list[FactChange] = Field(description="the host's fact changes across its step")


class OtherHost(BaseModel):
    machine_id: str
    machine_name: str
    runs: int = Field(description="its runs of the point in the window")
    facts_changed: list[FactChange] = Field(
        description="its fact changes between its first and last run of the point in the window"
    )
    facts: dict[str, Any] = Field(description="its value of each shared fact at its last run in the window")


class FleetChange(BaseModel):
    id: str = Field(description="stable while the earliest step of the group stays the earliest")
    summary: str = Field(
        description='one line: "syscall.getppid +18.0 % on 3 of 5 hosts; all 3 went from kernel_release'
        ' 6.1 to 6.8 …; the other 2 did not"'
    )
    kernel: str
    params_key: str
    params: dict[str, Any]
    unit: str
    direction: str = Field(description='"up" (after > before) or "down"')
    ratio: float = Field(description="the median of the hosts' step ratios")
    first_at: datetime = Field(description="the earliest step of the group")
    last_at: datetime = Field(description="the latest step of the group")
    window_from: datetime = Field(description="the window the other hosts were looked at in")
    window_to: datetime
    hosts: list[StepHost] = Field(description="the hosts with a significant step, in time order")
    others: list[OtherHost] = Field(description="hosts that measured the point in the window without a step")
    shared: list[SharedChange] = Field(description="fact changes every stepping host made, the same way")


class FleetChangesOut(BaseModel):
    fleet_changes: list[FleetChange] = Field(description="newest first (by last_at)")
    next_cursor: str | None = Field(description="pass as `cursor` for the next page; null: no more")
    since: datetime
    until: datetime
    window_hours: int
    series: int = Field(description="series (machine, kernel, point) whose steps were looked at")
    truncated: bool = Field(description="more series were measured in the range than are looked at")


class FactDiffers(BaseModel):
    fact: str
    value: Any = Field(description="this machine's value (at the run of its latest figure)")
    majority: Any = Field(description="the value most of its class has")
    majority_count: int
    reporting: int = Field(description="machines of the class that report this fact")
    hint: str | None


class PeerOutlier(BaseModel):
    summary: str = Field(description='one line: "syscall.getppid on box-3: +30.0 % against the median of …"')
    machine_id: str
    machine_name: str
    hardware_class: str
    kernel: str
    params_key: str
    params: dict[str, Any]
    unit: str
    run_id: str = Field(description="the run of this machine's latest figure")
    at: datetime
    median: float = Field(
        description="this machine's latest figure (its result's `figure`: the median of long samples, the"
        " 5th percentile of short samples' repetitions)"
    )
    class_median: float = Field(description="the median of the latest figures of its class")
    ratio: float = Field(description="median / class_median")
    score: float = Field(description="|log ratio| in robust spreads (1.4826 MAD, at least the noise floor)")
    peers: int = Field(description="other machines of the class with a figure for the point")
    facts_differ: list[FactDiffers] = Field(description="facts where it differs from most of its class")


class PeersOut(BaseModel):
    outliers: list[PeerOutlier] = Field(description="largest score first")
    points: int = Field(description="(class, kernel, point) groups with enough peers that were judged")
    truncated: bool = Field(description="more latest figures exist than were looked at")
