"""ResultReport and RunUpdate protobufs (a RunProgress is several RunUpdates) to the domain's Report and
Update (ingest/messages.py), and a Refused back to the Reject the agent acts on. The only place that reads
a ResultReport: its limits are checked here, before anything is looked up, and a malformed report becomes
a Report that says why."""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from ctxbench_server.contract.params import MAX_STRING
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.ingest.messages import (
    ID_LENGTH,
    LaunchProgress,
    Message,
    Refused,
    RefusedKind,
    Report,
    Update,
)
from ctxbench_server.models import Result
from ctxbench_server.sql.text import column_length, storable


def _length(column: Any) -> int:
    length = column_length(column)
    assert length is not None
    return length


RESULT_STATUS = {
    pb.RESULT_STATUS_OK: "ok",
    pb.RESULT_STATUS_FAILED: "failed",
    pb.RESULT_STATUS_UNSUPPORTED: "unsupported",
    pb.RESULT_STATUS_CANCELLED: "cancelled",
}


def contract_max_items(schema: dict[str, Any], field: str) -> int:
    """`$defs.run.properties.<field>.maxItems` of the kernel CLI schema (a positive int, else KeyError)."""
    most = schema["$defs"]["run"]["properties"][field].get("maxItems")
    if not isinstance(most, int) or isinstance(most, bool) or most < 1:
        raise KeyError(f"kernel CLI schema: run.{field} has no positive maxItems")
    return most


# The most samples one result may carry: the kernel contract's (kernels/contract/kernel-cli.schema.json,
# copied into the package by `make gen`, checked by `make gen-check`); the agent reads the same number
# from its own copy (kernels/contract/go/runresult) and fails such an item before it is sent.
KERNEL_CLI_SCHEMA = resources.files("ctxbench_server.gen") / "kernel-cli.schema.json"
MAX_SAMPLES = contract_max_items(json.loads(KERNEL_CLI_SCHEMA.read_text(encoding="utf-8")), "samples")
# attempt_cvs: the CV of each attempt as an agent from before launches (issue 11) computed it for its
# reruns, stored as sent, for the record; today's agents send none and compute no CV. The result's `cv`
# is the server's alone (stats/summary.py, from the samples), and it is what every view and flag uses.
MAX_ATTEMPT_CVS = 1000
MAX_LAUNCHES = 1000
# Strings of a report that reach a column are bounded by its size (PostgreSQL refuses longer ones);
# the rest by what a kernel or the agent can sensibly send (the agent keeps 4 KiB of stderr).
MAX_ID = ID_LENGTH  # run_id, item_id: the server's UUIDs
MAX_KERNEL_ID = _length(Result.kernel_id)
MAX_UNIT = _length(Result.unit)
# What contract.params accepts for one string value; the stored key is bounded by contract.params.params_key
# (a long one keeps its start plus a SHA-256 of the whole).
MAX_PARAM_VALUE = MAX_STRING
MAX_PARAM_COUNT = 64
MAX_COUNTERS = 256
MAX_NAME = 200  # a counter's name, the harness name and version
MAX_ESTIMATOR = column_length(Result.estimator)  # harness.estimator, also stored in its own column
MAX_ERROR = 4096
MAX_STDERR_TAIL = 16384
# RunUpdates in one RunProgress: an agent coalesces the latest of each item that changed in an interval
# (Welcome.progress_interval_ms), so a run's items at most; more is refused before any is looked at.
MAX_PROGRESS_UPDATES = 1000

# google.rpc.Code of a Reject, by why the report was refused
INVALID_ARGUMENT = 3  # malformed: the agent drops it from its spool
PERMISSION_DENIED = 7  # a run or result that is not this agent's
UNAVAILABLE = 14  # not stored now; the agent keeps it and sends it again
REJECT_CODE: dict[RefusedKind, int] = {
    "malformed": INVALID_ARGUMENT,
    "not_yours": PERMISSION_DENIED,
    "unavailable": UNAVAILABLE,
}


def reject(refused: Refused) -> pb.Reject:
    return pb.Reject(
        result_id=refused.result_id[:64],
        run_id=refused.run_id[:64],
        code=REJECT_CODE[refused.kind],
        message=refused.message[:1024],
    )


# A UUID as agents write it (8-4-4-4-12 hex digits): a result id uuid.UUID reads, known without it.
_UUID_TEXT = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def check_report(r: pb.ResultReport, samples: list[float]) -> None:
    """Rules a report must meet before anything is looked up (`samples`: its samples, read once).
    Raises ValueError saying which."""
    result_id = r.result_id
    if _UUID_TEXT.fullmatch(result_id) is None:  # (what an agent sends; else what uuid.UUID reads)
        try:
            if len(result_id) != 36:
                raise ValueError
            uuid.UUID(result_id)
        except ValueError:
            raise ValueError(f"result_id {result_id[:64]!r} is not a UUID") from None
    n = len(samples)
    if n > MAX_SAMPLES:
        raise ValueError(f"{n} samples, more than the {MAX_SAMPLES} a result may carry")
    iterations = len(r.iterations)
    if iterations and iterations != n:  # none at all: the kernel did not say
        raise ValueError(f"{n} samples but {iterations} iteration counts")
    if not all_finite(samples):
        raise ValueError("samples are not all finite numbers")
    if len(r.attempt_cvs) > MAX_ATTEMPT_CVS:
        raise ValueError(f"{len(r.attempt_cvs)} attempt_cvs, more than {MAX_ATTEMPT_CVS}")
    launches = len(r.sample_launches)
    if launches and launches != n:  # none: one launch
        raise ValueError(f"{n} samples but {launches} sample_launches")
    if len(r.launches) > MAX_LAUNCHES:
        raise ValueError(f"{len(r.launches)} launches, more than {MAX_LAUNCHES}")
    for name, value, most in (
        ("run_id", r.run_id, MAX_ID),
        ("item_id", r.item_id, MAX_ID),
        ("kernel_id", r.kernel_id, MAX_KERNEL_ID),
        ("unit", r.unit, MAX_UNIT),
        ("error", r.error, MAX_ERROR),
        ("stderr_tail", r.stderr_tail, MAX_STDERR_TAIL),
        ("harness.name", r.harness.name, MAX_NAME),
        ("harness.version", r.harness.version, MAX_NAME),
    ):
        if len(value) > most:
            raise ValueError(f"{name}: {len(value)} characters, more than {most}")
    if len(r.params) > MAX_PARAM_COUNT:
        raise ValueError(f"params: {len(r.params)} parameters, more than {MAX_PARAM_COUNT}")
    if any(len(v) > MAX_PARAM_VALUE for v in r.params.values()):
        raise ValueError(f"params: a value over {MAX_PARAM_VALUE} characters")
    if len(r.counters) > MAX_COUNTERS:
        raise ValueError(f"counters: {len(r.counters)} counters, more than {MAX_COUNTERS}")
    if any(len(k) > MAX_NAME for k in r.counters):
        raise ValueError(f"counters: a name over {MAX_NAME} characters")


def _ts(t: Timestamp) -> datetime | None:
    """None when absent (an absent field reads as 0 seconds), or at or before 1970 (Go's zero time.Time
    arrives as year 1: never set). What Timestamp.ToDatetime gives, without its Python arithmetic."""
    seconds, nanos = t.seconds, t.nanos
    if seconds <= 0:
        return None
    if 0 <= nanos < 1_000_000_000:
        return datetime.fromtimestamp(seconds, UTC).replace(microsecond=nanos // 1000)
    return t.ToDatetime(tzinfo=UTC)  # nanos out of range: as it reads them


_isfinite = math.isfinite


def _finite(x: float) -> float | None:
    return x if _isfinite(x) else None


def all_finite(xs: Sequence[float]) -> bool:
    """Whether every number is finite: one sum, as a sum is finite only when its terms are (one that
    overflowed, or held a NaN or an infinity, is looked at term by term)."""
    return math.isfinite(sum(xs)) or all(map(math.isfinite, xs))


def _launch(lr: pb.Launch) -> dict[str, Any]:
    wall, cpu, other, steal, throttled = (
        lr.wall_s,
        lr.cpu_s,
        lr.other_busy_frac,
        lr.steal_frac,
        lr.throttled_s,
    )
    # a sum is finite when its terms are (all_finite, inline: one call fewer a launch)
    ok = _isfinite(wall + cpu + other + steal + throttled)
    short = lr.short_samples
    return {
        "index": lr.index,
        "wall_s": wall if ok else _finite(wall),
        "cpu_s": cpu if ok else _finite(cpu),
        "other_busy_frac": other if ok else _finite(other),
        "steal_frac": steal if ok else _finite(steal),
        "throttled_s": throttled if ok else _finite(throttled),
        "disturbed": lr.disturbed,
        "remeasured": lr.remeasured,
        "kept": lr.kept,
        "samples": lr.samples,
        # short samples: how many, and how many the host disturbed (never more than were taken)
        "short_samples": short or None,
        "disturbed_samples": min(lr.disturbed_samples, short) if short else None,
    }


def _harness(h: pb.Harness) -> dict[str, Any]:
    out: dict[str, Any] = {"name": h.name, "version": h.version, "min_time_s": _finite(h.min_time_s)}
    if h.estimator:  # short samples (kernel --sample-time)
        out.update(
            estimator=storable(h.estimator, MAX_ESTIMATOR),
            sample_time_s=_finite(h.sample_time_s),
            sample_ops=h.sample_ops,
            samples_per_repetition=h.samples_per_repetition,
        )
    return out


def _finite_counters(r: pb.ResultReport) -> dict[str, float]:
    counters = dict(r.counters)
    if all_finite(list(counters.values())):
        return counters
    return {k: v for k, v in counters.items() if math.isfinite(v)}


def report(r: pb.ResultReport) -> Report:
    """The domain's Report of r; a malformed one carries why (and only what fails its item)."""
    started, finished = _ts(r.started_at), _ts(r.finished_at)
    samples = list(r.samples)
    try:
        check_report(r, samples)
    except ValueError as bad:
        return Report(
            r.result_id,
            r.run_id,
            r.item_id,
            malformed=str(bad),
            exit_code=r.exit_code,
            started_at=started,
            finished_at=finished,
        )
    return Report(
        r.result_id,
        r.run_id,
        r.item_id,
        status=RESULT_STATUS.get(r.status, "failed"),
        kernel_id=r.kernel_id,
        params=dict(r.params),
        unit=storable(r.unit, MAX_UNIT),
        samples=samples,
        iterations=list(r.iterations),
        sample_launches=list(r.sample_launches) or None,
        # JSON has no NaN or infinity: such counters are dropped, not the measurement
        counters=_finite_counters(r),
        harness=_harness(r.harness) if r.HasField("harness") else {},
        reruns=max(0, r.reruns),
        noisy=r.noisy,
        attempt_cvs=[_finite(x) for x in r.attempt_cvs],
        launches=[_launch(lr) for lr in r.launches] if r.launches else None,
        disturbance=_finite(r.disturbance) if r.launches else None,
        exit_code=r.exit_code,
        error=storable(r.error),
        stderr_tail=storable(r.stderr_tail),
        started_at=started,
        finished_at=finished,
    )


# An agent from before RunUpdate's launch fields says "<kernel> launch 2/3" as a launch starts.
_LAUNCH_STARTS = re.compile(r" launch (\d{1,4})/(\d{1,4})$")


def _launch_progress(u: pb.RunUpdate, message: str) -> LaunchProgress | None:
    """The launches of a RUNNING update's item as it tells them; from an older agent's message, the
    launches before the one starting; None when it says nothing of them."""
    planned = u.launches_planned
    if planned > 0:
        wall = u.launches_wall_s
        return LaunchProgress(min(u.launches_done, planned), planned, wall if 0 < wall < math.inf else 0.0)
    m = _LAUNCH_STARTS.search(message)
    if m is None or int(m[2]) < int(m[1]) or int(m[1]) < 1:
        return None
    return LaunchProgress(int(m[1]) - 1, int(m[2]))


# ItemState's names by number (what pb.ItemState.Name looks up, in Python, for every update)
_STATE_NAMES = {v.number: v.name for v in pb.ItemState.DESCRIPTOR.values}


def update(u: pb.RunUpdate) -> Update:
    number, message = u.state, u.message
    state = _STATE_NAMES.get(number) or str(number)  # a state from a newer agent: advisory, as every update
    running = number == pb.ITEM_STATE_RUNNING
    launches = _launch_progress(u, message) if running else None
    return Update(u.run_id, u.item_id, running, state, message, launches)


def progress_updates(p: pb.RunProgress) -> list[Update]:
    """A RunProgress as the Updates of the RunUpdates it coalesces, each read and checked as one sent
    alone (update above). Raises Refused (malformed) when it carries more than MAX_PROGRESS_UPDATES."""
    updates = p.updates
    n = len(updates)
    if n > MAX_PROGRESS_UPDATES:
        run_id = updates[0].run_id
        raise Refused(
            f"RunProgress of {n} updates, more than the {MAX_PROGRESS_UPDATES} one may carry "
            "(MAX_PROGRESS_UPDATES)",
            run_id=run_id if len(run_id) <= MAX_ID else "",
        )
    return [update(u) for u in updates]


def messages(msgs: Sequence[pb.ConnectRequest]) -> list[Message]:
    """A stream's reports and updates (the only kinds ingest takes), in their order."""
    return [
        report(m.result_report) if m.WhichOneof("msg") == "result_report" else update(m.run_update)
        for m in msgs
    ]
