"""install-agent.sh's other paths, in a private mount namespace each: with systemd (a stand-in
systemctl records what it is asked) it installs the unit and starts it; without systemd it refuses
unless --no-service; the join token from stdin; a bundle whose sha256 does not match is not installed."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from tests.bundles.conftest import DIST, bundle_path
from tests.e2e.stack import ROOT
from tests.fleet.conftest import MOUNTS

INSTALLER = ROOT / "deploy" / "install-agent.sh"
FP = "sha256:" + "ab" * 32


def run_in_private_root(root: Path, script: str) -> subprocess.CompletedProcess[str]:
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", MOUNTS + script]
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "R": str(root)}
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False, cwd=root)


def serve(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A stand-in for the server's /dist/: python's http.server over `directory` on a free port."""
    argv = ["python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", "0", "--directory", str(directory)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()  # "Serving HTTP on 127.0.0.1 port N (...)"
    return proc, f"http://127.0.0.1:{line.split(' port ')[1].split()[0]}"


def site(tmp_path: Path) -> Path:
    """<site>/dist/ holding this machine's bundle and SHA256SUMS."""
    d = tmp_path / "site" / "dist"
    d.mkdir(parents=True)
    shutil.copy(bundle_path(), d)
    shutil.copy(DIST / "SHA256SUMS", d)
    return d


def test_with_systemd_installs_the_unit_and_starts_it(tmp_path: Path) -> None:
    proc, url = serve(site(tmp_path).parent)
    try:
        fake = tmp_path / "bin"
        fake.mkdir()
        (fake / "systemctl").write_text('#!/bin/sh\necho "$*" >>"$R/systemctl.log"\n')
        (fake / "systemctl").chmod(0o755)
        script = f"""mkdir -p "$R/run-up" "$R/run-work"
mount -t overlay overlay -o "lowerdir=/run,upperdir=$R/run-up,workdir=$R/run-work" /run
mkdir -p /run/systemd/system
echo cxj_from_stdin | PATH="$R/bin:$PATH" sh {INSTALLER} --url {url} --server bench:50051 \\
  --ca-fingerprint {FP} --prefix /opt/cx --join-token-file -
"""
        out = run_in_private_root(tmp_path, script)
    finally:
        proc.terminate()
        proc.wait()
    assert out.returncode == 0, out.stdout + out.stderr
    assert "started ctxbench-agent.service" in out.stdout
    assert (tmp_path / "systemctl.log").read_text().splitlines() == [
        "daemon-reload",
        "enable ctxbench-agent.service",
        "restart ctxbench-agent.service",
    ]
    unit = (tmp_path / "etc-up" / "systemd" / "system" / "ctxbench-agent.service").read_text()
    assert "ExecStart=/opt/cx/bin/ctxbench-agent\n" in unit and "User=ctxbench\n" in unit
    assert "EnvironmentFile=/etc/ctxbench/agent.env\n" in unit
    assert (tmp_path / "opt-up" / "cx" / "bin" / "ctxbench-agent").is_file()
    assert (tmp_path / "etc-up" / "ctxbench" / "join-token").read_text() == "cxj_from_stdin\n"
    env = (tmp_path / "etc-up" / "ctxbench" / "agent.env").read_text()
    assert "CTXBENCH_AGENT_KERNELS=/opt/cx/kernels\n" in env and "cxj_from_stdin" not in env


def test_without_systemd_it_asks_for_no_service(tmp_path: Path) -> None:
    script = f"mount -t tmpfs tmpfs /run\nsh {INSTALLER} --url http://127.0.0.1:9 --server b:1 --join-token x"
    out = run_in_private_root(tmp_path, script)
    assert out.returncode == 1 and "--no-service" in out.stderr, out.stderr
    assert not (tmp_path / "opt-up" / "ctxbench").exists()


def test_a_bundle_that_does_not_match_its_sha256_is_not_installed(tmp_path: Path) -> None:
    d = site(tmp_path)
    tarball = d / bundle_path().name
    with open(tarball, "ab") as f:
        f.write(b"tampered")
    assert hashlib.sha256(tarball.read_bytes()).hexdigest() not in (d / "SHA256SUMS").read_text()
    proc, url = serve(d.parent)
    try:
        out = run_in_private_root(
            tmp_path, f"sh {INSTALLER} --url {url} --server b:1 --join-token x --no-service"
        )
    finally:
        proc.terminate()
        proc.wait()
    assert out.returncode == 1 and "not installing" in out.stderr, out.stdout + out.stderr
    assert not (tmp_path / "opt-up" / "ctxbench").exists()
