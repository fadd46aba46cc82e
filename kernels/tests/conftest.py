"""Shared fixtures for the kernel executables' CLI tests (DESIGN 3.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import CPP_EXE, run_exe


@pytest.fixture(scope="session")
def cpp_exe() -> Path:
    if not CPP_EXE.is_file():
        pytest.fail(f"{CPP_EXE} is missing: run `make kernels` first")
    return CPP_EXE


@pytest.fixture(scope="session")
def cpp_specs(cpp_exe: Path) -> list[dict]:
    res = run_exe("--list")
    assert res.code == 0, res.stderr
    assert res.stderr == ""
    return json.loads(res.stdout)
