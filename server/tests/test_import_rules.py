"""The server's seams as import rules (docs/architecture.md "Seams: who may import whom"), read from the
source with ast: each rule fails on the first module that breaks it, naming the import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "src" / "ctxbench_server"

# The outer layer: HTTP routers, dependencies and middleware, the gRPC adapter, and the wiring. They may
# import the domain; the domain never imports them.
ADAPTER_MODULES = {"app", "main", "fleet.dist", "exception_handlers", "frontend"}
ADAPTER_PACKAGES = {"agents"}
ADAPTER_NAMES = {"router", "deps", "middleware"}

# Modules outside agents/ that still read protobuf, each with its reason (none: ingest's translation is
# agents/reports_wire.py).
GEN_ALLOWED: set[str] = set()


def module_imports() -> dict[str, set[str]]:
    """module -> the ctxbench_server modules (or names) it imports, type-only imports included."""
    out: dict[str, set[str]] = {}
    for f in ROOT.rglob("*.py"):
        rel = f.relative_to(ROOT).with_suffix("")
        if rel.parts[0] in ("gen", "migrations"):
            continue
        mod = ".".join(p for p in rel.parts if p != "__init__")
        found: set[str] = set()
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == "ctxbench_server":
                    found |= {a.name for a in node.names}
                elif node.module.startswith("ctxbench_server."):
                    found.add(node.module.removeprefix("ctxbench_server."))
            elif isinstance(node, ast.Import):
                found |= {
                    a.name.removeprefix("ctxbench_server.")
                    for a in node.names
                    if a.name.startswith("ctxbench_server.")
                }
            elif isinstance(node, ast.ImportFrom) and node.level > 0:
                raise AssertionError(f"{mod}: relative import (write ctxbench_server.<module>)")
        out[mod] = found
    return out


def package(mod: str) -> str:
    return mod.split(".")[0]


def is_adapter(mod: str) -> bool:
    return (
        mod in ADAPTER_MODULES or package(mod) in ADAPTER_PACKAGES or mod.rsplit(".", 1)[-1] in ADAPTER_NAMES
    )


IMPORTS = module_imports()


def test_the_source_was_read() -> None:
    assert {"agents.servicer", "agents.wire", "dispatch.dispatcher", "runs.service"} <= IMPORTS.keys()
    assert "dispatch.dispatcher" in IMPORTS["agents.servicer"]


def test_only_agents_speak_protobuf() -> None:
    bad = [
        f"{mod} imports {t}"
        for mod, targets in IMPORTS.items()
        for t in targets
        if package(t) == "gen" and package(mod) != "agents" and mod not in GEN_ALLOWED
    ]
    assert not bad, "protobuf outside agents/ (translate in agents/wire.py): " + "; ".join(bad)


def test_nothing_but_the_wiring_imports_agents() -> None:
    bad = [
        f"{mod} imports {t}"
        for mod, targets in IMPORTS.items()
        for t in targets
        if package(t) == "agents" and package(mod) != "agents" and mod != "main"
    ]
    assert not bad, "; ".join(bad)


def test_the_domain_never_imports_an_adapter() -> None:
    bad = [
        f"{mod} imports {t}"
        for mod, targets in IMPORTS.items()
        if not is_adapter(mod)
        for t in targets
        if t in IMPORTS and is_adapter(t)
    ]
    assert not bad, "; ".join(bad)


def domain_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for mod, targets in IMPORTS.items():
        if is_adapter(mod):
            continue
        for t in targets:
            if package(t) != package(mod) and not is_adapter(t):
                graph.setdefault(package(mod), set()).add(package(t))
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_domain_packages_import_each_other_without_a_cycle() -> None:
    cycle = find_cycle(domain_graph())
    assert cycle is None, "import cycle between domain packages: " + " -> ".join(cycle or [])


@pytest.mark.parametrize(
    ("graph", "cycle"),
    [
        ({"runs": {"dispatch"}, "dispatch": {"machines"}}, None),
        ({"runs": {"dispatch"}, "dispatch": {"runs"}}, ["dispatch", "runs", "dispatch"]),
    ],
)
def test_find_cycle_finds_one(graph: dict[str, set[str]], cycle: list[str] | None) -> None:
    assert find_cycle(graph) == cycle


def test_dispatch_stays_below_runs() -> None:
    """runs (the POST) starts work through dispatch; dispatch knows runs only as rows (models)."""
    graph = domain_graph()
    assert "dispatch" in graph.get("runs", set())
    assert "runs" not in graph.get("dispatch", set())
