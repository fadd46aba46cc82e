"""The C++ kernels' JSON writer: escaping and number formatting (kernels/cpp/test/json_test.cc)."""

from __future__ import annotations

import subprocess

import pytest
from cli_helpers import REPO

JSON_TEST = REPO / "build" / "cmake" / "kernels-cpp" / "json_test"


def test_json_writer_unit_checks():
    if not JSON_TEST.is_file():
        pytest.fail(f"{JSON_TEST} is missing: run `make kernels` first")
    proc = subprocess.run([str(JSON_TEST)], capture_output=True, text=True, check=False, timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "ok"
