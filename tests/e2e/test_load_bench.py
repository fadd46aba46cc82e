"""server/benchmarks/load.py at quick sizes against the real server: every scenario runs to its end and
counts what it must. Speed is the benchmark's business (`make bench` runs the target sizes and writes
docs/performance.md), never this test's."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.e2e.stack import ROOT, SERVER_BIN


def test_load_benchmark_at_quick_sizes() -> None:
    assert SERVER_BIN.exists(), f"{SERVER_BIN} is missing: run 'make build'"
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "server" / "benchmarks" / "load.py"),
            *("connect", "idle", "ingest", "batch"),
            *("--connect", "5", "--idle", "5", "--window", "1", "--settle", "1"),
            *("--ingest-agents", "3", "--ingest-items", "40"),
            *("--batch-machines", "4", "--batch-items", "6"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    got: dict[str, dict[str, float]] = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            got.update(json.loads(line))
    assert set(got) == {"connect", "idle", "ingest", "batch"}, out.stdout
    assert got["connect"]["errors"] == 0
    assert got["idle"]["errors"] == 0 and got["idle"]["server_rss_mb"] > 0
    assert got["ingest"]["errors"] == 0 and got["ingest"]["results"] == 3 * 40
    assert got["ingest"]["ack_p50_ms"] <= got["ingest"]["ack_p99_ms"]
    assert got["batch"]["errors"] == 0 and got["batch"]["items"] == 6


def test_grpc_floor_at_quick_sizes() -> None:
    """server/benchmarks/grpc_floor.py: every report acknowledged, over TLS as the server serves."""
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "server" / "benchmarks" / "grpc_floor.py"),
            "--agents",
            "3",
            "--items",
            "30",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    got = json.loads(out.stdout.splitlines()[-1])["grpc_floor"]
    assert got["results"] == 3 * 30 and got["ack_p50_ms"] <= got["ack_p99_ms"]
    assert got["server_cpu_ms_per_result"] > 0 and got["generator_cpu_ms_per_result"] > 0
