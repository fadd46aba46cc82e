"""The explorer's upgrade command, run on real hosts (issue 26): the real server serves a dist dir laid
out as `make dist` leaves it after two builds (SHA256SUMS lists an earlier bundle of this release
first, this commit's last, both from build/dist's bundle) and this checkout's installer; a simulated
host (network namespace, private /etc, /opt, /var and /run) installs the earlier one with the join
token's install command plus `--version`, and GET /machines calls it outdated with an upgrade command.
That exact string, run as root inside the host, first fails on a tampered bundle (the old agent keeps
running), then upgrades in place: the agent comes back under the same machine id with the offered
version, agent.env and the state dir unchanged, and runs a kernel.

Two hosts. With systemd: its part is played by the host's init (this test's shell): /run/systemd/system
exists, and `systemctl restart ctxbench-agent.service` makes the init stop the agent it runs and start
the unit's ExecStart= as its User= with its EnvironmentFile=. Without systemd (installed with
--no-service, a container): the init runs the printed start command again whenever the agent exits;
the upgrade replaces the files and says the old agent still runs, and the operator stops it. Neither
host has a sudo (root runs the commands, as on a minimal image or in a container): the printed commands
say `sh "$f"`, and the installer asks sudo only when it is not root."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.bundles.conftest import ARCH, bundle_path
from tests.e2e.stack import ROOT, Process, Server, post_run, wait_run, wait_until
from tests.faults.netns import Host
from tests.fleet.conftest import NO_SUDO, host_online, in_private_root

SYSTEMCTL = """#!/bin/sh
# systemctl on this simulated host: a restart asks the host's init (tests/fleet/test_upgrade.py) to
# restart the unit.
echo "$*" >>"{root}/systemctl.log"
[ "$1" != restart ] || : >"{root}/restart"
"""

# A host with systemd: the install command, then systemd's part (Restart= and a clean stop left out).
SYSTEMD_HOST = r"""exec 2>&1
mount -t tmpfs tmpfs /run
mkdir -p /run/systemd/system
export PATH="$R/bin:$PATH" TMPDIR="$R/tmp"
{no_sudo}{install} || exit 1
agent=""
trap 'kill "$agent" 2>/dev/null; wait; exit 0' TERM
unit=/etc/systemd/system/ctxbench-agent.service
while :; do
  if [ -e "$R/restart" ]; then
    rm -f "$R/restart"
    if [ -n "$agent" ]; then kill "$agent"; wait "$agent"; fi
    exe=$(sed -n 's/^ExecStart=//p' $unit) user=$(sed -n 's/^User=//p' $unit)
    env=$(sed -n 's/^EnvironmentFile=//p' $unit)
    (set -a; . "$env"; exec setpriv --reuid="$user" --regid="$user" --init-groups "$exe") &
    agent=$!
    echo "init: started $exe (pid $agent)"
  fi
  sleep 0.1
done
"""
# A host without systemd (a container): installed with --no-service, its init runs the printed start
# command again whenever the agent exits (a container's restart policy).
PLAIN_HOST = r"""exec 2>&1
mount -t tmpfs tmpfs /run
export PATH="$R/bin:$PATH" TMPDIR="$R/tmp"
{no_sudo}{install} --no-service >"$R/install.log" || {{ cat "$R/install.log"; exit 1; }}
cmd=$(sed -n 's/^  \(sh -c .*\)$/\1/p' "$R/install.log")
agent=""
trap 'kill "$agent" 2>/dev/null; wait; exit 0' TERM
while :; do
  eval "exec $cmd" &
  agent=$!
  echo "init: started $cmd (pid $agent)"
  wait "$agent"
done
"""


def older_dist(tmp_path: Path) -> tuple[Path, str, str]:
    """A dist dir like build/dist after two `make dist` runs: an earlier bundle of this release (this
    commit's with an agent stamped `<release>+older`), then this commit's, and the installer; the dir and
    the two versions."""
    old = f"{(ROOT / 'VERSION').read_text().strip()}+older"
    dist = tmp_path / "dist"
    work = tmp_path / "older"
    dist.mkdir()
    work.mkdir()
    new = bundle_path()
    with tarfile.open(new) as tf:
        tf.extractall(work, filter="tar")
    top = work / f"ctxbench-agent-{old}-linux-{ARCH}"
    (work / new.name.removesuffix(".tar.gz")).rename(top)
    env = {**os.environ, "CGO_ENABLED": "0", "GOOS": "linux", "GOARCH": ARCH}
    subprocess.run(
        ["go", "build", "-trimpath", "-buildvcs=false", "-ldflags", f"-s -w -X main.version={old}",
         "-o", str(top / "bin" / "ctxbench-agent"), "./cmd/ctxbench-agent"],
        cwd=ROOT / "agent", env=env, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (top / "VERSION").write_text(old + "\n")
    with tarfile.open(dist / f"{top.name}.tar.gz", "w:gz", compresslevel=1) as tf:
        tf.add(top, top.name)
    shutil.copy(new, dist)
    sums = subprocess.run(
        ["sha256sum", f"{top.name}.tar.gz", new.name], cwd=dist, check=True, capture_output=True, text=True
    )
    (dist / "SHA256SUMS").write_text(sums.stdout)
    shutil.copy(ROOT / "deploy" / "install-agent.sh", dist)
    return dist, old, new.name.removeprefix("ctxbench-agent-").removesuffix(f"-linux-{ARCH}.tar.gz")


def host_files(root: Path, systemd: bool) -> None:
    """The host's systemctl (with systemd), in $R/bin, first on its PATH; its TMPDIR."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    (root / "tmp").mkdir()
    (root / "systemctl.log").write_text("")
    tools = {"systemctl": SYSTEMCTL.format(root=root)} if systemd else {}
    for name, text in tools.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)


def in_host(host: subprocess.Popen[str], root: Path, command: str) -> subprocess.CompletedProcess[str]:
    """`sh -c command` as root in the host's namespaces (network, mount: its /etc, /opt, /var, /run)."""
    env = {**os.environ, "PATH": f"{root}/bin:{os.environ['PATH']}", "TMPDIR": str(root / "tmp")}
    argv = ["nsenter", "-t", str(host.pid), "-m", "-n", "sh", "-c", command]
    return subprocess.run(argv, env=env, cwd=root, capture_output=True, text=True, timeout=120, check=False)


def agent_pid(out: str) -> int:
    return int(re.findall(r"init: started .* \(pid (\d+)\)", out)[-1])


@pytest.mark.parametrize("systemd", [True, False], ids=["systemd", "no-systemd"])
def test_the_upgrade_command_upgrades_an_outdated_agent_in_place(
    veth_host: Host, tmp_path: Path, systemd: bool
) -> None:
    dist, old, new = older_dist(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    addr = veth_host.host_addr
    server = Server(data, dist_dir=str(dist), grpc_host=addr, http_host=addr)
    root = tmp_path / "host"
    host_files(root, systemd)
    try:
        r = server.http.post("/join-tokens", json={})
        assert r.status_code == 201, r.text
        install = r.json()["install_command"] + f" --version {old}"
        script = (SYSTEMD_HOST if systemd else PLAIN_HOST).format(install=install, no_sudo=NO_SUDO)
        host = in_private_root(root, script, "host", veth_host.wrap)
        try:
            machine = wait_until("the host online", lambda: host_online(server), 60)
            assert machine["agent_version"] == old, machine
            bundle = dist / f"ctxbench-agent-{new}-linux-{ARCH}.tar.gz"
            upgrade_and_check(server, host, root, bundle, machine, (old, new), systemd=systemd)
        finally:
            assert host.stop() == 0, host.output()
    finally:
        server.stop()


def upgrade_and_check(
    server: Server,
    host: Process,
    root: Path,
    bundle: Path,
    machine: dict,
    versions: tuple[str, str],
    *,
    systemd: bool,
) -> None:
    old, new = versions
    (listed,) = server.http.get("/machines").json()
    assert listed["agent_offered_version"] == new and listed["agent_outdated"] is True, listed
    command = listed["upgrade_command"]
    assert command.startswith(f'f=$(mktemp) && curl -fsSL {server.base_url}/install-agent.sh -o "$f" && ')
    env_file = root / "etc-up" / "ctxbench" / "agent.env"
    state = root / "var-up" / "lib" / "ctxbench"
    kept = {p: p.read_bytes() for p in (env_file, state / "agent-id", state / "machine-credential")}
    pid = agent_pid(host.output())
    systemctl = (root / "systemctl.log").read_text()
    # The command runs as root where there is no sudo to call (it used to say `sudo sh "$f"`).
    assert command.endswith(' && sh "$f"') and "sudo" not in command, command
    assert in_host(host.proc, root, "command -v sudo").returncode != 0

    # A bundle whose sha256 is not the one pinned in the installer: the command fails, nothing changes.
    good = bundle.read_bytes()
    bundle.write_bytes(good + b"tampered")
    out = in_host(host.proc, root, command)
    assert out.returncode == 1 and "sha256" in out.stderr and "not installing" in out.stderr, out
    bundle.write_bytes(good)
    assert (root / "opt-up" / "ctxbench" / "VERSION").read_text().strip() == old
    assert os.readlink(f"/proc/{pid}/exe") == "/opt/ctxbench/bin/ctxbench-agent"  # not replaced
    assert (root / "systemctl.log").read_text() == systemctl  # not restarted
    still = host_online(server)
    assert still is not None and (still["id"], still["agent_version"]) == (machine["id"], old), still

    out = in_host(host.proc, root, command)
    assert out.returncode == 0, out
    upgraded_from = f"upgraded ctxbench-agent from {old} to {new} in /opt/ctxbench"
    if systemd:
        assert f"{upgraded_from} and restarted ctxbench-agent.service" in out.stdout, out
    else:
        # Without systemd nothing restarts the agent: the installer says so, and the operator stops it
        # (the host's init starts it again, from the new files).
        assert f"{upgraded_from} (no systemd unit)" in out.stdout, out
        still_old = rf"the agent still running \(pid [\d ]*\b{pid}\b[\d ]*\) runs {re.escape(old)} "
        assert re.search(still_old, out.stdout), out
        os.kill(pid, signal.SIGTERM)

    def upgraded() -> dict | None:
        m = host_online(server)
        return m if m and m["agent_version"] == new else None

    after = wait_until("the upgraded agent online", upgraded, 60)
    assert after["id"] == machine["id"] and agent_pid(host.output()) != pid
    assert after["agent_offered_version"] == new and after["agent_outdated"] is False, after
    assert after["upgrade_command"] is None, after
    assert len(server.http.get("/machines").json()) == 1  # no second enrollment
    assert {p: p.read_bytes() for p in kept} == kept  # agent.env, identity and credential kept

    run = post_run(server, after["id"], [{"kernel": "call.function"}], repetitions=2, min_time_s=0.01)
    run = wait_run(server, run["id"])
    assert run["status"] == "succeeded", run
    (res,) = server.http.get(f"/runs/{run['id']}/results").json()
    assert res["agent_version"] == new
