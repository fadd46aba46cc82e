"""Three simulated hosts reached over SSH, end to end (issue 10).

Each host is a network namespace cxs-* whose only link is a veth (the host 10.233.<k>.2, this machine's
side 10.233.<k>.1) and, inside it, its own mount namespace (overlays over /etc, /opt, /var and /root
whose upper dirs are this test's temp dir, a tmpfs /run), PID and UTS namespaces (its hostname), with a
real sshd as PID 1: key auth only, its own host key, which the controller's known_hosts pins. Stopping
sshd ends everything that ran on the host. The server listens on 10.233.1.1, this machine's side of
host 1's link, and its certificate names that address; hosts 2 and 3 reach it through their own link
(a route via 10.233.<k>.1), as hosts on other subnets reach a server through their gateway.

Host 1: the one-line install from the join token's install_command, typed over SSH (with --no-service:
systemd is not PID 1 here), enrolls over TLS pinned to the CA fingerprint. Hosts 2 and 3: one
ansible-playbook run over SSH, as root with the test's key, one join token of two uses. Every agent is
started over SSH with the command the installer printed; the three come online under their own
hostnames and one batch runs a kernel on each. A second playbook run, the agents running, changes
nothing on either host."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bundles.test_bundle import version
from tests.e2e.stack import ROOT, Process, Server, base_env, wait_run, wait_until
from tests.faults.netns import Host, Hosts
from tests.fleet.conftest import overlays, start_server
from tests.fleet.test_ansible import PLAYBOOK, VENV_BIN

SSHD = Path("/usr/sbin/sshd")
# sshd's files as the host sees them: in its own /etc (the overlay's upper dir, in the temp dir).
# StrictModes wants every directory above authorized_keys owned by root and not group- or
# world-writable, up to /; a path under /tmp (mode 1777) is not, /etc/ssh/... inside the host is.
SSH_DIR = "/etc/ssh/ctxbench-test"
SSHD_CONFIG = f"""ListenAddress {{addr}}
HostKey {SSH_DIR}/host_key
AuthorizedKeysFile {SSH_DIR}/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PidFile none
Subsystem sftp /usr/lib/openssh/sftp-server
"""


def keygen(path: Path, comment: str) -> str:
    """A new ed25519 key pair at path (0600) and path.pub; returns the public key's "type base64"."""
    argv = ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)]
    subprocess.run(argv, check=True, capture_output=True, timeout=30)
    return " ".join(path.with_name(path.name + ".pub").read_text().split()[:2])


class Controller:
    """The operator's side: a key pair made for this test and a known_hosts with each host's key."""

    def __init__(self, home: Path) -> None:
        home.mkdir(mode=0o700)
        self.home = home
        self.key = home / "id_ed25519"
        self.public_key = keygen(self.key, "ctxbench-test-controller")
        self.known_hosts = home / "known_hosts"
        self.known_hosts.touch()
        # Nothing from this machine's ssh config or agent; no prompt, ever.
        self.options = [
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            f"UserKnownHostsFile={self.known_hosts}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "ConnectTimeout=10",
        ]

    def ssh(self, addr: str, command: str) -> list[str]:
        return ["ssh", "-F", "/dev/null", "-i", str(self.key), *self.options, f"root@{addr}", command]


class SshHost:
    """A simulated host (see the module's docstring); its files land under `root`/<dir>-up."""

    def __init__(self, link: Host, name: str, root: Path, controller: Controller) -> None:
        self.link, self.name, self.root, self.controller = link, name, root, controller
        self.addr = link.ns_addr
        etc = root / "etc-up"
        ssh_dir = etc / SSH_DIR.removeprefix("/etc/")
        ssh_dir.mkdir(parents=True)
        for d in (root, etc, ssh_dir.parent, ssh_dir):
            d.chmod(0o755)
        (root / "root-up").mkdir(mode=0o700)
        host_key = keygen(ssh_dir / "host_key", name)
        (ssh_dir / "authorized_keys").write_text(controller.public_key + "\n")
        (ssh_dir / "authorized_keys").chmod(0o600)
        (ssh_dir / "sshd_config").write_text(SSHD_CONFIG.format(addr=self.addr))
        with controller.known_hosts.open("a") as f:
            f.write(f"{self.addr} {host_key}\n")
        script = overlays("etc", "opt", "var", "root") + (
            f"echo {name} >/proc/sys/kernel/hostname\n"
            "mount -t tmpfs -o mode=0755 tmpfs /run\n"
            "mkdir -m 0755 /run/sshd\n"  # sshd's privilege separation dir
            f"exec {SSHD} -D -e -f {SSH_DIR}/sshd_config\n"
        )
        argv = [
            *link.wrap,
            "unshare",
            "--mount",
            "--uts",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount-proc",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
        ]
        self.sshd = Process(f"sshd on {name}", argv, base_env(R=str(root)), root)
        try:
            self.sshd.wait_for_line(re.compile(r"Server listening on "), 30)
        except BaseException:
            self.stop()
            raise

    def run(self, command: str, timeout: float = 120) -> str:
        """`command` over SSH, as root; its output (stdout, then stderr); fails the test unless it exits 0."""
        p = subprocess.run(
            self.controller.ssh(self.addr, command),
            env=base_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert p.returncode == 0, f"{self.name}: exit {p.returncode}:\n{p.stdout}{p.stderr}"
        return p.stdout + p.stderr

    def spawn(self, command: str, what: str) -> Process:
        """`command` over SSH in the background, its output collected."""
        argv = self.controller.ssh(self.addr, command)
        return Process(f"{what} on {self.name}", argv, base_env(), self.root)

    def stop(self) -> None:
        """SIGKILL to unshare and to sshd, PID 1 of the host's PID namespace: the kernel then kills every
        process that ran on the host (its sessions, the agent, the kernels)."""
        try:
            os.killpg(self.sshd.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.sshd.proc.wait(10)


@pytest.fixture
def links() -> Iterator[list[Host]]:
    """Three veth links, 10.233.<k>.0/30; hosts 2 and 3 route to 10.233.1.1 (the server) over their own."""
    hosts = Hosts(3, f"s{os.getpid() % 100000}", prefix="cxs", link="cs", net=233)
    try:
        server_addr = hosts.hosts[0].host_addr
        for h in hosts.hosts[1:]:
            route = ["ip", "route", "add", f"{server_addr}/32", "via", h.host_addr]
            subprocess.run([*h.wrap, *route], check=True, capture_output=True, timeout=10)
        yield hosts.hosts
    finally:
        hosts.close()


@pytest.fixture
def fleet_server(tmp_path: Path, links: list[Host]) -> Iterator[Server]:
    """The real server, HTTP and gRPC on 10.233.1.1 only."""
    addr = links[0].host_addr
    srv = start_server(tmp_path, grpc_host=addr, http_host=addr)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def ssh_hosts(tmp_path: Path, links: list[Host]) -> Iterator[list[SshHost]]:
    if not SSHD.is_file():
        pytest.fail(f"{SSHD} missing: apt-get install openssh-server (scripts/bootstrap.sh test)")
    controller = Controller(tmp_path / "controller")
    hosts: list[SshHost] = []
    try:
        for k, link in enumerate(links, 1):
            hosts.append(SshHost(link, f"cxs-host-{k}", tmp_path / f"host{k}", controller))
        yield hosts
    finally:
        for h in hosts:
            h.stop()


def recap(log: str, host: str) -> tuple[int, int]:
    """(ok, changed) of `host` in ansible-playbook's PLAY RECAP; fails unless unreachable=0 failed=0."""
    line = rf"^{re.escape(host)}\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=0\s"
    m = re.search(line, log, re.M)
    assert m, log
    return int(m.group(1)), int(m.group(2))


def test_installer_and_ansible_over_ssh_bring_three_hosts_online(
    fleet_server: Server, ssh_hosts: list[SshHost], tmp_path: Path
) -> None:
    server = fleet_server
    first, *others = ssh_hosts
    grpc_address = f"{first.link.host_addr}:{server.grpc_port}"
    agents: list[Process] = []
    control_dir = tempfile.mkdtemp(prefix="cxs-cp-")
    try:
        # Host 1: the one-liner from the join token as printed, typed over SSH (root, no sudo on the host).
        r = server.http.post("/join-tokens", json={})
        assert r.status_code == 201, r.text
        single = r.json()
        command = single["install_command"]
        # The agents dial 10.233.1.1, pin the CA and check that the server certificate names that address.
        # The token goes to the installer on stdin, never in argv (issue 26 item 5).
        assert f"--server {grpc_address} --join-token-file - " in command
        assert command.endswith(f"--ca-fingerprint {server.ca_fingerprint}")
        out = first.run(command + " --no-service")
        assert "sha256 ok" in out, out
        start = re.search(r"^  (sh -c .*)$", out, re.M)
        assert start, out
        agents.append(first.spawn(start.group(1), "agent"))

        # Hosts 2 and 3: one playbook run over SSH, one join token of two uses.
        r = server.http.post("/join-tokens", json={"uses": 2})
        assert r.status_code == 201, r.text
        joined = r.json()
        controller = first.controller
        inventory = tmp_path / "inventory.ini"
        inventory.write_text(
            "[ctxbench_agents]\n"
            + "".join(f"{h.name} ansible_host={h.addr}\n" for h in others)
            + "\n[ctxbench_agents:vars]\n"
            "ansible_user=root\n"
            "ansible_become=false\n"  # root already (and no sudo here)
            f"ansible_ssh_private_key_file={controller.key}\n"
            f"ansible_ssh_common_args=-o UserKnownHostsFile={controller.known_hosts}"
            " -o StrictHostKeyChecking=yes\n"
            "ansible_python_interpreter=/usr/bin/python3\n"
            f"ctxbench_url={server.base_url}\n"
            f"ctxbench_server={grpc_address}\n"
            f"ctxbench_ca_fingerprint={joined['ca_fingerprint']}\n"
            "ctxbench_service=false\n"
        )
        secrets = tmp_path / "secrets.json"
        secrets.write_text(json.dumps({"ctxbench_join_token": joined["token"]}))
        secrets.chmod(0o600)
        env = base_env(
            HOME=str(controller.home),
            ANSIBLE_CONFIG=str(ROOT / "deploy" / "ansible" / "ansible.cfg"),
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_PIPELINING="true",
            # One connection per host for both runs: sockets in a short dir (a unix socket path holds
            # 108 bytes), masters that exit when the host's sshd does; nothing from ~/.ssh/config.
            ANSIBLE_SSH_ARGS="-F /dev/null -o ControlMaster=auto -o ControlPersist=60s",
            ANSIBLE_SSH_CONTROL_PATH_DIR=control_dir,
        )
        env.pop("SSH_AUTH_SOCK", None)

        def play() -> str:
            argv = [str(VENV_BIN / "ansible-playbook"), "-i", str(inventory), str(PLAYBOOK)]
            argv += ["-e", f"@{secrets}"]
            p = subprocess.run(
                argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False
            )
            assert p.returncode == 0, p.stdout + p.stderr
            assert joined["token"] not in p.stdout + p.stderr  # no_log
            return p.stdout

        log = play()
        for h in others:
            assert recap(log, h.name)[1] > 0, log
            etc = h.root / "etc-up" / "ctxbench"
            assert stat.S_IMODE((etc / "join-token").stat().st_mode) == 0o600
            agents.append(h.spawn(start.group(1), "agent"))

        def all_online() -> list[dict] | None:
            machines = [m for m in server.http.get("/machines").json() if m["online"]]
            return machines if sorted(m["name"] for m in machines) == [h.name for h in ssh_hosts] else None

        try:
            machines = wait_until("the three hosts online", all_online, 60)
        except TimeoutError as e:
            raise AssertionError("\n\n".join([str(e), *(f"{a.name}:\n{a.output()}" for a in agents)])) from e
        assert all(m["agent_version"] == version() and m["status"] == "active" for m in machines), machines
        tokens = {t["id"]: t for t in server.http.get("/join-tokens").json()}
        assert (tokens[single["id"]]["uses"], tokens[single["id"]]["uses_left"]) == (1, 0)
        assert (tokens[joined["id"]]["uses"], tokens[joined["id"]]["uses_left"]) == (2, 0)
        for h in ssh_hosts:
            state = h.root / "var-up" / "lib" / "ctxbench"
            assert stat.S_IMODE((state / "machine-credential").stat().st_mode) == 0o600

        # An authenticated run on all three: one batch, a run per machine.
        ids = [m["id"] for m in machines]
        body = {"machine_ids": ids, "items": [{"kernel": "syscall.getppid"}], "repetitions": 3}
        r = server.http.post("/runs", json={**body, "min_time_s": 0.01})
        assert r.status_code == 201, r.text
        for run in r.json()["runs"]:
            done = wait_run(server, run["id"])
            assert done["status"] == "succeeded", done
            (res,) = server.http.get(f"/runs/{run['id']}/results").json()
            assert res["agent_version"] == version() and res["machine_id"] == run["machine_id"]
        assert sorted(run["machine_id"] for run in r.json()["runs"]) == sorted(ids)

        # The playbook again, the agents running: nothing changes on either host, and they stay online.
        log = play()
        for h in others:
            assert recap(log, h.name)[1] == 0, log
        assert all_online()
    finally:
        for a in agents:
            a.stop()
        for h in others:  # Ansible's connection masters, if any are still up
            exit_master = ["ssh", "-F", "/dev/null", "-o", f"ControlPath={control_dir}/%C", "-O", "exit"]
            subprocess.run([*exit_master, f"root@{h.addr}"], capture_output=True, timeout=10, check=False)
        shutil.rmtree(control_dir, ignore_errors=True)
