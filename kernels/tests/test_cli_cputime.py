"""CPU time per op: single-threaded CPU-bound kernels report cpu_ns_per_op and cpu_wall_ratio.

Wall time stays the measure that is compared; CPU time tells a busy host from a slow one. The check that
matters is the one the OS can count: a CPU hog on the kernel's own CPU halves its share, so the wall time
per op grows while the CPU time per op does not, and cpu_wall_ratio shows it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import REPO, run_exe

PY_EXE = Path(os.environ.get("CTXBENCH_KERNELS_PY", REPO / "build" / "kernels" / "ctxbench-kernels-py"))
CPU_BOUND_CPP = [
    "call.function",
    "call.indirect",
    "syscall.getppid",
    "syscall.clock_gettime",
    "syscall.open_close",
    "jmp.setjmp_longjmp",
    "ucontext.swapcontext",
    "coroutine.switch",
    "coroutine.create",
]
CPU_BOUND_PY = ["call.py_loop", "coroutine.py_generator", "coroutine.py_yield_from", "coroutine.py_asyncio"]
# Threads, processes, sleeps or I/O: their measuring thread's CPU time is not the op's cost.
NOT_CPU_BOUND_CPP = ["ctxswitch.pipe", "sleep.usleep0", "thread.create_join", "storage.write"]


def check_cpu_counters(result: dict) -> None:
    c = result["counters"]
    assert c["cpu_ns_per_op"] > 0, c
    # CPU time can't exceed wall time (a little slack: the two clocks tick differently).
    assert 0 < c["cpu_wall_ratio"] <= 1.05, c
    assert c["cpu_ns_per_op"] <= max(result["samples"]) * 1.05, (c, result["samples"])


@pytest.mark.parametrize("kernel", CPU_BOUND_CPP)
def test_cpp_cpu_bound_kernels_report_cpu_time(kernel):
    res = run_exe("--run", kernel, "--min-time", "0.02", "--repetitions", "3")
    assert res.code == 0, res.stderr
    check_cpu_counters(res.json())


@pytest.mark.parametrize("kernel", CPU_BOUND_PY)
def test_py_cpu_bound_kernels_report_cpu_time(kernel):
    res = run_exe("--run", kernel, "--min-time", "0.02", "--repetitions", "2", exe=PY_EXE)
    assert res.code == 0, res.stderr
    check_cpu_counters(res.json())


@pytest.mark.parametrize("kernel", NOT_CPU_BOUND_CPP)
def test_other_kernels_do_not_claim_cpu_time(kernel, tmp_path):
    args = ["--param", f"dir={tmp_path}"] if kernel.startswith("storage.") else []
    res = run_exe("--run", kernel, "--min-time", "0.01", "--repetitions", "2", *args)
    assert res.code == 0, res.stderr
    assert not {"cpu_ns_per_op", "cpu_wall_ratio"} & res.json()["counters"].keys()


def test_a_hog_on_the_same_cpu_shows_in_the_ratio_not_in_cpu_time():
    cpu = str(min(os.sched_getaffinity(0)))
    pin = ("taskset", "-c", cpu)
    quiet = run_exe("--run", "call.function", "--min-time", "0.1", "--repetitions", "3", prefix=pin).json()
    hog = subprocess.Popen([*pin, sys.executable, "-c", "while True: pass"])
    try:
        busy = run_exe("--run", "call.function", "--min-time", "0.1", "--repetitions", "3", prefix=pin).json()
    finally:
        hog.kill()
        hog.wait()
    qc, bc = quiet["counters"], busy["counters"]
    # The scheduler splits the CPU between the two: the kernel ran about half the wall time.
    assert bc["cpu_wall_ratio"] < 0.8, (qc, bc)
    assert bc["cpu_wall_ratio"] < qc["cpu_wall_ratio"] - 0.15, (qc, bc)
    # Per op, the CPU time is the same work; the wall time is not.
    assert bc["cpu_ns_per_op"] < 1.5 * qc["cpu_ns_per_op"], (qc, bc)
    assert min(busy["samples"]) > 1.3 * bc["cpu_ns_per_op"], (busy["samples"], bc)


def test_a_task_on_sched_yields_cpu_shows_as_disturbed_samples():
    """sched.yield with one thread never blocks: pinned, it runs all of its CPU (counter cpu_share). With
    another task always runnable there, every yield hands that task the CPU: every sample has switches,
    so the switch count cannot tell the host's part, and the share does: the samples are disturbed."""
    cpu = str(min(os.sched_getaffinity(0)))
    pin = ("taskset", "-c", cpu)
    args = ("--run", "sched.yield", "--min-time", "0.02", "--repetitions", "2", "--sample-time", "0.0005")
    quiet = run_exe(*args, prefix=pin).json()
    hog = subprocess.Popen([*pin, sys.executable, "-c", "while True: pass"])
    try:
        busy = run_exe(*args, prefix=pin).json()
    finally:
        hog.kill()
        hog.wait()
    q, b = quiet["sampling"], busy["sampling"]
    assert quiet["counters"]["cpu_share"] > 0.5, quiet["counters"]
    assert busy["counters"]["cpu_share"] < 0.5, busy["counters"]
    assert sum(b["disturbed"]) >= 0.9 * b["samples_per_repetition"] * len(b["disturbed"]), b
    # (a quiet run's own count depends on what else this host runs: only that it is not all of them)
    assert sum(q["disturbed"]) < q["samples_per_repetition"] * len(q["disturbed"]), q


def test_only_one_pinned_thread_reports_its_cpu_share():
    for params in (("--param", "threads=2"), ("--param", "placement=unpinned")):
        res = run_exe("--run", "sched.yield", *params, "--min-time", "0.01", "--repetitions", "2")
        assert res.code == 0, res.stderr
        assert "cpu_share" not in res.json()["counters"], params
