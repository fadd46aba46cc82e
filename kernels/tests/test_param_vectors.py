"""The kernels' parameter parsers against the golden vectors (kernels/contract/param-vectors.json): the
C++ ParamSpec::Parse (through build/cmake/kernels-cpp/param_probe) and the Python kernels' spec.Param.
The Go kernels' spec.Parse has its own go test on the same file; the server, agent and explorer theirs."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from cli_helpers import REPO, VECTORS, expand

sys.path.insert(0, str(REPO / "kernels" / "python"))
from ctxbench_kernels_py.spec import Param, UsageError, canonical

PROBE = REPO / "build" / "cmake" / "kernels-cpp" / "param_probe"
PARAMS = VECTORS["params"]
WIRE = VECTORS["wire"]


def vector_id(v: dict[str, Any]) -> str:
    return f"{v['param']}={str(v['input'])[:40]!r}"


def want(v: dict[str, Any]) -> str | None:
    return None if "error" in v else expand(v["canonical"])


@pytest.mark.parametrize("v", WIRE, ids=vector_id)
def test_python_kernels_parse(v: dict[str, Any]) -> None:
    spec = PARAMS[v["param"]]
    param = Param(
        name=spec["name"],
        type=spec["type"],
        default=spec["default"],
        help=spec["help"],
        min=spec["min"],
        max=spec["max"],
        choices=tuple(spec["choices"]) or None,
    )
    try:
        got: str | None = canonical(param.parse(expand(v["input"])))
    except UsageError:
        got = None
    assert got == want(v)


def probe_line(v: dict[str, Any]) -> str:
    spec = PARAMS[v["param"]]
    bound = lambda x: "-" if x is None else repr(float(x))  # noqa: E731
    choices = ",".join(c.encode().hex() for c in spec["choices"])
    text = expand(v["input"]).encode("utf-8", "surrogateescape").hex()
    return "\t".join([spec["type"], bound(spec["min"]), bound(spec["max"]), choices, text])


def test_cpp_param_spec_parse() -> None:
    if not PROBE.is_file():
        pytest.fail(f"{PROBE} is missing: run `make kernels` first")
    proc = subprocess.run(
        [str(PROBE)],
        input="".join(probe_line(v) + "\n" for v in WIRE),
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    answers = proc.stdout.splitlines()
    assert len(answers) == len(WIRE)
    wrong = []
    for v, answer in zip(WIRE, answers, strict=True):
        status, _, rest = answer.partition("\t")
        got = bytes.fromhex(rest).decode() if status == "ok" else None
        if got != want(v):
            wrong.append((v["param"], v["input"] if len(str(v["input"])) < 50 else "...", answer[:80]))
    assert wrong == []
