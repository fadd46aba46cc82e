"""The agent bundle (make dist), unpacked once per test session into a temp dir."""

from __future__ import annotations

import platform
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.e2e.stack import ROOT

DIST = ROOT / "build" / "dist"
ARCH = {"x86_64": "amd64", "aarch64": "arm64"}[platform.machine()]


def bundle_path(arch: str = ARCH) -> Path:
    """This commit's bundle (build/dist keeps earlier versions' too, for rollback)."""
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    version = f"{(ROOT / 'VERSION').read_text().strip()}+{sha.stdout.strip()}"
    path = DIST / f"ctxbench-agent-{version}-linux-{arch}.tar.gz"
    if not path.is_file():
        found = [p.name for p in sorted(DIST.glob(f"ctxbench-agent-*-linux-{arch}.tar.gz"))]
        pytest.fail(f"no {path.name} in {DIST}, only {found} (run 'make dist')")
    return path


def unpack(tarball: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("bundle")
    with tarfile.open(tarball) as tf:
        tf.extractall(dest, filter="tar")
    (top,) = dest.iterdir()
    assert top.name == tarball.name.removesuffix(".tar.gz")
    return top


@pytest.fixture(scope="session")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This machine's bundle unpacked: its top directory (ctxbench-agent-<version>-linux-<arch>/)."""
    return unpack(bundle_path(), tmp_path_factory)


@pytest.fixture(scope="session")
def arm64_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The arm64 bundle unpacked (run here under qemu-user-static)."""
    return unpack(bundle_path("arm64"), tmp_path_factory)
