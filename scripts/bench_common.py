"""What every `make bench` section shares: the machine line, the "Measured … on …" header and writing a
section's table into its doc between `<!-- bench:marker -->` tags."""

from __future__ import annotations

import datetime as dt
import os
import platform
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def machine_line() -> str:
    cpu = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    virt = ""
    if shutil.which("systemd-detect-virt"):
        virt = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True).stdout.strip()
    return f"{cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}, virtualization: {virt or 'unknown'}"


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def measured(extra: str = "") -> str:
    """A section's first line: when and on what; `extra` goes before the full stop."""
    return f"Measured {now_utc()} on: {machine_line()}{extra}."


def write_section(doc: Path, marker: str, table: str) -> None:
    """Replaces the part of `doc` after `<!-- bench:marker -->` up to the next marker or the next heading
    (`#`, `##`), whichever comes first, or the end: prose written after a table stays."""
    tag = f"<!-- bench:{marker} -->"
    text = doc.read_text() if doc.exists() else ""
    if tag in text:
        head, rest = text.split(tag, 1)
        ends = [i for i in (rest.find("<!-- bench:"), rest.find("\n# "), rest.find("\n## ")) if i >= 0]
        nxt = min(ends) if ends else -1
        tail = rest[nxt:].lstrip("\n") if nxt >= 0 else ""
    else:
        head, tail = text, ""
    doc.write_text(head.rstrip() + f"\n\n{tag}\n{table}\n" + ("\n" + tail if tail else ""))
    print(f"bench: wrote {doc.relative_to(ROOT)}")


class Out:
    """Where a section's table goes: always printed; written into docs/<doc> unless --no-write."""

    def __init__(self, write: bool) -> None:
        self.write = write

    def emit(self, doc: str, marker: str, lines: list[str], ok: bool = True) -> None:
        table = "\n".join(lines)
        print(table)
        if self.write and ok:
            write_section(ROOT / "docs" / doc, marker, table)
