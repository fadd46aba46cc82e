"""install-agent.sh's other paths, in a private mount namespace each: with systemd (a stand-in
systemctl records what it is asked) it installs the unit and starts it; without systemd it refuses
unless --no-service; the join token from stdin; a bundle whose sha256 does not match is not installed."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.bundles.conftest import DIST, bundle_path
from tests.e2e.stack import ROOT
from tests.fleet.conftest import MOUNTS

INSTALLER = ROOT / "deploy" / "install-agent.sh"
FP = "sha256:" + "ab" * 32
SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"


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
    # A revoked agent exits 77 (tests/fleet/test_install.py): not restarted.
    assert "Restart=always\n" in unit and "RestartPreventExitStatus=77\n" in unit
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


def test_values_that_would_need_quoting_in_agent_env_are_refused(tmp_path: Path) -> None:
    """Issue 26, item 6: agent.env is sourced by root (the start command); a value with a newline,
    quote or shell character never reaches it. --name "ok<newline>cmd" passed the old grep check."""
    base = "--url http://127.0.0.1:9 --join-token x --no-service"
    cases = {
        "--server b:1 --name \"$(printf 'ok\\ntouch /tmp/pwned')\"": "--name: letters",
        "--server 'b:1;touch x'": "--server: HOST:PORT",
        "--server \"$(printf 'b:1\\nX=1')\"": "--server: HOST:PORT",
        "--server b:1 --name 'a b'": "--name: letters",
        f"--server b:1 --ca-fingerprint \"$(printf '{FP}\\nX=1')\"": "--ca-fingerprint wants",
        "--server b:1 --prefix '/opt/x y'": "--prefix: an absolute path",
    }
    for args, why in cases.items():
        out = run_in_private_root(tmp_path, f"sh {INSTALLER} {base} {args}")
        assert out.returncode == 1 and why in out.stderr, (args, out.stdout + out.stderr)
        assert not (tmp_path / "etc-up" / "ctxbench").exists(), args


def test_without_systemd_upgrade_and_uninstall_say_what_runs(tmp_path: Path) -> None:
    """Issue 26, item 9: without systemd an upgrade says the running agent still runs the old files
    (not first-install text), --uninstall stops it, and --purge says so when userdel fails."""
    proc, url = serve(site(tmp_path).parent)
    fake = tmp_path / "bin"
    fake.mkdir()
    for tool in ("userdel", "deluser"):
        (fake / tool).write_text(
            f'#!/bin/sh\necho "{tool}: user ctxbench is currently used by process 1" >&2\nexit 8\n'
        )
        (fake / tool).chmod(0o755)
    try:
        script = f"""mount -t tmpfs tmpfs /run
inst="sh {INSTALLER} --url {url} --server 127.0.0.1:9 --ca-fingerprint {FP} --no-service"
$inst --join-token x
set -a; . /etc/ctxbench/agent.env; set +a
setpriv --reuid=ctxbench --regid=ctxbench --init-groups /opt/ctxbench/bin/ctxbench-agent \\
  >"$R/agent.log" 2>&1 &
pid=$!
sleep 1
echo "agent pid $pid"
$inst
sh {INSTALLER} --uninstall
kill -0 $pid 2>/dev/null && echo "still running"
PATH="$R/bin:$PATH" sh {INSTALLER} --uninstall --purge || echo "purge exit $?"
"""
        out = run_in_private_root(tmp_path, script)
    finally:
        proc.terminate()
        proc.wait()
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    pid = text.split("agent pid ")[1].split()[0]
    assert "upgraded ctxbench-agent from " in text, text
    assert f"the agent still running (pid {pid}) runs " in text, text
    assert f"stopped the running agent (pid {pid})" in text, text
    assert "still running" not in text.replace("the agent still running", ""), text
    assert "not the user ctxbench: userdel: user ctxbench is currently used" in text, text
    assert "purge exit 1" in text and "removed the agent, its state dir and the user" not in text, text


# sudo on a host, as a user calls it: says how it was called and what came on its stdin (a stand-in
# cannot make anyone root; the root side is tests/fleet/test_install.py and test_upgrade.py).
STAND_IN_SUDO = '#!/bin/sh\necho "sudo: uid $(id -u): $*"\necho "sudo: stdin: $(cat)"\n'


def test_run_by_a_user_it_runs_itself_again_through_sudo_with_the_token_on_stdin() -> None:
    """The printed commands say `sh "$f"` (root with no sudo runs them as they are); a user's run
    goes through sudo with the same arguments, the join token still on stdin and out of every argv,
    and CTXBENCH_URL (which sudo drops) as --url. With no sudo it says what to do."""
    d = Path(
        tempfile.mkdtemp(prefix="cx-user-")
    )  # not under pytest's tmp_path: 0700, the user can't reach it
    try:
        d.chmod(0o755)
        tools, with_sudo = d / "tools", d / "sudo"
        for b in (tools, with_sudo):
            b.mkdir()
        for tool in ("id", "cat"):
            (tools / tool).symlink_to(shutil.which(tool) or f"/usr/bin/{tool}")
        (with_sudo / "sudo").write_text(STAND_IN_SUDO)
        (with_sudo / "sudo").chmod(0o755)
        installer = d / "install-agent.sh"  # the command's "$f"
        shutil.copy(INSTALLER, installer)

        def as_user(path: str, *args: str, stdin: str = "cxj_on_stdin\n") -> subprocess.CompletedProcess[str]:
            argv = [SETPRIV, "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", *args]
            env = {"PATH": path, "CTXBENCH_URL": "http://bench.example:8080"}
            return subprocess.run(
                argv, input=stdin, env=env, cwd=d, capture_output=True, text=True, timeout=30
            )

        out = as_user(f"{with_sudo}:{tools}", str(installer), "--server", "b:1", "--join-token-file", "-")
        assert out.returncode == 0, out
        assert out.stdout.splitlines() == [
            f"sudo: uid 65534: -u root sh {installer} --url http://bench.example:8080 "
            "--server b:1 --join-token-file -",
            "sudo: stdin: cxj_on_stdin",
        ], out

        out = as_user(str(tools), str(installer), "--server", "b:1", "--join-token-file", "-")
        assert (out.returncode, out.stdout, out.stderr) == (
            1,
            "",
            "install-agent: run as root, or install sudo\n",
        )

        # Read from a pipe (curl … | sh -s --) there is no file to run again: it says how to run it.
        out = as_user(f"{with_sudo}:{tools}", "-s", "--", "--server", "b:1", stdin=INSTALLER.read_text())
        assert out.returncode == 1 and "| sudo sh -s -- ...)" in out.stderr and "sudo:" not in out.stdout, out
    finally:
        shutil.rmtree(d)
