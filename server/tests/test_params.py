import pytest

from ctxbench_server.agents.wire import spec_from_proto
from ctxbench_server.contract.params import (
    ParamError,
    canonical,
    check_value,
    defaults,
    from_wire,
    params_key,
    parse_canonical,
    to_wire,
)
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb

from .fake_agent import fake_catalog

SPEC = spec_from_proto(fake_catalog()[0])
BY_NAME = {p["name"]: p for p in SPEC["params"]}


def test_spec_from_proto_is_typed() -> None:
    assert SPEC["id"] == "syscall.getppid"
    assert BY_NAME["threads"] == {
        "name": "threads",
        "type": "int",
        "default": 1,
        "min": 1,
        "max": 64,
        "sweep": [1, 2, 4],
        "choices": [],
        "help": "threads",
    }
    assert BY_NAME["ratio"]["default"] == 0.5
    assert BY_NAME["ratio"]["min"] == 0.0
    assert BY_NAME["direct"]["default"] is False
    assert BY_NAME["placement"]["choices"] == ["same_core", "cross_core", "unpinned"]
    assert BY_NAME["dir"]["min"] is None
    assert SPEC["seed_reference"]["value"] == 49.47
    assert spec_from_proto(pb.KernelSpec(id="x"))["seed_reference"] is None


@pytest.mark.parametrize(
    ("value", "ptype", "text"),
    [
        (4, "int", "4"),
        (-3, "int", "-3"),
        (0.5, "float", "0.5"),
        (100.0, "float", "100.0"),
        (0.0, "float", "0.0"),
        (1e-4, "float", "0.0001"),
        (1e16, "float", "1e+16"),
        (9999999999999998.0, "float", "9999999999999998.0"),
        (1e-05, "float", "1e-05"),
        (0.1, "float", "0.1"),
        (True, "bool", "true"),
        (False, "bool", "false"),
        ("same_core", "choice", "same_core"),
        ("/tmp/x y", "string", "/tmp/x y"),
    ],
)
def test_canonical_round_trip(value: object, ptype: str, text: str) -> None:
    assert canonical(value, ptype) == text
    assert parse_canonical(text, ptype) == value


@pytest.mark.parametrize(
    ("text", "ptype"), [("4.5", "int"), ("x", "float"), ("nan", "float"), ("yes", "bool")]
)
def test_parse_canonical_rejects(text: str, ptype: str) -> None:
    with pytest.raises(ParamError):
        parse_canonical(text, ptype)


@pytest.mark.parametrize(
    ("name", "value", "err"),
    [
        ("threads", "4", "int_type"),
        ("threads", True, "int_type"),
        ("threads", 2.5, "int_type"),
        ("threads", 0, "greater_than_equal"),
        ("threads", 65, "less_than_equal"),
        ("ratio", "0.5", "float_type"),
        ("ratio", 1.5, "less_than_equal"),
        ("direct", "true", "bool_type"),
        ("direct", 1, "bool_type"),
        ("placement", "far", "enum"),
        ("placement", 3, "string_type"),
        ("dir", 5, "string_type"),
        ("dir", "/tmp/a\x00b", "string_nul"),
    ],
)
def test_check_value_rejects(name: str, value: object, err: str) -> None:
    with pytest.raises(ParamError) as e:
        check_value(value, BY_NAME[name])
    assert e.value.type == err


def test_check_value_normalises() -> None:
    assert check_value(4.0, BY_NAME["threads"]) == 4
    assert check_value(1, BY_NAME["ratio"]) == 1.0
    assert isinstance(check_value(1, BY_NAME["ratio"]), float)
    assert check_value(64, BY_NAME["threads"]) == 64


def test_wire_conversions() -> None:
    typed = defaults(SPEC) | {"threads": 8}
    wire = to_wire(SPEC, typed)
    assert wire == {
        "threads": "8",
        "placement": "same_core",
        "ratio": "0.5",
        "direct": "false",
        "dir": "/tmp",
    }
    assert from_wire(SPEC, wire) == typed
    assert from_wire(SPEC, {"mystery": "1"}) == {"mystery": "1"}
    assert params_key(SPEC, typed) == "dir=/tmp&direct=false&placement=same_core&ratio=0.5&threads=8"


def test_param_without_valid_default_is_left_to_the_kernel() -> None:
    spec = spec_from_proto(
        pb.KernelSpec(
            id="k",
            params=[
                pb.ParamSpec(name="n", type=pb.PARAM_TYPE_INT, default_value=""),
                pb.ParamSpec(name="m", type=pb.PARAM_TYPE_INT, default_value="3"),
            ],
        )
    )
    assert defaults(spec) == {"m": 3}
    assert to_wire(spec, {"m": 3, "n": "junk"}) == {"m": "3", "n": "junk"}


def test_huge_int_refused_even_without_bounds() -> None:
    with pytest.raises(ParamError) as e:
        check_value(2**64, {"name": "n", "type": "int"})
    assert e.value.type == "int_too_large"
