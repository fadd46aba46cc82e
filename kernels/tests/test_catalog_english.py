"""Every text a catalog shows the explorer (titles, descriptions, parameter help, seed notes) is English:
a seed's original wording is quoted in translation (issue 13, problem 10: one note was Chinese)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_helpers import CPP_EXE, REPO, run_exe

KERNELS = REPO / "build" / "kernels"
EXES = [CPP_EXE, KERNELS / "ctxbench-kernels-go", KERNELS / "ctxbench-kernels-py"]
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


def texts(spec: dict) -> list[str]:
    seed = spec.get("seed_reference") or {}
    helps = [p.get("help") or "" for p in spec["params"]]
    return [spec["title"], spec["description"], *helps, seed.get("note") or "", seed.get("machine") or ""]


@pytest.mark.parametrize("exe", EXES, ids=lambda p: Path(p).name)
def test_catalog_texts_are_english(exe: Path) -> None:
    if not exe.is_file():
        pytest.fail(f"{exe} is missing: run `make kernels` first")
    res = run_exe("--list", exe=exe)
    assert res.code == 0, res.stderr
    bad = {spec["id"]: t for spec in json.loads(res.stdout) for t in texts(spec) if CJK.search(t)}
    assert bad == {}
