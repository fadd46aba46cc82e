"""The arm64 bundle, cross-built here, under qemu-user-static: only glibc from outside the bundle,
every kernel executable lists, a few kernels run, and the agent reports its version (issue 10)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.bundles.test_bundle import GLIBC, KERNEL_EXES, version

QEMU = shutil.which("qemu-aarch64-static") or "qemu-aarch64-static"  # scripts/bootstrap.sh test


def qemu(*argv: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Runs an arm64 executable (the Python zipapp is arch-independent: the host's python3 runs it)."""
    exe = Path(argv[0])
    prefix = [] if exe.name == "ctxbench-kernels-py" else [QEMU]
    return subprocess.run(
        [*prefix, *map(str, argv)], capture_output=True, text=True, timeout=180, env=env, check=False
    )


def test_ld_so_under_qemu_finds_nothing_outside_the_bundle_but_glibc(arm64_bundle: Path) -> None:
    assert arm64_bundle.name == f"ctxbench-agent-{version()}-linux-arm64"
    out = qemu(
        arm64_bundle / "kernels" / "ctxbench-kernels-cpp", env={**os.environ, "LD_TRACE_LOADED_OBJECTS": "1"}
    )
    assert out.returncode == 0, out.stderr
    lines = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    assert any("libbenchmark" in line for line in lines), lines
    for line in lines:
        name, _, where = line.partition(" => ")
        assert "not found" not in line, line
        if GLIBC.match(name) or name.startswith("/"):
            continue
        assert Path(where.split(" (")[0]).resolve().is_relative_to(arm64_bundle.resolve()), line


def test_arm64_agent_version(arm64_bundle: Path) -> None:
    out = qemu(arm64_bundle / "bin" / "ctxbench-agent", "--version")
    assert out.returncode == 0 and out.stdout == f"ctxbench-agent {version()}\n", out


def test_arm64_cli_version(arm64_bundle: Path) -> None:
    out = qemu(arm64_bundle / "bin" / "ctxbench", "--version")
    assert out.returncode == 0 and out.stdout == f"ctxbench {version()}\n", out


@pytest.mark.parametrize("exe", KERNEL_EXES)
def test_every_arm64_kernel_executable_lists(arm64_bundle: Path, exe: str) -> None:
    out = qemu(arm64_bundle / "kernels" / exe, "--list")
    assert out.returncode == 0, out.stderr
    assert all(s["id"] for s in json.loads(out.stdout))


@pytest.mark.parametrize(
    ("exe", "kernel"),
    [
        ("ctxbench-kernels-cpp", "call.function"),
        ("ctxbench-kernels-cpp", "coroutine.switch"),  # Boost.Context's arm64 fcontext, linked statically
        ("ctxbench-kernels-go", "goroutine.create"),
    ],
)
def test_a_short_arm64_run(arm64_bundle: Path, exe: str, kernel: str) -> None:
    out = qemu(arm64_bundle / "kernels" / exe, "--run", kernel, "--min-time", "0.01", "--repetitions", "2")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert len(res["samples"]) == 2 and all(s > 0 for s in res["samples"])
