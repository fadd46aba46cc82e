#!/usr/bin/env python3
"""Source files over 400 lines and functions over 80 lines, unless scripts/size-exceptions.txt gives a
reason for them (issue 14: "no source file over 400 lines and no function over 80 lines without a written
reason"). Run by `make lint`; exits 1 on a file or function over its limit without a reason, and on a
reason whose file or function is no longer over it (so the list only shrinks).

Functions: Python by its syntax tree (every def, nested ones too); Go, TypeScript and C++ by their
formatter's layout (gofmt, prettier, clang-format style): a top-level declaration starts at column 0 and
its body ends at the next line that is a lone `}` or `};` at column 0. Nested functions of those languages
count in their enclosing one.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXCEPTIONS = ROOT / "scripts" / "size-exceptions.txt"
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80
SOURCE = (".py", ".go", ".ts", ".tsx", ".cc", ".h", ".cpp", ".js", ".mjs", ".sh")
# Generated code (make gen): protobuf for Go and Python, the explorer's REST types.
GENERATED = re.compile(r"(^|/)gen/|\.pb\.go$|_pb2(_grpc)?\.pyi?$|^frontend/src/lib/api/")

# A top-level declaration that opens a function body, per language (formatted code).
GO_FUNC = re.compile(r"^func\b.*\{$")
TS_FUNC = re.compile(
    r"^(export\s+)?(default\s+)?(async\s+)?function\b|^(export\s+)?const\s+\w+\s*(:[^=]+)?=\s*(async\s*)?\(.*"
)
CPP_FUNC = re.compile(r"^[A-Za-z_][\w:<>,\s\*&~]*\([^;]*\)\s*(const\s*)?(noexcept\s*)?(override\s*)?\{?$")
BODY_END = re.compile(r"^\}[;)]*\s*$")


def tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [p for p in out.splitlines() if p.endswith(SOURCE) and not GENERATED.search(p)]


def python_functions(text: str) -> list[tuple[str, int, int]]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append((node.name, node.lineno, (node.end_lineno or node.lineno) - node.lineno + 1))
    return out


def layout_functions(lines: list[str], start: re.Pattern[str]) -> list[tuple[str, int, int]]:
    out = []
    begin: tuple[str, int] | None = None
    for i, line in enumerate(lines, 1):
        if begin is None:
            if start.match(line) and not line.startswith(("if", "for", "while", "switch", "return", "}")):
                name = re.findall(r"(\w+)\s*(?:=|\(|<)", line.replace("func ", "", 1))
                begin = (name[0] if name else line.strip()[:40], i)
        elif BODY_END.match(line):
            out.append((begin[0], begin[1], i - begin[1] + 1))
            begin = None
        elif line and not line[0].isspace() and start.match(line):
            begin = None  # a declaration without a body of its own (a prototype); start again here
    return out


def functions(path: str, text: str) -> list[tuple[str, int, int]]:
    if path.endswith(".py"):
        return python_functions(text)
    lines = text.splitlines()
    if path.endswith(".go"):
        return layout_functions(lines, GO_FUNC)
    if path.endswith((".ts", ".tsx", ".js", ".mjs")):
        return layout_functions(lines, TS_FUNC)
    if path.endswith((".cc", ".h", ".cpp")):
        return layout_functions(lines, CPP_FUNC)
    return []


def read_exceptions() -> dict[str, str]:
    """`path` or `path::function`, then ` -- ` and the reason; # starts a comment."""
    out: dict[str, str] = {}
    for n, raw in enumerate(EXCEPTIONS.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, reason = line.partition(" -- ")
        if not sep or not reason.strip():
            sys.exit(f"{EXCEPTIONS.name}:{n}: write `path[::function] -- reason`")
        out[key.strip()] = reason.strip()
    return out


def main() -> int:
    found: dict[str, str] = {}
    for path in tracked():
        file = ROOT / path
        if not file.is_file():
            continue
        text = file.read_text(errors="replace")
        n = text.count("\n")
        if n > MAX_FILE_LINES:
            found[path] = f"{path}: {n} lines (limit {MAX_FILE_LINES})"
        for name, line, length in functions(path, text):
            if length > MAX_FUNCTION_LINES:
                found[f"{path}::{name}"] = (
                    f"{path}:{line}: function {name} is {length} lines (limit {MAX_FUNCTION_LINES})"
                )
    reasons = read_exceptions()
    bad = [msg for key, msg in sorted(found.items()) if key not in reasons]
    stale = sorted(k for k in reasons if k not in found)
    for msg in bad:
        print(f"check_size: {msg}: shorten it, or give the reason in {EXCEPTIONS.relative_to(ROOT)}")
    for key in stale:
        print(f"check_size: {key} is within its limit now: remove it from {EXCEPTIONS.relative_to(ROOT)}")
    if not bad and not stale:
        print(f"check_size: {len(found)} over the limits, each with its reason")
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
