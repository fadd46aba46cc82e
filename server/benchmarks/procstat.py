"""CPU time and memory of a process from /proc (the load generator's view of the server)."""

from __future__ import annotations

import os
from pathlib import Path


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()  # [0] state, [1] ppid


def proc_stats(pid: int) -> tuple[float, int]:
    """(CPU seconds used so far, RSS bytes) of a process and its descendants (the server's statistics
    workers: stats/pool.py), from /proc."""
    parents: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parents[int(d.name)] = int(_stat(int(d.name))[1])
            except (OSError, IndexError, ValueError):  # gone meanwhile
                continue
    family, cpu, rss = [pid], 0.0, 0
    for p in family:
        family += [c for c, pp in parents.items() if pp == p]
        try:
            stat = _stat(p)
            rss += next(
                int(line.split()[1]) * 1024
                for line in Path(f"/proc/{p}/status").read_text().splitlines()
                if line.startswith("VmRSS:")
            )
        except (OSError, StopIteration):
            continue
        # its own CPU and that of its children that ended
        cpu += sum(int(x) for x in stat[11:15]) / os.sysconf("SC_CLK_TCK")
    return cpu, rss


def main_thread_cpu(pid: int) -> float:
    """CPU seconds the process's main thread (its event loop: gRPC, SQLAlchemy's greenlets) used so far."""
    stat = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")


def threads_cpu(pid: int) -> dict[str, float]:
    """CPU seconds used so far by the process's threads, summed by thread name (the event loop is the
    process's own name; aiosqlite's, gRPC's and the executors' threads have theirs)."""
    out: dict[str, float] = {}
    for t in Path(f"/proc/{pid}/task").iterdir():
        try:
            raw = (t / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        name = raw[raw.index("(") + 1 : raw.rindex(")")]
        stat = raw.rsplit(")", 1)[1].split()
        out[name] = out.get(name, 0.0) + (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
    return out
