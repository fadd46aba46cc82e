"""Kernel parameters: typed REST/DB values <-> canonical wire strings, validated against a kernel spec.

A kernel spec here is the typed JSON form of `--list` (docs/architecture.md): {id, title, family, unit,
description, params: [{name, type, default, min, max, sweep, choices, help}], seed_reference, executable}.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from typing import Any, Literal

from ctxbench_server.sql.text import ELLIPSIS, storable

# The parameter types of the kernel contract (kernel-cli.schema.json `param.type`).
ParamType = Literal["int", "float", "choice", "bool", "string"]
MAX_STRING = 4096
# Wire ints and floats (kernels/contract/README.md "Parameter values"): int() and float() alone also take
# spaces, '+', underscores, non-ASCII digits, "inf" and "nan".
WIRE_INT = re.compile(r"-?[0-9]+")
WIRE_FLOAT = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# The params_key columns (results, latest_results): a longer key keeps its head and a digest of the whole.
MAX_PARAMS_KEY = 1024


class ParamError(ValueError):
    """One parameter value that does not fit its spec; `type` is the FastAPI-style error type."""

    def __init__(self, msg: str, type_: str = "value_error") -> None:
        super().__init__(msg)
        self.msg = msg
        self.type = type_


def canonical(value: Any, ptype: str) -> str:
    """The wire form of a typed value (already validated)."""
    if ptype == "bool":
        return "true" if value else "false"
    if ptype == "int":
        return str(int(value))
    if ptype == "float":
        # Python's repr: the shortest round-tripping decimal ("0.5", "1.0", "1e-05", "1e+16"). The Go
        # agent's catalog.FormatFloat writes the same bytes.
        return repr(float(value))
    return str(value)


def parse_canonical(text: str, ptype: str) -> Any:
    """The typed value of a wire string. Raises ParamError."""
    try:
        if ptype == "int":
            if not WIRE_INT.fullmatch(text):
                raise ValueError
            return int(text)
        if ptype == "float":
            if not WIRE_FLOAT.fullmatch(text):
                raise ValueError
            f = float(text)
            if not math.isfinite(f):
                raise ValueError
            return f
        if ptype == "bool":
            if text in ("true", "false"):
                return text == "true"
            raise ValueError
    except ValueError:
        raise ParamError(f"{text!r} is not a canonical {ptype}", f"{ptype}_parsing") from None
    return text


def check_value(value: Any, p: Mapping[str, Any]) -> Any:
    """Validates one typed value against a param spec and returns it normalised. Raises ParamError."""
    ptype = p.get("type")
    if ptype == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise ParamError("Input should be a valid integer", "int_type")
        if not -(2**63) <= value < 2**63:  # the agent and kernels parse 64-bit integers
            raise ParamError("Input should fit in a 64-bit integer", "int_too_large")
    elif ptype == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ParamError("Input should be a valid number", "float_type")
        value = float(value)
        if not math.isfinite(value):
            raise ParamError("Input should be a finite number", "finite_number")
    elif ptype == "bool":
        if not isinstance(value, bool):
            raise ParamError("Input should be a valid boolean", "bool_type")
    elif ptype == "choice":
        if not isinstance(value, str):
            raise ParamError("Input should be a valid string", "string_type")
        choices = p.get("choices") or []
        if value not in choices:
            raise ParamError(f"Input should be one of {choices}", "enum")
    elif ptype == "string":
        if not isinstance(value, str):
            raise ParamError("Input should be a valid string", "string_type")
        if len(value) > MAX_STRING:
            raise ParamError(f"String should have at most {MAX_STRING} characters", "string_too_long")
        if "\x00" in value:  # a kernel's argv cannot carry it (and PostgreSQL cannot store it)
            raise ParamError("String should not contain a NUL character", "string_nul")
    else:
        raise ParamError(f"the kernel declares an unknown parameter type {ptype!r}", "param_type")
    if ptype in ("int", "float"):
        lo, hi = p.get("min"), p.get("max")
        if lo is not None and value < lo:
            raise ParamError(f"Input should be greater than or equal to {_num(lo)}", "greater_than_equal")
        if hi is not None and value > hi:
            raise ParamError(f"Input should be less than or equal to {_num(hi)}", "less_than_equal")
    return value


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def defaults(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Each parameter's default; one without a valid default is left out (the kernel picks it)."""
    out = {}
    for p in spec.get("params", []):
        try:
            out[p["name"]] = check_value(p.get("default"), p)
        except ParamError:
            continue
    return out


def params_by_name(spec: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {p["name"]: p for p in spec.get("params", [])}


def to_wire(spec: Mapping[str, Any], typed: Mapping[str, Any]) -> dict[str, str]:
    """Typed params (validated) -> canonical strings for RunItem.params."""
    by_name = params_by_name(spec)
    out = {}
    for k, v in typed.items():
        try:
            out[k] = canonical(v, by_name[k]["type"]) if k in by_name else str(v)
        except (TypeError, ValueError):  # a value stored under an older catalog: send it as it is
            out[k] = str(v)
    return out


def from_wire(spec: Mapping[str, Any] | None, wire: Mapping[str, str]) -> dict[str, Any]:
    """Canonical strings (e.g. from a ResultReport) -> typed JSON values; unknown names stay strings."""
    by_name = params_by_name(spec or {})
    out: dict[str, Any] = {}
    for k, v in sorted(wire.items()):
        p = by_name.get(k)
        try:
            out[k] = parse_canonical(v, p["type"]) if p else v
        except ParamError:
            out[k] = v
    return out


def params_key(spec: Mapping[str, Any] | None, typed: Mapping[str, Any]) -> str:
    """A stable string for one parameter point, e.g. "placement=same_core&threads=4" (grouping, indexes)."""
    by_name = params_by_name(spec or {})
    parts = []
    for k in sorted(typed):
        p = by_name.get(k)
        parts.append(f"{k}={canonical(typed[k], p['type']) if p else typed[k]}")
    key = "&".join(parts)
    if len(key) <= MAX_PARAMS_KEY and "\x00" not in key:
        return key
    # Too long for its column (a long string value) or not storable (PostgreSQL refuses NUL): still one
    # stable key per point, readable at its start.
    digest = "#sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return storable(key)[: MAX_PARAMS_KEY - len(digest) - 1] + ELLIPSIS + digest
