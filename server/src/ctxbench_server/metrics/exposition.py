"""The OpenMetrics 1.0 text format, written by hand: a few gauge families, so a client library (and its
process-global registry) would be more than the format needs. Spec:
https://github.com/prometheus/OpenMetrics/blob/main/specification/OpenMetrics.md"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"


@dataclass
class Gauge:
    """One gauge family: its samples are (labels, value), each label set once."""

    name: str
    help: str
    unit: str = ""  # OpenMetrics UNIT; the name must then end in _<unit>
    samples: list[tuple[Mapping[str, str], float]] = field(default_factory=list)

    def add(self, value: float, **labels: str) -> None:
        self.samples.append((labels, value))


def escape(text: str) -> str:
    """A label value or HELP text as the format quotes it: backslash, double quote and newline escaped.
    Every other character stands as it is (the format is UTF-8)."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{escape(v)}"' for k, v in labels.items()) + "}"


def render(families: Iterable[Gauge]) -> bytes:
    """The exposition, `# EOF` last. UTF-8; a character that cannot be encoded (a lone surrogate from
    some agent's JSON) becomes '?' rather than failing the scrape."""
    lines: list[str] = []
    for f in families:
        lines.append(f"# TYPE {f.name} gauge")
        if f.unit:
            lines.append(f"# UNIT {f.name} {f.unit}")
        lines.append(f"# HELP {f.name} {escape(f.help)}")
        lines.extend(f"{f.name}{_labels(labels)} {number(value)}" for labels, value in f.samples)
    lines.append("# EOF")
    return ("\n".join(lines) + "\n").encode("utf-8", "replace")
