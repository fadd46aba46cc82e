"""scripts/dist.sh itself (issue 26, items 7 and 8): a rebuild on one commit gives the same bytes, and
build/dist keeps the bundles of the last DIST_KEEP versions for rollback, newest last in SHA256SUMS.
Each test re-packs this machine's bundle in place (seconds: the builds are incremental)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

from tests.bundles.conftest import ARCH, DIST, bundle_path
from tests.bundles.test_bundle import version
from tests.e2e.stack import ROOT


def dist(**env: str) -> None:
    py = str(ROOT / ".venv" / "bin" / "python")
    argv = [str(ROOT / "scripts" / "dist.sh"), ARCH, version(), str(ROOT / "build")]
    out = subprocess.run(argv, env={**os.environ, "PYTHON": py, **env}, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def sums() -> list[str]:
    return [line.split("  ")[1] for line in (DIST / "SHA256SUMS").read_text().splitlines()]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_rebuild_on_one_commit_gives_the_same_bundle() -> None:
    before = sha256(bundle_path())
    time.sleep(1.1)  # a second later: any mtime taken from the clock would differ
    dist()
    assert sha256(bundle_path()) == before
    line = next(x for x in (DIST / "SHA256SUMS").read_text().splitlines() if x.endswith(bundle_path().name))
    assert line == f"{before}  {bundle_path().name}"


def test_the_last_versions_stay_for_rollback() -> None:
    current = bundle_path()
    fakes = [DIST / f"ctxbench-agent-0.0.{k}+fake000-linux-{ARCH}.tar.gz" for k in range(4)]
    now = time.time()
    try:
        for k, fake in enumerate(fakes):  # built 40, 30, 20, 10 s ago: after any real earlier version
            fake.write_bytes(b"old bundle %d" % k)
            os.utime(fake, (now - 10 * (4 - k), now - 10 * (4 - k)))
        dist(DIST_KEEP="3")
        # This version and the two built last before it; the older ones (real ones too) are gone.
        assert [f.exists() for f in fakes] == [False, False, True, True]
        mine = [n for n in sums() if n.endswith(f"-linux-{ARCH}.tar.gz")]
        assert mine == [fakes[2].name, fakes[3].name, current.name]  # newest last: the default
    finally:
        for fake in fakes:
            fake.unlink(missing_ok=True)
        dist()  # SHA256SUMS without the fakes again
    assert not any("fake000" in n for n in sums())
