"""Seed 004's kernels besides storage: everyday syscalls, IPC between two processes, locks across N
processes (DESIGN 3.1 CLI). Tiny params only: these run on a loaded 2-CPU VM."""

from __future__ import annotations

import pytest
from cli_helpers import CPP_EXE, assert_sigterm_leaves_no_child, run_exe
from cli_helpers import run_ok as run

LOCKS = ["lock.spin_shm", "lock.posix_sem", "lock.flock", "lock.fcntl", "lock.pthread_mutex_pshared"]
IPCS = ["ipc.pipe", "ipc.unix_socket", "ipc.udp_loopback", "ipc.shm_queue"]


def test_seed_004_references(cpp_specs):
    seeds = {s["id"]: s.get("seed_reference") for s in cpp_specs}
    assert seeds["syscall.open_close"]["value"] == pytest.approx(1e9 / 1093160.21, abs=0.05)
    assert seeds["syscall.gettimeofday"]["value"] == pytest.approx(1e9 / 1453568.66, abs=0.05)
    assert seeds["syscall.socket_close"]["value"] == pytest.approx(1e9 / 578356.96, abs=0.05)
    assert seeds["ipc.udp_loopback"]["value"] == pytest.approx(1e9 / 451723.21, abs=0.05)
    assert seeds["ipc.udp_loopback"]["params"] == {"size": "512", "socket": "reused"}
    assert seeds["lock.spin_shm"]["value"] == pytest.approx(1e9 / 52631578.95, abs=0.05)
    assert seeds["lock.flock"]["params"] == {"processes": "8"}
    for kernel in ("syscall.open_close", "lock.fcntl", "lock.posix_sem"):
        assert seeds[kernel]["seed"] == "004"


@pytest.mark.parametrize("kernel", ["syscall.open_close", "syscall.socket_close"])
def test_two_syscall_kernels(kernel):
    assert run(kernel)["counters"]["syscalls_per_op"] == 2


def test_socket_close_tcp_and_gettimeofday():
    assert run("syscall.socket_close", "type=tcp")["params"] == {"type": "tcp"}
    assert "vdso_present" in run("syscall.gettimeofday")["counters"]


@pytest.mark.parametrize("kernel", IPCS)
@pytest.mark.parametrize("size", ["1", "512", "65507"])
def test_ipc_streams_messages(kernel, size):
    result = run(kernel, f"size={size}")
    counters = result["counters"]
    assert counters["mb_per_s"] > 0
    # mb_per_s comes from the last batch, the samples from every repetition: same order of magnitude.
    ns = min(result["samples"])
    assert counters["mb_per_s"] <= int(size) / ns * 1e3 * 20


@pytest.mark.parametrize("params", [("socket=new",), ("socket=new", "size=9000")])
def test_udp_new_socket_per_message(params):
    assert run("ipc.udp_loopback", *params)["counters"]["window"] >= 1


@pytest.mark.parametrize("size", ["8", "4096"])
def test_shm_queue_eventfd(size):
    run("ipc.shm_queue", "notify=eventfd", f"size={size}")


@pytest.mark.parametrize("value", ["0", "65508"])
def test_udp_size_out_of_range_exit_2(cpp_exe, value):
    res = run_exe("--run", "ipc.udp_loopback", "--param", f"size={value}")
    assert res.code == 2 and res.stderr.count("\n") == 1 and "size" in res.stderr


@pytest.mark.parametrize("kernel", LOCKS)
@pytest.mark.parametrize("processes", ["1", "3"])
def test_locks_across_processes(kernel, processes):
    result = run(kernel, f"processes={processes}")
    n = int(processes)
    assert all(i % (n * 16) == 0 for i in result["iterations"]), "every process does the same ops"
    counters = result["counters"]
    assert counters["acquisitions_per_s"] > 0
    assert "voluntary_ctxsw_per_op" in counters


def test_many_processes_finish_quickly():
    run("lock.flock", "processes=32")
    run("lock.spin_shm", "processes=32")


@pytest.mark.parametrize("value", ["0", "129", "many"])
def test_processes_out_of_range_exit_2(cpp_exe, value):
    res = run_exe("--run", "lock.fcntl", "--param", f"processes={value}")
    assert res.code == 2 and res.stderr.count("\n") == 1 and "processes" in res.stderr


@pytest.mark.parametrize(
    "args",
    [("ipc.pipe",), ("ipc.shm_queue",), ("lock.flock", "processes=4"), ("lock.spin_shm", "processes=4")],
)
def test_sigterm_leaves_no_child_behind(cpp_exe, args):
    cmd = [str(CPP_EXE), "--run", args[0], "--min-time", "5"]
    for p in args[1:]:
        cmd += ["--param", p]
    assert_sigterm_leaves_no_child(cmd, "the kernel never forked", "a child outlived its parent")
