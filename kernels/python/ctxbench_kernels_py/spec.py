"""Kernel specs as `--list` prints them (DESIGN 3.1), and parsing of `--param NAME=VALUE` against them.

Values on the command line are canonical strings (docs/architecture.md): ints in decimal, floats in the
shortest round-tripping form, bools `true`/`false`, choices and strings verbatim.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_DECIMAL_INT = re.compile(r"-?[0-9]+")
# float("...") alone also takes spaces, '+', underscores, "inf" and "nan" (kernels/contract/README.md).
_DECIMAL_FLOAT = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
MAX_STRING = 4096


def is_decimal_int(text: str) -> bool:
    """Canonical ints only: no sign '+', no spaces, no underscores (int() would take all three)."""
    return _DECIMAL_INT.fullmatch(text) is not None


def canonical(value: Any) -> str:
    """The canonical string of a typed value (as seed_reference params carry them on the wire)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


class UsageError(Exception):
    """Bad arguments: exit 2 with this message as the one line on stderr."""


class Unsupported(Exception):
    """The kernel cannot run on this host: exit 3 with this message as the one line on stderr."""


class SelfCheckError(Exception):
    """The kernel's own answer did not add up: exit 1."""


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # "int" | "float" | "choice" | "bool" | "string"
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    sweep: tuple[Any, ...] | None = None
    choices: tuple[str, ...] | None = None

    def as_json(self) -> dict[str, Any]:
        # Every key, always: null min/max where not numeric, empty sweep/choices (as the C++ kernels list).
        return {
            "name": self.name,
            "type": self.type,
            "default": self.default,
            "min": self.min,
            "max": self.max,
            "sweep": list(self.sweep or ()),
            "choices": list(self.choices or ()),
            "help": self.help,
        }

    def parse(self, text: str) -> Any:
        """The typed value of a canonical string, or UsageError naming the parameter and the problem."""
        where = f"parameter {self.name}"
        value: Any
        if self.type == "int":
            if not is_decimal_int(text):
                raise UsageError(f"{where}: {text!r} is not an integer")
            value = int(text, 10)
        elif self.type == "float":
            if _DECIMAL_FLOAT.fullmatch(text) is None:
                raise UsageError(f"{where}: {text!r} is not a number")
            value = float(text)
            if not math.isfinite(value):
                raise UsageError(f"{where}: {text!r} is not a finite number")
        elif self.type == "bool":
            if text not in ("true", "false"):
                raise UsageError(f"{where}: {text!r} is not true or false")
            value = text == "true"
        elif self.type == "choice":
            assert self.choices is not None
            if text not in self.choices:
                raise UsageError(f"{where}: {text!r} is not one of {', '.join(self.choices)}")
            value = text
        else:
            if len(text) > MAX_STRING:
                raise UsageError(f"{where}: {len(text)} characters, more than {MAX_STRING}")
            if "\x00" in text:
                raise UsageError(f"{where} contains a NUL character")
            value = text
        if self.min is not None and value < self.min:
            raise UsageError(f"{where}: {text} is below the minimum {self.min}")
        if self.max is not None and value > self.max:
            raise UsageError(f"{where}: {text} is above the maximum {self.max}")
        return value


def json_fields(obj: Any, *names: str, **optional: Any) -> dict[str, Any]:
    """`--list` JSON of a spec: the named attributes in order, then each optional value that is not None."""
    out = {name: getattr(obj, name) for name in names}
    out.update((key, value) for key, value in optional.items() if value is not None)
    return out


@dataclass(frozen=True)
class SeedReference:
    seed: str
    value: float
    unit: str
    machine: str
    params: dict[str, Any] | None = None
    note: str | None = None

    def as_json(self) -> dict[str, Any]:
        params = None if self.params is None else {name: canonical(v) for name, v in self.params.items()}
        return json_fields(self, "seed", "value", "unit", "machine", params=params, note=self.note)


class Tally:
    """What one worker process counted while it ran a kernel: ops timed and the events that verify them.

    A kernel adds to `events` (e.g. "switches") the things it counted itself; the harness divides each by
    the ops to report `<event>_per_op` counters. `sink` keeps each op's result reachable.
    """

    def __init__(self) -> None:
        self.ops = 0
        self.events: dict[str, int] = {}
        self.sink: Any = None

    def add(self, event: str, n: int) -> None:
        self.events[event] = self.events.get(event, 0) + n

    def record(self, ops: int, event: str, n: int, sink: Any) -> None:
        """What one timed run of a kernel counted: `ops` ops, `n` of the event that verifies them, and
        its result (kept reachable)."""
        self.ops += ops
        self.add(event, n)
        self.sink = sink


# bench(params, loops, tally) runs `loops` outer iterations of `ops_per_loop(params)` ops each and returns
# the seconds they took (time.perf_counter around the ops only); it checks its own answer and raises
# SelfCheckError when the count does not add up.
BenchFunc = Callable[[dict[str, Any], int, Tally], float]


@dataclass(frozen=True)
class Kernel:
    id: str
    title: str
    description: str
    bench: BenchFunc
    ops_per_loop: Callable[[dict[str, Any]], int] = lambda params: 1
    params: tuple[Param, ...] = ()
    unit: str = "ns/op"
    seed_reference: SeedReference | None = None
    # Called before anything runs; raises Unsupported when the host lacks what the kernel needs.
    check_host: Callable[[], None] = lambda: None
    # One thread that never blocks: its CPU time should equal its wall time on a quiet host. The harness
    # then adds the counters cpu_ns_per_op and cpu_wall_ratio (kernels/README.md).
    cpu_bound: bool = False

    @property
    def family(self) -> str:
        """The id's first segment (kernels/contract/README.md "Names")."""
        return self.id.split(".", 1)[0]

    def as_json(self) -> dict[str, Any]:
        seed = None if self.seed_reference is None else self.seed_reference.as_json()
        params = [p.as_json() for p in self.params]
        return json_fields(
            self, "id", "title", "family", "unit", "description", params=params, seed_reference=seed
        )

    def resolve(self, given: dict[str, str]) -> dict[str, Any]:
        """All params, typed, defaults filled in; UsageError for an unknown name or a bad value."""
        known = {p.name: p for p in self.params}
        for name in given:
            if name not in known:
                names = ", ".join(known) or "none"
                raise UsageError(f"kernel {self.id} has no parameter {name!r} (it has: {names})")
        return {p.name: (p.parse(given[p.name]) if p.name in given else p.default) for p in self.params}
