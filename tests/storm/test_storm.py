"""200 real agents start at once against one real server, which then restarts under them (issue 25):
all online within 60 s of each start, nothing in the server's log that should not be there, and a batch
POST to 100 of them answered (within a second is make bench's target; here it is bounded). The server
runs under a CPU quota of half a CPU during the storms, as a server beside other work does: before
admission (agents/admission.py), 200 Hellos at once then held every pooled connection while they queued
for SQLite's write, and 22 of 200 agents were online after two minutes, with 650 tracebacks. On SQLite
here, on PostgreSQL under scripts/with-postgres.sh (`make test-storm` runs both)."""

from __future__ import annotations

from pathlib import Path

from tests.storm import storm

AGENTS = 200


def test_a_fleet_reconnecting_after_a_restart_is_all_online_within_a_minute(tmp_path: Path) -> None:
    got = storm.run(tmp_path, AGENTS, limit_s=60.0, batch=100, server_cpu=0.5)
    print(got)  # the figures, in the log of a failing run too
    for step in ("first_start", "restart"):
        assert got[step]["online"] == AGENTS, (step, got)
        assert got[step]["bad"] == 0, (step, got)
    batch = got["restart"]["batch"]
    assert batch["status"] == 201 and batch["machines"] == 100, got
    # Before admission it took 85 s and failed. The target, 1 s, is make bench's (docs/performance.md
    # "storm": 0.2-0.6 s); a test on a busy CI machine only bounds it.
    assert batch["post_s"] <= 5.0, got
