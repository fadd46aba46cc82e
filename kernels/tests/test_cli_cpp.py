"""What only the C++ kernel executable does: its seeds, switch and op counts, exit 3 on hosts that cannot
run a kernel, no orphans. The kernel CLI itself (schema, exit codes, defaults) is test_conformance.py's.

No assertion here depends on how fast the host is, beyond very wide sanity bounds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from cli_helpers import CPP_EXE, assert_sigterm_leaves_no_child, run_exe, run_ok

PHASE1_IDS = {"call.function", "syscall.getppid", "ctxswitch.pipe"}


def test_phase1_kernels_are_listed(cpp_specs):
    assert PHASE1_IDS <= {s["id"] for s in cpp_specs}
    assert {s["unit"] for s in cpp_specs} <= {"ns/op", "MB/s"}


def test_phase1_seed_references(cpp_specs):
    seeds = {s["id"]: s.get("seed_reference") for s in cpp_specs}
    assert seeds["call.function"]["value"] == 2.34 and seeds["call.function"]["seed"] == "000"
    assert seeds["syscall.getppid"]["value"] == 49.47
    assert seeds["ctxswitch.pipe"]["value"] == 4283 and seeds["ctxswitch.pipe"]["seed"] == "003"


# ---------------------------------------------------------------- --run


def test_harness_is_google_benchmark():
    res = run_exe("--run", "syscall.getppid", "--min-time", "0.01", "--repetitions", "2")
    assert res.code == 0, res.stderr
    assert res.json()["harness"] == {"name": "google-benchmark", "version": "1.7.1", "min_time_s": 0.01}


def test_call_and_syscall_make_no_context_switches():
    for kernel in ("call.function", "syscall.getppid"):
        res = run_exe("--run", kernel, "--min-time", "0.01")
        assert res.code == 0, res.stderr
        counters = res.json()["counters"]
        # A switch per op is impossible at these speeds; a few preemptions per million ops are fine.
        assert counters["voluntary_ctxsw_per_op"] < 0.01
        assert counters["involuntary_ctxsw_per_op"] < 0.01
    res = run_exe("--run", "syscall.getppid", "--min-time", "0.01")
    assert res.json()["counters"]["syscalls_per_op"] == 1


def test_pipe_same_core_counts_one_switch_per_op():
    res = run_exe("--run", "ctxswitch.pipe", "--param", "placement=same_core", "--min-time", "0.05")
    assert res.code == 0, res.stderr
    result = res.json()
    counters = result["counters"]
    # Voluntary (the writer blocks in read) plus involuntary (the woken reader preempts the writer):
    # one per switch on one CPU. Loose bounds: other load on the host only adds preemptions.
    assert 0.5 <= counters["ctxsw_per_op"] <= 3, counters
    assert counters["voluntary_ctxsw_per_op"] > 0.2, counters
    assert counters["cpu_main"] == counters["cpu_partner"] >= 0
    # A switch costs at least tens of nanoseconds and far less than a millisecond.
    assert all(10 < s < 1e6 for s in result["samples"])


def test_pipe_cross_core_uses_two_cpus():
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs")
    res = run_exe("--run", "ctxswitch.pipe", "--param", "placement=cross_core", "--min-time", "0.02")
    assert res.code == 0, res.stderr
    counters = res.json()["counters"]
    assert counters["cpu_main"] != counters["cpu_partner"]
    assert 0.5 <= counters["ctxsw_per_op"] <= 3, counters


# ---------------------------------------------------------------- cannot run here: exit 3, one line


def test_cross_core_on_one_cpu_exits_3(cpp_exe):
    taskset = shutil.which("taskset")
    if taskset is None:
        pytest.fail("taskset not installed (util-linux: scripts/bootstrap.sh installs it)")
    cpu = str(min(os.sched_getaffinity(0)))
    res = run_exe("--run", "ctxswitch.pipe", "--param", "placement=cross_core", prefix=(taskset, "-c", cpu))
    assert res.code == 3, (res.code, res.stderr)
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1 and "cross_core" in res.stderr


def test_same_core_under_one_cpu_still_runs(cpp_exe):
    taskset = shutil.which("taskset")
    if taskset is None:
        pytest.fail("taskset not installed (util-linux: scripts/bootstrap.sh installs it)")
    cpu = str(min(os.sched_getaffinity(0)))
    res = run_exe(
        "--run", "ctxswitch.pipe", "--min-time", "0.01", "--repetitions", "2", prefix=(taskset, "-c", cpu)
    )
    assert res.code == 0, res.stderr
    assert res.json()["counters"]["cpu_main"] == int(cpu)


# ---------------------------------------------------------------- no orphans


@pytest.mark.parametrize("kernel", ["ctxswitch.pipe", "ctxswitch.futex"])
def test_sigterm_leaves_no_child_behind(cpp_exe, kernel):
    assert_sigterm_leaves_no_child(
        [str(CPP_EXE), "--run", kernel, "--min-time", "5", "--repetitions", "5"],
        "the kernel never forked its partner",
        "partner process outlived its parent",
    )


# ---------------------------------------------------------------- process and thread kernels


def test_fork_wait_counts_ops_per_child(cpp_exe):
    res = run_exe(
        "--run", "process.fork_wait", "--param", "batch=10", "--min-time", "0.01", "--repetitions", "2"
    )
    assert res.code == 0, res.stderr
    result = res.json()
    assert result["params"] == {"batch": 10, "touched_mb": 0}
    assert all(i % 10 == 0 for i in result["iterations"])
    # Each child must run to exit: about one switch per op, in the parent and children together.
    counters = result["counters"]
    assert counters["voluntary_ctxsw_per_op"] + counters["involuntary_ctxsw_per_op"] >= 0.5, counters


def test_fork_exec_without_its_helper_exits_3(cpp_exe, tmp_path):
    lonely = tmp_path / cpp_exe.name
    shutil.copy2(cpp_exe, lonely)
    res = run_exe("--run", "process.fork_exec", "--min-time", "0.01", exe=lonely)
    assert res.code == 3, (res.code, res.stderr)
    assert res.stderr.count("\n") == 1 and "ctxbench-exec-true" in res.stderr


def test_exec_helper_is_out_of_the_catalog_scan(cpp_exe):
    # The agent runs `--list` on every regular executable in build/kernels/; the helper hides in libexec/.
    helper = cpp_exe.parent / "libexec" / "ctxbench-exec-true"
    assert helper.is_file() and os.access(helper, os.X_OK)
    assert subprocess.run([str(helper)], check=False).returncode == 0


# ---------------------------------------------------------------- N-thread kernels


def run_counters(kernel: str, *params: str) -> dict:
    result = run_ok(kernel, *params, exe_args=("--min-time", "0.02", "--repetitions", "3"))
    threads = result["params"]["threads"]
    assert all(i % threads == 0 for i in result["iterations"]), "ops are counted on every thread"
    return result["counters"]


def test_sched_yield_switches_only_with_company(cpp_exe):
    # With a partner pinned beside it, every yield hands the CPU over: about one switch per op. Alone, a
    # yield switches only when another process happens to be runnable on that CPU, which on a busy CI
    # machine can be half the time (measured 0.57), so the lone figure is only checked for sanity.
    counters = run_counters("sched.yield", "threads=2", "placement=same_core")
    assert 0.5 <= counters["ctxsw_per_op"] <= 3, counters
    alone = run_counters("sched.yield", "threads=1")["ctxsw_per_op"]
    assert 0 <= alone <= 3, alone


def test_usleep0_blocks_and_reports_timer_slack(cpp_exe):
    counters = run_counters("sleep.usleep0", "threads=4")
    assert counters["timer_slack_ns"] >= 1
    assert 0 < counters["overlap"] <= 4.5, counters
    assert counters["voluntary_ctxsw_per_op"] >= 0.5, counters


def test_pthread_mutex_under_contention(cpp_exe):
    counters = run_counters("lock.pthread_mutex", "threads=8", "placement=unpinned")
    assert counters["cpu"] == -1


@pytest.mark.parametrize("value", ["0", "1025", "-1", "2.5", "", "0x10", " 4"])
def test_threads_out_of_range_exit_2(cpp_exe, value):
    res = run_exe("--run", "sched.yield", "--param", f"threads={value}")
    assert res.code == 2, (value, res.stderr)
    assert res.stderr.count("\n") == 1 and "threads" in res.stderr


# ---------------------------------------------------------------- ctxswitch modes and policies


@pytest.mark.parametrize("kernel", ["ctxswitch.pipe", "ctxswitch.futex"])
@pytest.mark.parametrize("mode", ["process", "thread"])
def test_switch_kernels_count_one_switch_per_op(cpp_exe, kernel, mode):
    res = run_exe(
        "--run", kernel, "--param", f"mode={mode}", "--param", "placement=same_core", "--min-time", "0.03"
    )
    assert res.code == 0, res.stderr
    result = res.json()
    assert result["params"]["mode"] == mode
    counters = result["counters"]
    assert 0.5 <= counters["ctxsw_per_op"] <= 3, counters
    assert 0.5 <= counters["syscalls_per_op"] <= 2.5, counters


def test_fifo_without_privilege_exits_3(cpp_exe):
    setpriv, prlimit = shutil.which("setpriv"), shutil.which("prlimit")
    if not setpriv or not prlimit:
        pytest.fail("setpriv/prlimit not installed (util-linux: scripts/bootstrap.sh installs it)")
    drop = (setpriv, "--inh-caps=-sys_nice", "--bounding-set=-sys_nice", prlimit, "--rtprio=0")
    res = run_exe("--run", "ctxswitch.futex", "--param", "policy=fifo", prefix=drop)
    if res.code == 0:
        pytest.skip("SCHED_FIFO still allowed here")
    assert res.code == 3, (res.code, res.stderr)
    assert res.stderr.count("\n") == 1 and "fifo" in res.stderr


def test_fifo_same_core_switches_are_voluntary(cpp_exe):
    res = run_exe("--run", "ctxswitch.pipe", "--param", "policy=fifo", "--min-time", "0.03")
    if res.code == 3:
        pytest.skip(res.stderr.strip())
    assert res.code == 0, res.stderr
    # Equal SCHED_FIFO priorities never preempt each other at wakeup: the writer always blocks first.
    assert res.json()["counters"]["voluntary_ctxsw_per_op"] >= 0.8


def test_google_benchmark_environment_cannot_change_the_run(cpp_exe, tmp_path):
    # Google Benchmark reads its flag defaults from BENCHMARK_* variables; the kernel pins them.
    env = dict(
        os.environ,
        BENCHMARK_FILTER="nothing",
        BENCHMARK_OUT=str(tmp_path / "gb.json"),
        BENCHMARK_REPETITIONS="2",
        BENCHMARK_REPORT_AGGREGATES_ONLY="true",
        BENCHMARK_ENABLE_RANDOM_INTERLEAVING="true",
    )
    proc = subprocess.run(
        [str(cpp_exe), "--run", "syscall.getppid", "--min-time", "0.01"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert len(json.loads(proc.stdout)["samples"]) == 5
    assert not (tmp_path / "gb.json").exists()
