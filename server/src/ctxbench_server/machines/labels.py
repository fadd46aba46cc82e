"""Machine labels and selectors, and the hardware class every machine is derived into.

A label is `key=value`, set by an admin (PATCH /machines) or by the agent (`--label`, in its Hello). The
shape follows Kubernetes' labels, which operators already know: a key of letters, digits, `-`, `_`, `.`
and `/` (at most 63 characters), a value of the same characters (at most 63, may be empty). A selector is
a comma-separated list of requirements, all of which must hold: `key=value` (or `key==value`),
`key!=value` (a machine without the key matches), `key` (has it), `!key` (has it not).

The hardware class groups machines whose figures may be compared as peers: the same CPU model, logical
CPU count, memory (rounded to GiB) and kernel release.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ctxbench_server.errors import ValidationFailed, field_error

MAX_LABELS = 32
MAX_SELECTOR_CHARS = 1024
_TOKEN = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._/-]{0,61}[A-Za-z0-9])?$")
_VALUE = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9._/-]{0,61}[A-Za-z0-9])?)?$")

Op = Literal["=", "!=", "exists", "absent"]


def label_problem(key: str, value: str) -> str | None:
    """Why `key=value` is not a label, or None when it is."""
    if not _TOKEN.match(key):
        return (
            f"label key {key[:80]!r}: 1-63 characters of letters, digits, '-', '_', '.', '/', "
            "beginning and ending with a letter or digit"
        )
    if not _VALUE.match(value):
        return (
            f"label value {value[:80]!r} of {key!r}: at most 63 characters of letters, digits, '-', '_', "
            "'.', '/', beginning and ending with a letter or digit"
        )
    return None


def validate_labels(labels: Mapping[str, str], loc: list[str | int]) -> dict[str, str]:
    """The labels as a plain dict, or a 422 naming each bad one under `loc`."""
    if len(labels) > MAX_LABELS:
        raise ValidationFailed([field_error(loc, f"at most {MAX_LABELS} labels (got {len(labels)})")])
    errors = [
        field_error([*loc, k], problem)
        for k, v in labels.items()
        if (problem := label_problem(k, v)) is not None
    ]
    if errors:
        raise ValidationFailed(errors)
    return dict(sorted(labels.items()))


def parse_label_args(args: list[str], loc: list[str | int]) -> dict[str, str]:
    """`["k=v", ...]` (the agent's flags, the CLI's) as a dict; a 422 naming a malformed one."""
    out: dict[str, str] = {}
    for i, arg in enumerate(args):
        key, sep, value = arg.partition("=")
        if not sep:
            raise ValidationFailed([field_error([*loc, i], f"{arg[:80]!r}: a label is key=value")])
        out[key] = value
    return validate_labels(out, loc)


def effective(machine_labels: Mapping[str, str], agent_labels: Mapping[str, str]) -> dict[str, str]:
    """The labels a machine shows and is selected by: the agent's, overridden key by key by the admin's."""
    return dict(sorted({**agent_labels, **machine_labels}.items()))


@dataclass(frozen=True)
class Requirement:
    key: str
    op: Op
    value: str = ""

    def holds(self, labels: Mapping[str, str]) -> bool:
        if self.op == "exists":
            return self.key in labels
        if self.op == "absent":
            return self.key not in labels
        if self.op == "=":
            return labels.get(self.key) == self.value
        return labels.get(self.key) != self.value

    def __str__(self) -> str:
        if self.op == "exists":
            return self.key
        if self.op == "absent":
            return f"!{self.key}"
        return f"{self.key}{self.op}{self.value}"


@dataclass(frozen=True)
class Selector:
    """All requirements must hold; the empty selector matches every machine."""

    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.holds(labels) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def parse_selector(text: str, loc: list[str | int]) -> Selector:
    """A selector from its text form, or a 422 under `loc` naming the requirement that is wrong."""
    if len(text) > MAX_SELECTOR_CHARS:
        raise ValidationFailed([field_error(loc, f"a selector has at most {MAX_SELECTOR_CHARS} characters")])
    reqs: list[Requirement] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "!=" in part:
            key, value = (s.strip() for s in part.split("!=", 1))
            req = Requirement(key, "!=", value)
        elif "=" in part:
            key, value = (s.strip() for s in part.split("==" if "==" in part else "=", 1))
            req = Requirement(key, "=", value)
        elif part.startswith("!"):
            req = Requirement(part[1:].strip(), "absent")
        else:
            req = Requirement(part, "exists")
        problem = label_problem(req.key, req.value)
        if problem is not None:
            raise ValidationFailed([field_error(loc, f"requirement {part[:80]!r}: {problem}")])
        reqs.append(req)
    return Selector(tuple(reqs))


def hardware_class(facts: Mapping[str, Any]) -> str:
    """What makes two machines peers: CPU model, logical CPUs, memory (GiB) and kernel release, as one
    readable string ("AMD EPYC 7B13 · 2 CPUs · 24 GiB · 6.1.0-18-amd64"); the parts a machine does not
    report are left out (an empty string when it reports none)."""
    parts: list[str] = []
    if model := str(facts.get("cpu_model") or "").strip():
        parts.append(" ".join(model.split()))
    if cpus := facts.get("logical_cpus"):
        parts.append(f"{cpus} CPU" + ("" if cpus == 1 else "s"))
    if mem := facts.get("memory_bytes"):
        parts.append(f"{round(int(mem) / 2**30)} GiB")
    if kernel := str(facts.get("kernel_release") or "").strip():
        parts.append(kernel)
    return " · ".join(parts)


def agent_labels(raw: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """An agent's labels (its Hello) as stored: the valid ones, the first MAX_LABELS by key, sorted; and
    why each other one was dropped. An agent checks its flags at start, so a drop means an agent that
    does not (an older or a foreign one): the Hello is still accepted."""
    kept: dict[str, str] = {}
    dropped: list[str] = []
    for key in sorted(raw):
        value = raw[key]
        if (problem := label_problem(key, value)) is not None:
            dropped.append(problem)
        elif len(kept) >= MAX_LABELS:
            dropped.append(f"label {key[:80]!r}: more than {MAX_LABELS} labels")
        else:
            kept[key] = value
    return kept, dropped


def merge_patch(
    current: Mapping[str, str], patch: Mapping[str, str | None] | None, loc: list[str | int]
) -> dict[str, str]:
    """`current` after a JSON merge patch (RFC 7396): a string sets the key, null removes it, and a null
    patch removes every label. A 422 under `loc` names each bad key or value, or too many labels."""
    if patch is None:
        return {}
    merged = dict(current)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return validate_labels(merged, loc)
