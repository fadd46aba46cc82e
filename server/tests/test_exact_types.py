"""The REST schemas declare the closed sets their values come from (issue 14, "One contract per seam"):
the OpenAPI document's enums are the sets the code writes, and a value outside one fails validation, so
the explorer's generated types (make gen) need no narrowing by hand."""

from __future__ import annotations

from typing import Any, get_args

import httpx
import pytest
from pydantic import BaseModel, ValidationError

from ctxbench_server.agents import reports_wire, wire
from ctxbench_server.compare.schemas import CompareOut
from ctxbench_server.contract import schema as contract
from ctxbench_server.contract.params import ParamType
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.kernels.schemas import ParamOut
from ctxbench_server.machines.schemas import MachineOut
from ctxbench_server.models import ItemState, MachineStatus, RunStatus
from ctxbench_server.runs.schemas import PROFILES, LaunchOut, RunItemOut, RunOut


def prop(spec: dict[str, Any], model: str, field: str) -> dict[str, Any]:
    """A field's schema in the served OpenAPI document, its $ref (an enum's or a model's own schema, in a
    list or beside null) followed."""
    schemas = spec["components"]["schemas"]
    p = schemas[model]["properties"][field]
    for s in [p, *p.get("anyOf", [])]:
        ref = s.get("$ref") or s.get("items", {}).get("$ref")
        if ref:
            return schemas[ref.rsplit("/", 1)[-1]]
    return p


async def test_the_served_enums_are_the_sets_the_code_writes(api: httpx.AsyncClient) -> None:
    spec = (await api.get("/openapi.json")).json()
    assert prop(spec, "RunOut", "status")["enum"] == [s.value for s in RunStatus]
    assert prop(spec, "RunOut", "profile")["enum"] == list(PROFILES)
    assert prop(spec, "RunItemOut", "state")["enum"] == [s.value for s in ItemState]
    assert prop(spec, "MachineOut", "status")["enum"] == [s.value for s in MachineStatus]
    # a parameter's type: what the agent's catalog maps to, and the kernel contract's own list
    types = prop(spec, "ParamOut", "type")["enum"]
    assert set(types) == set(get_args(ParamType)) == set(wire.PARAM_TYPES.values())
    assert types == contract.SCHEMA["$defs"]["param"]["properties"]["type"]["enum"]


async def test_launch_and_warning_schemas_are_what_is_stored(api: httpx.AsyncClient) -> None:
    spec = (await api.get("/openapi.json")).json()
    launch = prop(spec, "ResultOut", "launches")
    stored = reports_wire._launch(pb.Launch(index=0, wall_s=0.1, samples=2))
    assert set(launch["properties"]) == set(stored)
    # every key but those launches stored before short samples lack (they read as null)
    assert set(launch["required"]) == set(stored) - LAUNCH_KEYS_SINCE_SHORT_SAMPLES
    assert LaunchOut.model_validate(stored).model_dump() == stored  # the JSON stays as stored
    warning = prop(spec, "CompareOut", "warnings")
    assert warning["required"] == ["message"] and warning["additionalProperties"] is False


RUN: dict[str, Any] = {
    "id": "r",
    "machine_id": "m",
    "batch_id": "b",
    "status": "queued",
    "profile": "default",
    "created_at": "2026-11-23T00:00:00Z",
    "queued_at": "2026-11-23T00:00:00Z",
    "started_at": None,
    "finished_at": None,
    "error": None,
    "repetitions": None,
    "min_time_s": None,
    "rerun_cv": None,
    "max_reruns": None,
    "launches": None,
    "facts": None,
    "request": {},
    "items": [],
    "progress": {"total": 0, "done": 0, "failed": 0, "running": 0},
}
ITEM: dict[str, Any] = {
    "id": "i",
    "index": 0,
    "kernel": "syscall.getppid",
    "params": {},
    "state": "queued",
    "error": None,
    "result_id": None,
    "timeout_s": 60.0,
    "attempt": 0,
}
MACHINE: dict[str, Any] = {
    "id": "m",
    "name": "m",
    "hostname": "h",
    "agent_version": "1",
    "online": False,
    "status": "active",
    "first_seen": "2026-11-23T00:00:00Z",
    "last_seen": "2026-11-23T00:00:00Z",
    "facts": {},
    "preflight": [],
    "kernels": [],
    "labels": {"env": "prod"},
    "admin_labels": {"env": "prod"},
    "agent_labels": {},
    "hardware_class": "",
}
COMPARE: dict[str, Any] = {
    "machines": [],
    "baseline": "m",
    "rows": [],
    "geomean": {},
    "geomean_by_family": {},
    "geomean_direction": "",
    "facts_diff": [],
    "result_ids": [],
    "warnings": [{"message": "units differ", "row": "k", "kernel": "k", "params_key": ""}],
}
# Launch keys added by issue 24 (short samples): launches stored before have none.
LAUNCH_KEYS_SINCE_SHORT_SAMPLES = {"short_samples", "disturbed_samples"}

LAUNCH = reports_wire._launch(pb.Launch(index=0, wall_s=0.1, samples=2))


@pytest.mark.parametrize(
    ("model", "valid", "field", "outside"),
    [
        (RunOut, RUN, "status", "paused"),
        (RunOut, RUN, "profile", "fast"),
        (RunItemOut, ITEM, "state", "done"),
        (MachineOut, MACHINE, "status", "approved"),
        (ParamOut, {"name": "n", "type": "int", "default": 1}, "type", "list"),
        (CompareOut, COMPARE, "warnings", [{"row": "k"}]),  # no message
        (CompareOut, COMPARE, "warnings", [{"message": "m", "detail": "d"}]),  # a key it never sends
        (LaunchOut, LAUNCH, "samples", None),
    ],
)
def test_a_value_outside_the_set_fails_validation(
    model: type[BaseModel], valid: dict[str, Any], field: str, outside: Any
) -> None:
    model.model_validate(valid)  # the valid one passes, so the failure below is the field's
    with pytest.raises(ValidationError) as e:
        model.model_validate({**valid, field: outside})
    assert e.value.errors()[0]["loc"][0] == field


def test_a_launch_without_a_key_fails_validation() -> None:
    for key in set(LAUNCH) - LAUNCH_KEYS_SINCE_SHORT_SAMPLES:
        with pytest.raises(ValidationError):
            LaunchOut.model_validate({k: v for k, v in LAUNCH.items() if k != key})
    # a launch stored before short samples still reads, with nothing said per sample
    old = LaunchOut.model_validate(
        {k: v for k, v in LAUNCH.items() if k not in LAUNCH_KEYS_SINCE_SHORT_SAMPLES}
    )
    assert (old.short_samples, old.disturbed_samples) == (None, None)
