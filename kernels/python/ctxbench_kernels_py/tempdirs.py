"""The kernel's temp dir (pyperf's stdout capture and the workers' tallies), and cleaning up after the
ones a SIGKILLed kernel left behind.

A dir is named ctxbench-kernels-py-<pid>-<start>-<random>: the pid of the kernel process that made it
and that process's start time (clock ticks since boot, /proc/<pid>/stat field 22), so a pid reused by
another process does not keep a stale dir alive. At start, a kernel removes such dirs of the current
user whose process is gone; it never touches a live one, another user's, or a name it did not make.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

PREFIX = "ctxbench-kernels-py-"
_NAME = re.compile(re.escape(PREFIX) + r"(\d+)-(\d+)-")


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot; None when it is gone (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")".
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def make() -> Path:
    """A fresh temp dir named after this process."""
    prefix = f"{PREFIX}{os.getpid()}-{_start_time(os.getpid()) or 0}-"
    return Path(tempfile.mkdtemp(prefix=prefix))


def _alive(pid: int, start: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        pass
    now = _start_time(pid)
    return now is None or start == 0 or now == start


def clean_stale(root: Path | None = None) -> list[Path]:
    """Removes the dirs of gone kernel processes of this user from root (the temp dir). Returns them."""
    root = Path(root or tempfile.gettempdir())
    removed = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    uid = os.getuid()
    for entry in entries:
        m = _NAME.match(entry.name)
        if m is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
            continue
        pid, start = int(m[1]), int(m[2])
        if pid == os.getpid() or _alive(pid, start):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed
