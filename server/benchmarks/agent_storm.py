"""A reconnect storm with the real agent binary (issue 25): N agents start at once against one real
server process, which then restarts under them; each time, how long until all are online, what the
server logged that it should not have, a batch POST to 100 of them, and the idle server's RSS and CPU.

    make agent kernels && .venv/bin/python server/benchmarks/agent_storm.py --agents 1000
    scripts/with-postgres.sh .venv/bin/python server/benchmarks/agent_storm.py --agents 1000

The harness is the storm test's (tests/storm/storm.py: real `ctxbench-server`, real agents, each with its
own state dir, the shared agent token over TLS, a one-executable catalog). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from procstat import proc_stats
from tests.e2e.stack import KERNELS_DIR, TEST_DATABASE_URL
from tests.storm import storm


def idle_server(seconds: float) -> Callable[[int], dict[str, Any]]:
    """The settled server's CPU over `seconds` and its RSS, statistics workers included (procstat)."""

    def measure(pid: int) -> dict[str, Any]:
        cpu0, _ = proc_stats(pid)
        time.sleep(seconds)
        cpu1, rss = proc_stats(pid)
        return {
            "idle_server_cpu_pct": round(100 * (cpu1 - cpu0) / seconds, 1),
            "server_rss_mb": round(rss / 2**20),
        }

    return measure


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=200)
    ap.add_argument("--limit", type=float, default=300.0, help="seconds to wait for all online, each time")
    ap.add_argument("--batch", type=int, default=100, help="machines in the batch POST after the restart")
    ap.add_argument("--server-cpu", type=float, default=0, help="the server's CPU quota, a share of one CPU")
    ap.add_argument("--idle", type=float, default=30.0, help="seconds of the idle server's CPU measured")
    ap.add_argument("--all-kernels", action="store_true", help="every executable of build/kernels")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctxbench-storm-") as tmp:
        got = storm.run(
            Path(tmp),
            a.agents,
            limit_s=a.limit,
            batch=a.batch,
            server_cpu=a.server_cpu,
            measure=idle_server(a.idle),
            kernels=KERNELS_DIR if a.all_kernels else None,
        )
    got["database"] = "postgresql" if TEST_DATABASE_URL else "sqlite"
    print(json.dumps(got))


if __name__ == "__main__":
    main()
