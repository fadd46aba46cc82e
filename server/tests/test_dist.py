"""GET /install-agent.sh and GET /dist/<file>: open, served from the dist dir, nothing outside it."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import httpx
import pytest

from ctxbench_server.config import Settings

SCRIPT = '#!/bin/sh\nDEFAULT_URL="@CTXBENCH_PUBLIC_URL@"\necho "@CTXBENCH_PUBLIC_URL@ stays"\n'
BUNDLE = "ctxbench-agent-0.1.0+abc1234-linux-amd64.tar.gz"


@pytest.fixture
def dist(settings: Settings) -> Path:
    d = settings.dist_dir
    d.mkdir(parents=True)
    (d / "install-agent.sh").write_text(SCRIPT)
    (d / BUNDLE).write_bytes(b"\x1f\x8b bundle bytes")
    (d / "SHA256SUMS").write_text(f"{'0' * 64}  {BUNDLE}\n")
    (d / ".hidden").write_text("no")
    (settings.dist_dir.parent / "secret.txt").write_text("outside")
    (d / "link").symlink_to(settings.dist_dir.parent / "secret.txt")
    return d


async def test_installer_is_open_and_names_the_server_it_came_from(
    dist: Path, anon: httpx.AsyncClient
) -> None:
    r = await anon.get("/install-agent.sh")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/x-shellscript")
    first, second = r.text.splitlines()[1:3]
    assert first == f'DEFAULT_URL="{anon.base_url}"'.replace('/"', '"')
    assert second == 'echo "@CTXBENCH_PUBLIC_URL@ stays"'  # only the one placeholder


@pytest.mark.parametrize("settings_overrides", [{"public_url": "https://bench.example/ctx"}])
async def test_installer_uses_the_public_url(dist: Path, anon: httpx.AsyncClient) -> None:
    r = await anon.get("/install-agent.sh", headers={"host": "bench.example"})
    assert 'DEFAULT_URL="https://bench.example/ctx"' in r.text


async def test_bundles_and_sums_are_open(dist: Path, anon: httpx.AsyncClient) -> None:
    r = await anon.get(f"/dist/{BUNDLE.replace('+', '%2B')}")
    assert r.status_code == 200 and r.content == (dist / BUNDLE).read_bytes()
    r = await anon.get(f"/dist/{BUNDLE}")  # a literal + in a path is a +
    assert r.status_code == 200
    r = await anon.get("/dist/SHA256SUMS")
    assert r.status_code == 200 and BUNDLE in r.text


@pytest.mark.parametrize(
    "path",
    [
        "/dist/",
        "/dist/nope.tar.gz",
        "/dist/.hidden",
        "/dist/link",
        "/dist/..%2Fsecret.txt",
        "/dist/%2E%2E%2Fsecret.txt",
        "/dist/../secret.txt",
        "/dist/sub/file",
    ],
)
async def test_nothing_outside_the_dist_dir(dist: Path, anon: httpx.AsyncClient, path: str) -> None:
    r = await anon.get(path)
    assert "outside" not in r.text
    assert r.status_code == 404 or (r.status_code == 200 and "text/html" in r.headers["content-type"])


async def test_not_built_says_how(anon: httpx.AsyncClient, settings: Settings) -> None:
    r = await anon.get("/install-agent.sh")
    assert r.status_code == 404 and "make dist" in r.json()["detail"]
    # Anyone may ask: the answer names no path of the server's (its log does).
    for path in ("/install-agent.sh", "/dist/SHA256SUMS", "/dist/x.tar.gz", "/dist"):
        r = await anon.get(path)
        assert str(settings.dist_dir) not in r.text and str(settings.dist_dir.parent) not in r.text, path
    assert (await anon.get("/dist/SHA256SUMS")).status_code == 404


async def test_installer_carries_the_sums_and_the_join_command_pins_it(
    dist: Path, anon: httpx.AsyncClient, http: httpx.AsyncClient
) -> None:
    """Issue 26, item 5: what the install command runs is checked before it runs, and carries the
    bundles' sha256s, so neither the installer nor SHA256SUMS is trusted from a plain download."""
    (dist / "install-agent.sh").write_text(SCRIPT + "PINNED_SUMS='@CTXBENCH_SHA256SUMS@'\n")
    served = (await anon.get("/install-agent.sh")).text
    assert f"PINNED_SUMS='{'0' * 64}  {BUNDLE}'\n" in served
    cmd = (await http.post("/api/v1/join-tokens", json={})).json()["install_command"]
    assert f'echo "{hashlib.sha256(served.encode()).hexdigest()}  $f" | sha256sum -c - && ' in cmd
    # SHA256SUMS not of sha256sum's shape is never written into a shell script.
    (dist / "SHA256SUMS").write_text(f"{'0' * 64}  x'; touch /tmp/p; '\n")
    assert "PINNED_SUMS='@CTXBENCH_SHA256SUMS@'" in (await anon.get("/install-agent.sh")).text


def test_dist_dir_defaults_to_build_dist(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    assert Settings().dist_dir == tmp_path / "build" / "dist"
