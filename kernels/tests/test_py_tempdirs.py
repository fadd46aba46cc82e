"""A SIGKILLed Python kernel leaves its temp dir behind; the next kernel to start removes it, and
never a live kernel's dir, another user's, or anything it did not name itself."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from test_cli_py import PY_EXE

PREFIX = "ctxbench-kernels-py-"


def start_long_kernel(env: dict[str, str]) -> subprocess.Popen[bytes]:
    # its own process group, as the agent starts kernels: killing the group takes pyperf's workers too
    return subprocess.Popen(
        [str(PY_EXE), "--run", "call.py_loop", "--repetitions", "10", "--min-time", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def dir_of(tmp: Path, pid: int, within: float = 60.0) -> Path:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = sorted(tmp.glob(f"{PREFIX}{pid}-*"))
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"kernel {pid} made no temp dir in {tmp}")


def dead_pid() -> int:
    pid = 4_000_000
    while Path(f"/proc/{pid}").exists():
        pid += 1
    return pid


def test_stale_temp_dirs_of_killed_kernels_are_removed_at_start(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    killed = start_long_kernel(env)
    killed_dir = dir_of(tmp_path, killed.pid)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    assert killed_dir.is_dir()  # SIGKILL runs no cleanup

    live = start_long_kernel(env)
    try:
        live_dir = dir_of(tmp_path, live.pid)
        gone = tmp_path / f"{PREFIX}{dead_pid()}-1-abcd1234"  # an earlier crash, long ago
        gone.mkdir()
        not_a_dir = tmp_path / f"{PREFIX}{dead_pid()}-1-file"
        not_a_dir.write_text("")
        unrelated = tmp_path / f"{PREFIX}old-layout"
        unrelated.mkdir()
        others = tmp_path / f"{PREFIX}{dead_pid()}-2-nobody"
        others.mkdir()
        if os.getuid() == 0:  # as root, a dir of another user can be made: it must be left alone
            os.chown(others, 65534, 65534)

        res = subprocess.run(
            [str(PY_EXE), "--run", "call.py_loop", "--repetitions", "2", "--min-time", "0.01"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert res.returncode == 0, res.stderr

        assert not killed_dir.exists() and not gone.exists()
        assert live_dir.is_dir() and live.poll() is None
        assert not_a_dir.is_file() and unrelated.is_dir()
        assert others.is_dir() == (os.getuid() == 0)
        # and the short kernel cleaned up its own
        left = {p.name for p in tmp_path.glob(f"{PREFIX}*")}
        assert left == {live_dir.name, not_a_dir.name, unrelated.name} | (
            {others.name} if os.getuid() == 0 else set()
        )
    finally:
        os.killpg(live.pid, signal.SIGKILL)
        live.wait()
