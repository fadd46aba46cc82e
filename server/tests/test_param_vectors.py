"""contract/params.py against the golden vectors every parameter implementation shares
(kernels/contract/param-vectors.json, kernels/contract/README.md "Parameter values")."""

import json
from pathlib import Path
from typing import Any

import pytest

from ctxbench_server.contract.params import ParamError, canonical, check_value, parse_canonical

VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "kernels/contract/param-vectors.json").read_text()
)
PARAMS = VECTORS["params"]


def expand(x: Any) -> Any:
    """A vector value; {"repeat": S, "times": N} is S repeated N times."""
    return x["repeat"] * x["times"] if isinstance(x, dict) else x


def vector_id(v: dict[str, Any]) -> str:
    return f"{v['param']}={json.dumps(v['input'])[:40]}"


def check(v: dict[str, Any], typed_of: Any) -> None:
    p = PARAMS[v["param"]]
    try:
        got: str | None = canonical(check_value(typed_of(expand(v["input"]), p["type"]), p), p["type"])
    except ParamError:
        got = None
    if "error" in v:
        assert got is None, f"accepted as {got!r}, want an error ({v['error']})"
    else:
        assert got == expand(v["canonical"])


@pytest.mark.parametrize("v", VECTORS["wire"], ids=vector_id)
def test_wire_vectors(v: dict[str, Any]) -> None:
    check(v, parse_canonical)


@pytest.mark.parametrize("v", VECTORS["json"], ids=vector_id)
def test_json_vectors(v: dict[str, Any]) -> None:
    # REST bodies carry typed values: a string is never a number (the server is a strict reader).
    check(v, lambda value, _ptype: value)


def test_there_are_vectors_of_every_type() -> None:
    types = {PARAMS[v["param"]]["type"] for v in VECTORS["wire"]}
    assert types == {"int", "float", "bool", "choice", "string"}
