"""The amd64 bundle runs from wherever it is unpacked: only glibc from the host, every kernel lists,
a few kernels run, and the agent started from it enrolls and offers every kernel (issue 10, part 1)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.bundles.conftest import DIST, bundle_path
from tests.e2e.stack import ROOT, Agent, Server, online_machine, post_run, running, wait_run

# glibc's own libraries (and the vDSO): the only ones a bundle may take from the host.
GLIBC = re.compile(
    r"^(linux-vdso|linux-gate|libc|libm|libpthread|libdl|librt|libresolv|libutil|ld-linux[-\w.]*)\.so"
)
KERNEL_EXES = ("ctxbench-kernels-cpp", "ctxbench-kernels-go", "ctxbench-kernels-py")


def version() -> str:
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return f"{(ROOT / 'VERSION').read_text().strip()}+{sha.stdout.strip()}"


def elf_files(top: Path) -> list[Path]:
    return [p for p in sorted(top.rglob("*")) if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]


def test_layout_version_and_checksums(bundle: Path) -> None:
    assert bundle.name == f"ctxbench-agent-{version()}-linux-amd64"
    assert (bundle / "VERSION").read_text().strip() == version()
    for exe in (
        "bin/ctxbench-agent",
        "bin/ctxbench",
        *(f"kernels/{k}" for k in KERNEL_EXES),
        "kernels/libexec/ctxbench-exec-true",
    ):
        assert (bundle / exe).is_file() and (bundle / exe).stat().st_mode & 0o111, exe
    assert (bundle / "python" / "pyperf" / "__init__.py").is_file()
    assert (bundle / "share" / "ctxbench-agent.service").is_file()
    sums = dict(line.split("  ")[::-1] for line in (DIST / "SHA256SUMS").read_text().splitlines())
    tarball = bundle_path()
    assert sums[tarball.name] == hashlib.sha256(tarball.read_bytes()).hexdigest()


def test_ldd_finds_nothing_outside_the_bundle_but_glibc(bundle: Path) -> None:
    checked = 0
    for exe in elf_files(bundle):
        if exe.parent.name == "lib":
            continue  # the carried libraries are loaded by the kernels, whose RPATH applies to them
        out = subprocess.run(["ldd", str(exe)], capture_output=True, text=True).stdout
        if "not a dynamic executable" in out or "statically linked" in out:
            continue
        checked += 1
        for line in out.splitlines():
            name, _, where = line.strip().partition(" => ")
            path = where.split(" (")[0]
            assert "not found" not in line, f"{exe.name}: {line}"
            if GLIBC.match(name) or name.startswith("/"):
                continue
            assert Path(path).resolve().is_relative_to(bundle.resolve()), f"{exe.name}: {line.strip()}"
    assert checked >= 1  # the C++ kernels
    for static in ("bin/ctxbench-agent", "bin/ctxbench", "kernels/ctxbench-kernels-go"):
        out = subprocess.run(["ldd", str(bundle / static)], capture_output=True, text=True)
        assert "not a dynamic executable" in out.stdout + out.stderr, static


def test_agent_version_is_stamped(bundle: Path) -> None:
    out = subprocess.run([bundle / "bin" / "ctxbench-agent", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == f"ctxbench-agent {version()}\n"


def test_cli_version_is_stamped(bundle: Path) -> None:
    out = subprocess.run([bundle / "bin" / "ctxbench", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == f"ctxbench {version()}\n"


@pytest.mark.parametrize("exe", KERNEL_EXES)
def test_every_kernel_executable_lists(bundle: Path, exe: str) -> None:
    out = subprocess.run([bundle / "kernels" / exe, "--list"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    specs = json.loads(out.stdout)
    assert specs and all(s["id"] for s in specs)


@pytest.mark.parametrize(
    ("exe", "kernel"),
    [
        ("ctxbench-kernels-cpp", "syscall.getppid"),
        ("ctxbench-kernels-cpp", "coroutine.switch"),  # impl=fcontext default: Boost.Context, static
        ("ctxbench-kernels-cpp", "process.fork_exec"),  # the libexec helper
        ("ctxbench-kernels-go", "goroutine.create"),
        ("ctxbench-kernels-py", "call.py_loop"),  # pyperf from python/
    ],
)
def test_a_short_run_from_the_bundle(bundle: Path, exe: str, kernel: str) -> None:
    argv = [bundle / "kernels" / exe, "--run", kernel, "--min-time", "0.01", "--repetitions", "2"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=bundle.parent)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)


def test_python_kernels_exit_3_naming_a_missing_pyperf(bundle: Path, tmp_path: Path) -> None:
    moved = tmp_path / "python"
    (bundle / "python").rename(moved)
    try:
        argv = [bundle / "kernels" / "ctxbench-kernels-py", "--run", "call.py_loop", "--min-time", "0.01"]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    finally:
        moved.rename(bundle / "python")
    assert out.returncode == 3 and "pyperf" in out.stderr, (out.returncode, out.stderr)


def test_agent_from_the_bundle_offers_every_kernel_and_runs_one(bundle: Path, tmp_path: Path) -> None:
    expected: set[str] = set()
    for exe in KERNEL_EXES:
        out = subprocess.run([bundle / "kernels" / exe, "--list"], capture_output=True, text=True, timeout=60)
        expected |= {s["id"] for s in json.loads(out.stdout)}
    data = tmp_path / "data"
    data.mkdir()
    server = Server(data)
    try:
        agent = Agent(
            server,
            tmp_path / "state",
            name="bundle",
            kernels=bundle / "kernels",
            binary=bundle / "bin" / "ctxbench-agent",
        )
        with running(agent):
            machine = online_machine(server, "bundle")
            assert set(machine["kernels"]) == expected
            assert machine["agent_version"] == version()
            posted = post_run(
                server, machine["id"], [{"kernel": "syscall.getppid"}], repetitions=3, min_time_s=0.01
            )
            run = wait_run(server, posted["id"])
            assert run["status"] == "succeeded", run
            (res,) = server.http.get(f"/runs/{run['id']}/results").json()
            assert res["agent_version"] == version()
    finally:
        server.stop()
