"""The most samples a result may carry is the kernel contract's (kernels/contract/kernel-cli.schema.json,
run.samples maxItems): the server reads it from the copy `make gen` puts in its package, the agent from
its own copy (kernels/contract/go/runresult). Here the contract file itself is the oracle, so a limit
written again in the server with another number fails."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from ctxbench_server.agents import reports_wire
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.ingest.messages import Refused

CONTRACT = Path(__file__).resolve().parents[2] / "kernels" / "contract" / "kernel-cli.schema.json"


def contract_limit() -> int:
    limit = json.loads(CONTRACT.read_text())["$defs"]["run"]["properties"]["samples"]["maxItems"]
    assert isinstance(limit, int) and limit > 0
    return limit


def with_samples(n: int) -> pb.ResultReport:
    return pb.ResultReport(
        result_id=str(uuid.uuid4()),
        run_id=str(uuid.uuid4()),
        item_id=str(uuid.uuid4()),
        status=pb.RESULT_STATUS_OK,
        kernel_id="syscall.getppid",
        unit="ns/op",
        samples=[1.0] * n,
    )


def test_the_package_copy_is_the_contract() -> None:
    assert reports_wire.KERNEL_CLI_SCHEMA.read_bytes() == CONTRACT.read_bytes(), "run `make gen`"


def test_a_report_at_the_contracts_limit_is_taken_and_one_more_sample_refused() -> None:
    limit = contract_limit()
    assert reports_wire.report(with_samples(limit)).malformed is None
    over = reports_wire.report(with_samples(limit + 1))
    assert over.malformed == f"{limit + 1} samples, more than the {limit} a result may carry"
    # refused for good: code 3, which the agent drops from its spool (and logs)
    rejected = reports_wire.reject(Refused(over.malformed, "malformed", over.run_id, over.result_id))
    assert rejected.code == reports_wire.INVALID_ARGUMENT and rejected.message == over.malformed


@pytest.mark.parametrize(
    "samples",
    [{"type": "array"}, {"maxItems": 0}, {"maxItems": "100"}, {"maxItems": True}],
)
def test_a_schema_without_a_positive_limit_is_refused(samples: dict[str, object]) -> None:
    with pytest.raises(KeyError, match=r"run\.samples"):
        reports_wire.contract_max_items({"$defs": {"run": {"properties": {"samples": samples}}}}, "samples")
