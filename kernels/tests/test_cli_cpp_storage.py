"""storage.write and storage.read: MB/s results, bad input (exit 2), hosts that cannot (exit 3), and no
scratch files left behind, after a run or a SIGTERM."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import pytest
from cli_helpers import CPP_EXE
from cli_helpers import run_kernel as storage


def leftovers(path) -> list[str]:
    return [n for n in os.listdir(path) if n.startswith("ctxbench-storage-")]


def test_storage_specs(cpp_specs):
    specs = {s["id"]: s for s in cpp_specs}
    for kernel in ("storage.write", "storage.read"):
        spec = specs[kernel]
        assert spec["unit"] == "MB/s" and spec["family"] == "storage"
        params = {p["name"]: p for p in spec["params"]}
        assert params["block_size"]["min"] == 8 and params["block_size"]["max"] == 1 << 20
        assert params["block_size"]["sweep"] == [8, 128, 512, 4096]
        assert params["dir"]["type"] == "string" and params["dir"]["default"] == ""
        assert spec["seed_reference"]["seed"] == "004" and spec["seed_reference"]["unit"] == "MB/s"
    assert "state" in {p["name"] for p in specs["storage.read"]["params"]}
    assert specs["storage.write"]["seed_reference"]["value"] == 1643.37
    assert specs["storage.read"]["seed_reference"]["value"] == 3605.59


@pytest.mark.parametrize("kernel", ["storage.write", "storage.read"])
@pytest.mark.parametrize("pattern", ["seq", "rand"])
@pytest.mark.parametrize("block", ["8", "4096"])
def test_storage_runs_in_memory_and_on_disk(tmp_path, kernel, pattern, block):
    for target in (("target=memory",), ("target=disk", f"dir={tmp_path}")):
        res = storage(kernel, *target, f"pattern={pattern}", f"block_size={block}", "file_mb=1")
        assert res.code == 0, res.stderr
        result = res.json()
        assert result["unit"] == "MB/s"
        counters = result["counters"]
        assert counters["bytes_per_op"] == int(block) and counters["syscalls_per_op"] == 1
        for sample in result["samples"]:
            # MB/s and ns per call describe the same time: MB/s = bytes / ns * 1000 (repetitions differ).
            assert sample > 0
        ns = counters["ns_per_op"]
        assert min(result["samples"]) * 0.5 <= int(block) / ns * 1e3 <= max(result["samples"]) * 2
    assert leftovers(tmp_path) == []


def test_cold_read_and_direct_io_on_disk(tmp_path):
    res = storage("storage.read", f"dir={tmp_path}", "state=cold", "pattern=rand", "file_mb=1")
    assert res.code == 0, res.stderr
    for kernel in ("storage.write", "storage.read"):
        res = storage(kernel, f"dir={tmp_path}", "cache=direct", "block_size=4096", "file_mb=1")
        if res.code == 3:  # a filesystem without O_DIRECT (e.g. tmpfs as /tmp)
            assert res.stderr.count("\n") == 1 and "O_DIRECT" in res.stderr
            continue
        assert res.code == 0, res.stderr
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "params, words",
    [
        (["block_size=4"], "block_size"),
        (["block_size=1048577"], "block_size"),
        (["file_mb=0"], "file_mb"),
        (["pattern=diagonal"], "pattern"),
        (["dir=/nonexistent/ctxbench"], "does not exist"),
        (["dir=/etc/hostname"], "not a directory"),
        (["cache=direct", "block_size=100"], "multiple of 512"),
        (["target=memory", "dir=/tmp"], "dir"),
    ],
)
def test_storage_bad_params_exit_2(cpp_exe, params, words):
    res = storage("storage.write", *params)
    assert res.code == 2, (params, res.code, res.stderr)
    assert res.stdout == "" and res.stderr.count("\n") == 1 and words in res.stderr


def test_cold_read_in_memory_exits_2(cpp_exe):
    res = storage("storage.read", "target=memory", "state=cold")
    assert res.code == 2 and res.stderr.count("\n") == 1 and "cold" in res.stderr


def test_unwritable_dir_exits_2(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    res = storage("storage.write", f"dir={locked}", "file_mb=1")
    assert res.code == 2 and "not writable" in res.stderr


@pytest.mark.parametrize("params", [["target=memory", "cache=direct"], ["dir=/dev/shm", "cache=direct"]])
def test_direct_io_on_tmpfs_exits_3(cpp_exe, params):
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm")
    res = storage("storage.write", *params, "file_mb=1")
    assert res.code == 3, (res.code, res.stderr)
    assert res.stdout == "" and res.stderr.count("\n") == 1 and "O_DIRECT" in res.stderr


def test_stale_scratch_dirs_are_removed_and_nothing_else(tmp_path):
    stale = tmp_path / "ctxbench-storage-abc123"
    stale.mkdir()
    (stale / "data").write_bytes(b"x" * 100)
    old = time.time() - 3600
    os.utime(stale, (old, old))
    future = tmp_path / "ctxbench-storage-fresh1"  # "created" after the kernel started: not its to remove
    future.mkdir()
    os.utime(future, (time.time() + 3600, time.time() + 3600))
    other = tmp_path / "keep-me"
    other.mkdir()
    os.utime(other, (old, old))
    res = storage("storage.write", f"dir={tmp_path}", "file_mb=1")
    assert res.code == 0, res.stderr
    assert not stale.exists() and future.exists() and other.exists()


def test_sigterm_mid_run_leaves_no_scratch(tmp_path):
    proc = subprocess.Popen(
        [
            str(CPP_EXE),
            "--run",
            "storage.write",
            "--param",
            f"dir={tmp_path}",
            "--param",
            "file_mb=8",
            "--param",
            "pattern=rand",
            "--min-time",
            "5",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        assert proc.poll() is None, "the kernel ended before it could be interrupted"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert leftovers(tmp_path) == []
    assert os.listdir(tmp_path) == []


def test_too_little_free_space_exits_3(cpp_exe, tmp_path):
    # A 4 MiB tmpfs in a private mount namespace (vanishes with the command); needs root or user namespaces.
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare not installed")
    script = (
        f'mount -t tmpfs -o size=4m ctxbench "{tmp_path}" || exit 99; '
        f'exec "{cpp_exe}" --run storage.write --param dir="{tmp_path}" --param file_mb=3 --min-time 0.01'
    )
    proc = subprocess.run(
        [unshare, "-m", "-r", "sh", "-c", script] if os.geteuid() else [unshare, "-m", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if proc.returncode == 99 or "unshare" in proc.stderr:
        pytest.skip("cannot mount a private tmpfs here")
    assert proc.returncode == 3, (proc.returncode, proc.stderr)
    assert proc.stderr.count("\n") == 1 and "free" in proc.stderr
