"""Enrollment and TLS with the real server and agent: join token, pinned CA fingerprint, refusals."""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path

from tests.e2e.stack import Agent, Server, online_machine, post_run, wait_run


def join_token(server: Server, tmp_path: Path, name: str, **body: int) -> Path:
    r = server.http.post("/join-tokens", json=body)
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["ca_fingerprint"] == server.ca_fingerprint
    assert f"printf '%s\\n' {created['token']} | sh \"$f\" --server " in created["install_command"]
    assert f"--ca-fingerprint {server.ca_fingerprint}" in created["install_command"]
    path = tmp_path / name
    path.write_text(created["token"] + "\n")
    path.chmod(0o600)
    return path


def joining(server: Server, spool: Path, name: str, token: Path, fingerprint: str | None = None) -> Agent:
    """An agent enrolling with the join token in the file token, pinning the server's CA (or fingerprint)."""
    pin = fingerprint or server.ca_fingerprint
    return Agent(server, spool, name=name, join_token_file=token, ca_fingerprint=pin)


def test_join_token_enrolls_over_pinned_tls_and_runs(server: Server, tmp_path: Path) -> None:
    assert server.ca_fingerprint and server.ca_file == server.data_dir / "tls" / "ca.pem"
    token = join_token(server, tmp_path, "join")
    agent = joining(server, tmp_path / "spool", "joined", token)
    reused: Agent | None = None
    try:
        m = online_machine(server, "joined")
        reused = joining(server, tmp_path / "spool-2", "late", token)
        assert m["name"] == "joined" and m["status"] == "active"
        cred = agent.spool / "machine-credential"
        assert cred.stat().st_mode & 0o777 == 0o600
        secret = cred.read_text().strip()
        assert secret not in agent.output()
        assert token.read_text().strip() not in agent.output() + server.output()

        run = post_run(server, m["id"], [{"kernel": "syscall.getppid"}], repetitions=5, min_time_s=0.01)
        run = wait_run(server, run["id"])
        assert run["status"] == "succeeded", run

        # The single-use token is spent: the second host is refused, says why, and exits non-zero.
        reused.wait_for_line(re.compile(r"ENROLLMENT REFUSED: join token already used"), 20)
        assert reused.proc.wait(10) != 0
        assert [x["name"] for x in server.http.get("/machines").json()] == ["joined"]
    finally:
        if reused is not None:
            reused.stop()
        assert agent.stop() == 0


def test_wrong_fingerprint_is_refused_and_said(server: Server, tmp_path: Path) -> None:
    token = join_token(server, tmp_path, "join")
    want = "sha256:" + "0" * 64
    agent = joining(server, tmp_path / "spool", "mitm", token, want)
    try:
        agent.wait_for_line(
            re.compile(
                rf"server CA fingerprint mismatch: got {re.escape(server.ca_fingerprint or '')}, want {want}"
            ),
            20,
        )
        assert agent.proc.poll() is None, "the agent retries (the pin may be fixed on the host)"
        assert server.http.get("/machines").json() == []
        assert server.http.get("/join-tokens").json()[0]["uses_left"] == 1
    finally:
        assert agent.stop() == 0


def test_revoke_closes_the_stream_and_refuses_the_restart(server: Server, tmp_path: Path) -> None:
    agent = Agent(server, tmp_path / "spool", name="doomed")
    try:
        m = online_machine(server, "doomed")
        t0 = time.monotonic()
        assert server.http.post(f"/machines/{m['id']}/revoke").json()["status"] == "revoked"
        agent.wait_for_line(re.compile(rf"machine {m['id']} has been revoked"), 5)
        closed_s = time.monotonic() - t0
        assert closed_s < 1.0, closed_s
        assert not server.http.get(f"/machines/{m['id']}").json()["online"]
        # A revoked agent exits on its own with 77, which its unit does not restart (issue 26 item 4).
        assert agent.stop() == 77

        again = Agent(server, agent.spool, name="doomed")
        try:
            # It says so once and exits 77 at once (issue 26 item 4), rather than retrying forever.
            again.wait_for_line(re.compile(r"MACHINE REVOKED: machine \S+ has been revoked"), 20)
            assert again.proc.wait(10) == 77
            resp = server.http.post(
                "/runs", json={"machine_id": m["id"], "items": [{"kernel": "syscall.getppid"}]}
            )
            assert resp.status_code == 409 and "revoked" in resp.text
        finally:
            again.stop()
    finally:
        agent.stop()


def test_expired_join_token_is_refused_and_said(server: Server, tmp_path: Path) -> None:
    token = join_token(server, tmp_path, "join")
    # Tokens live at least 60 s (the API's floor): age this one in the server's own database.
    with sqlite3.connect(server.data_dir / "ctxbench.db") as db:
        db.execute("UPDATE join_tokens SET expires_at = '2000-01-01 00:00:00.000000'")
    agent = joining(server, tmp_path / "spool", "late", token)
    try:
        agent.wait_for_line(
            re.compile(r"ENROLLMENT REFUSED: join token expired; create a new join token"), 20
        )
        assert agent.proc.wait(10) != 0, "a join token never becomes valid again: the agent exits"
        assert server.http.get("/machines").json() == []
    finally:
        agent.stop()


def test_an_agent_claiming_another_hosts_id_is_refused(server: Server, tmp_path: Path) -> None:
    victim = Agent(server, tmp_path / "victim", name="victim")
    intruder: Agent | None = None
    try:
        m = online_machine(server, "victim")
        # A second host holding the enrollment secret but not the victim's credential, with its id.
        (tmp_path / "intruder").mkdir()
        (tmp_path / "intruder" / "agent-id").write_text(m["id"] + "\n")
        intruder = Agent(server, tmp_path / "intruder", name="intruder")
        intruder.wait_for_line(re.compile(rf"ENROLLMENT REFUSED: machine {m['id']} is already enrolled"), 20)
        machines = server.http.get("/machines").json()
        assert [(x["id"], x["name"], x["online"]) for x in machines] == [(m["id"], "victim", True)]
    finally:
        if intruder is not None:
            intruder.stop()
        assert victim.stop() == 0
