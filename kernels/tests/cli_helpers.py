"""Runs a kernel executable and captures what the kernel CLI (DESIGN 3.1) prints."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "build" / "kernels"
CPP_EXE = Path(os.environ.get("CTXBENCH_KERNELS_CPP", KERNELS / "ctxbench-kernels-cpp"))
GO_EXE = Path(os.environ.get("CTXBENCH_KERNELS_GO", KERNELS / "ctxbench-kernels-go"))
PY_EXE = Path(os.environ.get("CTXBENCH_KERNELS_PY", KERNELS / "ctxbench-kernels-py"))
# The kernel contract (kernels/contract/README.md): the JSON Schema of --list and --run, the golden
# parameter vectors, and the renamed ids (old -> new; the server's alias map).
CONTRACT = REPO / "kernels" / "contract"
SCHEMA = json.loads((CONTRACT / "kernel-cli.schema.json").read_text())
VECTORS = json.loads((CONTRACT / "param-vectors.json").read_text())
LEGACY_IDS = json.loads((CONTRACT / "legacy-ids.json").read_text())["renames"]


def expand(x):
    """A golden-vector value; {"repeat": S, "times": N} is S repeated N times."""
    return x["repeat"] * x["times"] if isinstance(x, dict) else x


def strict_json(text: str):
    """json.loads that refuses NaN and Infinity (Python's json takes them; JSON has no such numbers)."""

    def refuse(name: str):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)


def run_exe(*args: str, exe: Path = CPP_EXE, prefix: tuple[str, ...] = (), timeout: float = 120) -> Result:
    proc = subprocess.run(
        [*prefix, str(exe), *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


# A short run: these tests check op accounting and exit codes on a loaded 2-CPU VM, not speed.
FAST = ("--min-time", "0.01", "--repetitions", "2")


def run_kernel(kernel: str, *params: str, exe_args: tuple[str, ...] = FAST, exe: Path = CPP_EXE) -> Result:
    """`--run kernel` with `--param P` for each P ("name=value") in params."""
    args = ["--run", kernel, *exe_args]
    for p in params:
        args += ["--param", p]
    return run_exe(*args, exe=exe)


def run_ok(kernel: str, *params: str, exe_args: tuple[str, ...] = FAST) -> dict:
    """run_kernel that must exit 0; its --run JSON."""
    res = run_kernel(kernel, *params, exe_args=exe_args)
    assert res.code == 0, (kernel, params, res.stderr)
    return res.json()


# Process-tree probes for the no-orphan tests: children of every thread of pid, and whether pid still runs.
def children_of(pid: int) -> set[int]:
    kids: set[int] = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids.update(int(x) for x in f.read().split())
    except FileNotFoundError:
        pass
    return kids


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def assert_sigterm_leaves_no_child(cmd: list[str], forked: str, outlived: str) -> None:
    """Starts a kernel that forks, SIGTERMs it once its children exist, and checks none outlives it."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        kids: set[int] = set()
        deadline = time.monotonic() + 10
        while not kids and time.monotonic() < deadline:
            time.sleep(0.05)
            kids = children_of(proc.pid)
        assert kids, forked
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while any(alive(k) for k in kids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(k) for k in kids), outlived
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
