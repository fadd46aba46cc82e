"""The console script as a process: ephemeral ports announced, signals stop it cleanly."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

SERVER = Path(sys.executable).parent / "ctxbench-server"
pytestmark = pytest.mark.server  # each test starts the console script


def start(tmp_path: Path, *args: str, **env: str) -> tuple[subprocess.Popen[str], dict[str, str]]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CTXBENCH_")}
    proc = subprocess.Popen(
        [str(SERVER), "--http-port", "0", "--grpc-port", "0", "--data-dir", str(tmp_path / "data"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**clean, "CTXBENCH_LOG_LEVEL": "warning", **env},
        cwd=tmp_path,
    )
    found: dict[str, str] = {}
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    for line in proc.stdout:
        if m := re.match(r"ctxbench-server: (http|grpc) listening on (\S+)", line):
            found[m.group(1)] = m.group(2)
        if m := re.match(r"ctxbench-server: (sign in) at (\S+)", line):
            found[m.group(1)] = m.group(2)
        if len(found) == 3 or time.monotonic() > deadline:
            break
    return proc, found


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_ephemeral_ports_announced_and_clean_exit(tmp_path: Path, sig: signal.Signals) -> None:
    proc, found = start(tmp_path)
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", found["http"])
        assert re.fullmatch(r"127\.0\.0\.1:\d+", found["grpc"])
        assert not found["http"].endswith(":0")
        assert re.fullmatch(re.escape(found["http"]) + r"/\?login=[\w-]{20,}", found["sign in"])
        r = httpx.get(found["http"] + "/api/v1/health", timeout=5)
        assert r.json() == {"status": "ok"}
        for name in ("agent-token", "admin-token"):
            assert (tmp_path / "data" / name).stat().st_mode & 0o777 == 0o600
        assert (tmp_path / "data" / "ctxbench.db").exists()
    finally:
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "stopped" in out
    assert "Traceback" not in err


def test_placeholder_token_refused(tmp_path: Path) -> None:
    proc = subprocess.run(
        [str(SERVER), "--data-dir", str(tmp_path)],
        env={**os.environ, "CTXBENCH_AGENT_TOKEN": "changeme", "CTXBENCH_ENV": "prod"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert "placeholder" in proc.stderr


def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = str(s.getsockname()[1])
        for flag in ("--grpc-port", "--http-port"):
            other = "--http-port" if flag == "--grpc-port" else "--grpc-port"
            proc = subprocess.run(
                [str(SERVER), "--data-dir", str(tmp_path), flag, port, other, "0", "--log-level", "warning"],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert proc.returncode == 1, proc.stderr
            assert (
                f"cannot listen for {'gRPC' if flag == '--grpc-port' else 'HTTP'} on 127.0.0.1:{port}"
                in proc.stderr
            )
            assert "Traceback" not in proc.stderr
