"""The one-line install, end to end on real processes (issue 10): the server serves install-agent.sh and
the bundle; the installer runs exactly as the join token's install_command says (with --no-service:
systemd is not PID 1 here), as root with no sudo on the host (a minimal image, a container), on a
simulated host: a network namespace reaching the server over a veth link only, and a private mount
namespace with its own /etc, /opt and /var (overlays, so the user it creates and the files it writes
stay in this test's temp dir); the agent it installed is
started with the command it printed, enrolls over TLS with the pinned fingerprint, comes online with
the bundle's version and runs a kernel. A second install upgrades in place and keeps the identity;
revoking the host ends its agent with exit status 77; --uninstall keeps the state dir, --purge
removes it."""

from __future__ import annotations

import re
import shlex
import stat
from pathlib import Path

from tests.bundles.test_bundle import version
from tests.e2e.stack import Server, post_run, wait_run, wait_until
from tests.faults.netns import Host
from tests.fleet.conftest import NO_SUDO, host_online, in_private_root


def test_one_line_install_enrolls_runs_upgrades_and_uninstalls(
    server_on_veth: Server, veth_host: Host, tmp_path: Path
) -> None:
    server = server_on_veth
    r = server.http.post("/join-tokens", json={})
    assert r.status_code == 201, r.text
    created = r.json()
    command = created["install_command"]
    assert command.startswith(f'f=$(mktemp) && curl -fsSL {server.base_url}/install-agent.sh -o "$f" && ')
    assert command.endswith(f"--ca-fingerprint {server.ca_fingerprint}")
    assert f"--server {veth_host.host_addr}:{server.grpc_port} " in command  # over the veth link
    assert "--join-token " not in command  # the token goes on stdin
    root = tmp_path / "host"
    root.mkdir()

    # Install as the explorer shows it, as root on a host with no sudo, then start what it printed.
    install = command + " --no-service"
    start = r"""exec 2>&1
{no_sudo}{install}
cmd=$(sed -n 's/^  \(sh -c .*\)$/\1/p' "$R/install.log")
eval "exec $cmd"
""".format(
        no_sudo=NO_SUDO,
        install=install
        + ' >"$R/install.log" 2>&1 || { cat "$R/install.log"; exit 1; }\ncat "$R/install.log"',
    )
    host = in_private_root(root, start, "installed host", veth_host.wrap)
    try:
        machine = wait_until("the installed host online", lambda: host_online(server), 60)
        assert machine["agent_version"] == version() and machine["status"] == "active"
        # The join token never reached the agent's argv; it sits in a 0600 file, as the env file does.
        cmdline = Path(f"/proc/{host.proc.pid}/cmdline").read_bytes().split(b"\0")
        assert cmdline[0] == b"/opt/ctxbench/bin/ctxbench-agent", cmdline
        status = Path(f"/proc/{host.proc.pid}/status").read_text()
        assert re.search(r"^Uid:\s+([1-9]\d*)\s", status, re.M), status  # the ctxbench user, not root
        assert created["token"].encode() not in b" ".join(cmdline)
        run = post_run(server, machine["id"], [{"kernel": "syscall.getppid"}], repetitions=3, min_time_s=0.01)
        run = wait_run(server, run["id"])
        assert run["status"] == "succeeded", run
        (res,) = server.http.get(f"/runs/{run['id']}/results").json()
        assert res["agent_version"] == version()
    finally:
        assert host.stop() == 0, host.output()
    out = host.output()
    assert "start the agent" in out and "sha256 ok, against the sums pinned in this installer" in out, out
    assert ": OK" in out  # sha256sum -c checked the installer before it ran
    assert created["token"] not in out

    env_file = root / "etc-up" / "ctxbench" / "agent.env"
    state = root / "var-up" / "lib" / "ctxbench"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert stat.S_IMODE((root / "etc-up" / "ctxbench" / "join-token").stat().st_mode) == 0o600
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert (state / "machine-credential").is_file()
    env = dict(line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line)
    argv = shlex.split(command.rsplit("|", 1)[1])
    assert env == {
        "CTXBENCH_AGENT_SERVER": argv[argv.index("--server") + 1],
        "CTXBENCH_AGENT_JOIN_TOKEN_FILE": "/etc/ctxbench/join-token",
        "CTXBENCH_AGENT_CA_FINGERPRINT": server.ca_fingerprint,
        "CTXBENCH_AGENT_STATE_DIR": "/var/lib/ctxbench",
        "CTXBENCH_AGENT_KERNELS": "/opt/ctxbench/kernels",
    }
    agent_id = (state / "agent-id").read_text().strip()

    # Upgrade in place: the installer again with no token (it reads agent.env), same identity.
    upgrade = f"""curl -fsSL {server.base_url}/install-agent.sh -o "$R/install-agent.sh"
sh "$R/install-agent.sh" --no-service
cmd=$(sh "$R/install-agent.sh" --no-service | sed -n 's/^  \\(sh -c .*\\)$/\\1/p')
eval "exec $cmd"
"""
    host = in_private_root(root, upgrade, "upgraded host", veth_host.wrap)
    try:
        again = wait_until("the upgraded host online", lambda: host_online(server), 60)
        assert again["id"] == machine["id"]
        assert len(server.http.get("/machines").json()) == 1
        # Revoked, the agent exits 77 (the unit's RestartPreventExitStatus=) instead of retrying forever.
        assert server.http.post(f"/machines/{machine['id']}/revoke").status_code == 200
        assert host.proc.wait(30) == 77, host.output()
        assert "MACHINE REVOKED" in host.output()
    finally:
        host.stop()
    assert (state / "agent-id").read_text().strip() == agent_id

    # --uninstall keeps the identity; --purge removes it and the user.
    remove = """sh "$R/install-agent.sh" --uninstall
test ! -e /opt/ctxbench && test ! -e /etc/ctxbench && test -s /var/lib/ctxbench/agent-id
sh "$R/install-agent.sh" --uninstall --purge
test ! -e /var/lib/ctxbench && ! id ctxbench >/dev/null 2>&1
echo removed-ok
"""
    host = in_private_root(root, remove, "uninstall", veth_host.wrap)
    assert host.proc.wait(60) == 0, host.output()
    host.wait_for_line(re.compile("removed-ok"), 10)
