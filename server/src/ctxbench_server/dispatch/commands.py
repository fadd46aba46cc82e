"""What the server tells an agent, as plain objects; agents/wire.py writes them as protobuf."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class StartItem:
    """One item of a StartRun: params already in wire form (canonical strings, contract.params.to_wire)."""

    item_id: str
    kernel_id: str
    params: dict[str, str]
    repetitions: int
    min_time_s: float
    timeout_s: float
    launches: int
    sample_time_s: float = 0.0  # timed work in one short sample; 0: one long sample per repetition


@dataclass(frozen=True, slots=True)
class StartRun:
    """Run these items, in order. `more`: further parts follow; `continued`: a part after the first."""

    run_id: str
    items: list[StartItem] = field(default_factory=list)
    more: bool = False
    continued: bool = False


@dataclass(frozen=True, slots=True)
class CancelRun:
    run_id: str


Command = StartRun | CancelRun


def _string(s: str) -> int:
    # tag (1 byte) + length (a varint: at most 5 bytes) + the UTF-8 bytes
    n = len(s)
    return 6 + (n if s.isascii() else len(s.encode("utf-8", "surrogatepass")))


def params_size_bound(params: dict[str, str]) -> int:
    return sum(6 + _string(k) + _string(v) for k, v in params.items())


def wire_size_bound(item: StartItem, params_size: int | None = None) -> int:
    """At least the bytes the item takes inside a StartRun on the wire (protobuf: each string its tag,
    length and bytes; each map entry its own tag and length around its key and value; the numbers at
    most 11 bytes each; and the item's own tag and length). `params_size`: params_size_bound(item.params)
    when known. tests/test_wire.py checks it against protobuf."""
    if params_size is None:
        params_size = params_size_bound(item.params)
    return _string(item.item_id) + _string(item.kernel_id) + 4 * 11 + 6 + params_size
