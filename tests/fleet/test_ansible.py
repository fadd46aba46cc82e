"""deploy/ansible's playbook on a host (issue 10): run with ansible-core from the venv against this
machine (connection local) inside a private mount namespace (its own /etc, /opt, /var, as in
test_install), with ctxbench_service=false since systemd is not PID 1 here. It installs the bundle and
enrolls with the join token passed as a variable; a second run changes nothing; the agent it set up,
started as the installer would start it, comes online and runs a kernel."""

from __future__ import annotations

import json
import re
import shlex
import stat
from pathlib import Path

from tests.e2e.stack import ROOT, Server, post_run, wait_run, wait_until
from tests.fleet.conftest import host_online, in_private_root

VENV_BIN = ROOT / ".venv" / "bin"
PLAYBOOK = ROOT / "deploy" / "ansible" / "playbook.yml"
START = "exec setpriv --reuid=ctxbench --regid=ctxbench --init-groups /opt/ctxbench/bin/ctxbench-agent"
RECAP = re.compile(r"^localhost\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=0", re.M)


def test_playbook_installs_enrolls_and_a_second_run_changes_nothing(server: Server, tmp_path: Path) -> None:
    r = server.http.post("/join-tokens", json={})
    assert r.status_code == 201, r.text
    created = r.json()
    argv = shlex.split(created["install_command"].split("|", 1)[1])
    root = tmp_path / "host"
    (root / "home").mkdir(parents=True)
    (root / "inventory.ini").write_text(
        "[ctxbench_agents]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"
    )
    secrets = root / "secrets.json"
    secrets.write_text(
        json.dumps(
            {
                "ctxbench_url": server.base_url,
                "ctxbench_server": argv[argv.index("--server") + 1],
                "ctxbench_ca_fingerprint": created["ca_fingerprint"],
                "ctxbench_join_token": created["token"],
                "ctxbench_agent_name": "ansible-host",
                "ctxbench_service": False,
                "ansible_become": False,  # root already
            }
        )
    )
    secrets.chmod(0o600)
    play = f'{VENV_BIN}/ansible-playbook -i "$R/inventory.ini" {PLAYBOOK} -e @"$R/secrets.json"'
    script = f"""export HOME="$R/home" ANSIBLE_NOCOLOR=1
{play} >"$R/first.log" 2>&1 || {{ cat "$R/first.log"; exit 1; }}
{play} >"$R/second.log" 2>&1 || {{ cat "$R/second.log"; exit 1; }}
set -a; . /etc/ctxbench/agent.env; set +a
{START}
"""
    # /root too: Ansible's remote tmp (~root/.ansible/tmp with connection local) stays in the temp dir.
    host = in_private_root(root, script, "ansible host", dirs=("etc", "opt", "var", "root"))
    try:
        machine = wait_until("the host set up by Ansible online", lambda: host_online(server), 180)
        assert machine["name"] == "ansible-host"
        run = post_run(
            server, machine["id"], [{"kernel": "goroutine.create"}], repetitions=3, min_time_s=0.01
        )
        assert wait_run(server, run["id"])["status"] == "succeeded"
    finally:
        assert host.stop() == 0, host.output()
    first, second = ((root / f"{n}.log").read_text() for n in ("first", "second"))
    assert (m := RECAP.search(first)) and int(m.group(2)) > 0, first
    assert (m := RECAP.search(second)) and int(m.group(2)) == 0, second
    assert created["token"] not in first + second  # no_log
    etc = root / "etc-up" / "ctxbench"
    assert stat.S_IMODE((etc / "agent.env").stat().st_mode) == 0o600
    assert stat.S_IMODE((etc / "join-token").stat().st_mode) == 0o600
    assert stat.S_IMODE((root / "var-up" / "lib" / "ctxbench").stat().st_mode) == 0o700
