"""Fuzzing the REST API from its own OpenAPI document (issue "The server holds", item 6).

Schemathesis generates requests for every operation the server documents (boundary values from the
schemas, then random ones), signed in as admin, against the real server process on SQLite; no response may
be a 5xx. Bounded by count and a fixed generation mode so `make test` stays predictable: about 1000
requests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.stack import Server

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
EXAMPLES = int(os.environ.get("CTXBENCH_FUZZ_EXAMPLES", "10"))


def test_no_operation_answers_5xx(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    server = Server(data)
    try:
        proc = subprocess.run(
            [
                str(SCHEMATHESIS),
                "run",
                f"{server.base_url}/openapi.json",
                "--checks",
                "not_a_server_error",
                "--max-examples",
                str(EXAMPLES),
                "--phases",
                "coverage,fuzzing",
                "--generation-deterministic",
                "--request-timeout",
                "30",
                "--header",
                f"Authorization: Bearer {server.admin_token}",
                # The push channel never ends (a stream of change events): each request would wait out
                # the timeout. Its one input, Last-Event-ID, is tested in server/tests/test_push.py.
                "--exclude-path",
                "/api/v1/events",
                "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=tmp_path,  # schemathesis writes nothing here but its optional reports
        )
        tail = proc.stdout[-8000:] + proc.stderr[-2000:]
        assert proc.returncode == 0, tail
        assert "generated" in proc.stdout and " passed" in proc.stdout, tail
    finally:
        server.stop()
    # the server itself logged no unhandled error while being fuzzed
    log = "\n".join(server.lines)
    assert "Traceback" not in log, log[-4000:]
