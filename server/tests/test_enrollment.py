"""Enrollment, credential-bound Connect, revoke, approval and TLS over real gRPC and HTTP sockets."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from cryptography import x509
from sqlalchemy import update

from ctxbench_server.main import CtxbenchServer
from ctxbench_server.models import JoinToken, Machine
from ctxbench_server.models.base import utcnow

from .conftest import ADMIN, TOKEN, eventually, running_server, server_ca, test_settings
from .fake_agent import FakeAgent

MakeAgent = Callable[..., FakeAgent]
GETPPID = [{"kernel": "syscall.getppid", "params": {"threads": 1}}]


async def new_join_token(http: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    r = await http.post("/api/v1/join-tokens", json=body)
    assert r.status_code == 201, r.text
    return dict(r.json())


async def refused(agent: FakeAgent, code: grpc.StatusCode, message: str, **kw: Any) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await agent.connect(**kw)
    assert e.value.code() == code, e.value
    assert message in (e.value.details() or ""), e.value.details()


async def test_join_token_is_single_use_by_default(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    jt = await new_join_token(http)
    assert jt["uses_left"] == 1 and jt["token"].startswith("cxj_")
    assert server.tls is not None and jt["ca_fingerprint"] == server.tls.ca_fingerprint
    # One line: the installer checked against a sha256 before it runs, the token on stdin (issue 26, 5).
    cmd = jt["install_command"]
    assert cmd.startswith(
        f'f=$(mktemp) && curl -fsSL http://127.0.0.1:{server.http_port}/install-agent.sh -o "$f" && echo "'
    )
    assert "\n" not in cmd and '  $f" | sha256sum -c - && ' in cmd
    assert f"printf '%s\\n' {jt['token']} | sh \"$f\" --server 127.0.0.1:{server.grpc_port} " in cmd
    assert "--join-token-file - " in cmd and "--join-token " not in cmd
    assert cmd.endswith(f"--ca-fingerprint {jt['ca_fingerprint']}")
    expires = jt["expires_at"]
    assert expires

    first = make_agent(token=jt["token"], name="first")
    await first.connect()
    second = make_agent(token=jt["token"], name="second")
    await refused(second, grpc.StatusCode.UNAUTHENTICATED, "join token already used")
    [listed] = (await http.get("/api/v1/join-tokens")).json()
    assert listed["id"] == jt["id"] and listed["uses_left"] == 0 and listed["uses"] == 1
    assert "token" not in listed
    [m] = (await http.get("/api/v1/machines")).json()
    assert m["name"] == "first" and m["status"] == "active" and m["agent_version"] == "test"


async def test_join_token_with_n_uses_unknown_revoked_and_expired(
    make_agent: MakeAgent, http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    jt = await new_join_token(http, uses=2, ttl_s=600)
    for k in range(2):
        await make_agent(token=jt["token"], name=f"h{k}").connect()
    await refused(make_agent(token=jt["token"]), grpc.StatusCode.UNAUTHENTICATED, "join token already used")
    await refused(make_agent(token="cxj_nope"), grpc.StatusCode.UNAUTHENTICATED, "unknown join token")

    revoked = await new_join_token(http)
    assert (await http.delete(f"/api/v1/join-tokens/{revoked['id']}")).status_code == 204
    await refused(make_agent(token=revoked["token"]), grpc.StatusCode.UNAUTHENTICATED, "join token revoked")

    expired = await new_join_token(http)
    async with server.sessionmaker() as session:
        await session.execute(
            update(JoinToken)
            .where(JoinToken.id == expired["id"])
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
        await session.commit()
    await refused(make_agent(token=expired["token"]), grpc.StatusCode.UNAUTHENTICATED, "join token expired")
    listed = {t["id"]: t for t in (await http.get("/api/v1/join-tokens")).json()}
    assert listed[expired["id"]]["expired"] is True and listed[revoked["id"]]["revoked"] is True
    assert len((await http.get("/api/v1/machines")).json()) == 2

    for body in ({"uses": 0}, {"ttl_s": 1}):
        assert (await http.post("/api/v1/join-tokens", json=body)).status_code == 422


async def test_no_takeover_of_another_machine(make_agent: MakeAgent) -> None:
    victim = make_agent(name="victim")
    await victim.connect()
    # Another agent proposing the victim's id, with a valid enrollment secret, gets no credential.
    intruder = make_agent(agent_id=victim.agent_id, credentials={}, name="intruder")
    await refused(intruder, grpc.StatusCode.PERMISSION_DENIED, "already enrolled")
    # Its own credential does not open a stream for the victim's id either.
    other = make_agent(name="other")
    await other.connect()
    await other.close()
    assert other.credential is not None
    await refused(
        intruder,
        grpc.StatusCode.PERMISSION_DENIED,
        "credential belongs to another machine",
        credential=other.credential,
    )
    # Nor does the multi-use agent token, or nothing at all.
    await refused(intruder, grpc.StatusCode.UNAUTHENTICATED, "unknown machine credential", credential="x")
    await refused(
        intruder, grpc.StatusCode.UNAUTHENTICATED, "unknown machine credential", credential=intruder.token
    )


async def test_machine_from_before_enrollment_is_claimed_once(
    make_agent: MakeAgent, server: CtxbenchServer, http: httpx.AsyncClient
) -> None:
    async with server.sessionmaker() as session:
        session.add(Machine(id="legacy-1", name="old", hostname="old", facts={}))
        await session.commit()
    agent = make_agent(agent_id="legacy-1", name="old")
    await agent.connect()
    m = (await http.get("/api/v1/machines/legacy-1")).json()
    assert m["online"] and m["status"] == "active"
    await refused(
        make_agent(agent_id="legacy-1", credentials={}), grpc.StatusCode.PERMISSION_DENIED, "already enrolled"
    )


@pytest.mark.timing
async def test_revoke_closes_the_stream_at_once_and_refuses_the_credential(
    make_agent: MakeAgent, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    agent = make_agent(name="doomed")
    await agent.connect()
    t0 = time.monotonic()
    r = await http.post(f"/api/v1/machines/{agent.agent_id}/revoke")
    assert r.status_code == 200 and r.json()["status"] == "revoked"
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await agent.next(wait_s=1.0)
    closed_s = time.monotonic() - t0
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert closed_s < 1.0, closed_s
    print(f"revoke -> stream closed in {closed_s * 1000:.1f} ms")
    assert (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()["online"] is False
    await agent.close()
    # Closing it is what the server meant to do: no error (and no traceback) in its log.
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []

    # Restarted with the same credential: refused. Re-enrolling the id: refused too.
    again = make_agent(agent_id=agent.agent_id)
    await refused(again, grpc.StatusCode.PERMISSION_DENIED, f"machine {agent.agent_id} has been revoked")
    await refused(
        make_agent(agent_id=agent.agent_id, credentials={}),
        grpc.StatusCode.PERMISSION_DENIED,
        "already enrolled",
    )
    r = await http.post("/api/v1/runs", json={"machine_id": agent.agent_id, "items": GETPPID})
    assert r.status_code == 409 and f"machine {agent.agent_id!r} is revoked" in r.text
    assert (await http.post(f"/api/v1/machines/{agent.agent_id}/approve")).status_code == 409
    assert (await http.post("/api/v1/machines/nope/revoke")).status_code == 404


async def test_a_revoked_then_deleted_id_stays_retired_across_a_restart(tmp_path: Path) -> None:
    """Issue 26, item 3: the agent of a revoked and deleted host still holds the shared enrollment
    token; enrolling under the same id is refused, before and after a server restart. A deleted host
    that was never revoked may come back (that is what deleting without revoking means)."""
    settings = test_settings(tmp_path)

    def agent(srv: CtxbenchServer, agent_id: str | None = None) -> FakeAgent:
        return FakeAgent(
            f"127.0.0.1:{srv.grpc_port}", TOKEN, agent_id=agent_id, root_ca=server_ca(srv), credentials={}
        )

    async with running_server(settings) as first:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{first.http_port}", headers=ADMIN) as http:
            doomed, kept = agent(first), agent(first)
            for a in (doomed, kept):
                await a.connect()
                await a.close()
            assert (await http.post(f"/api/v1/machines/{doomed.agent_id}/revoke")).status_code == 200
            await eventually(lambda: _offline(http, doomed.agent_id))
            await eventually(lambda: _offline(http, kept.agent_id))
            for a in (doomed, kept):
                assert (await http.delete(f"/api/v1/machines/{a.agent_id}")).status_code == 204
            retired = "has been revoked and deleted: its id is retired"
            await refused(agent(first, doomed.agent_id), grpc.StatusCode.PERMISSION_DENIED, retired)
            back = agent(first, kept.agent_id)
            await back.connect()
            await back.close()

    second = CtxbenchServer(settings)  # the same database: nothing in memory remembers the revoke
    await second.start()
    try:
        again = agent(second, doomed.agent_id)
        await refused(again, grpc.StatusCode.PERMISSION_DENIED, retired)
        await again.close()
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{second.http_port}", headers=ADMIN) as http:
            assert doomed.agent_id not in {m["id"] for m in (await http.get("/api/v1/machines")).json()}
    finally:
        await second.stop()


async def _offline(http: httpx.AsyncClient, machine_id: str) -> bool:
    return (await http.get(f"/api/v1/machines/{machine_id}")).json()["online"] is False


@pytest.mark.parametrize("settings_overrides", [{"approve_new_hosts": True}])
async def test_approve_mode_holds_new_hosts_until_approved(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    agent = make_agent(name="newbie")
    resp = await agent.enroll()
    assert resp.pending is True
    await agent.connect()
    m = (await http.get(f"/api/v1/machines/{agent.agent_id}")).json()
    assert m["status"] == "pending" and m["online"] is True
    r = await http.post("/api/v1/runs", json={"machine_id": agent.agent_id, "items": GETPPID})
    assert r.status_code == 409
    assert f"machine {agent.agent_id!r} is pending" in r.text and "approves" in r.text
    r = await http.post("/api/v1/runs", json={"machine_ids": [agent.agent_id], "items": GETPPID})
    assert r.status_code == 409
    await agent.expect_nothing()

    r = await http.post(f"/api/v1/machines/{agent.agent_id}/approve")
    assert r.status_code == 200 and r.json()["status"] == "active"
    r = await http.post("/api/v1/runs", json={"machine_id": agent.agent_id, "items": GETPPID})
    assert r.status_code == 201, r.text
    assert (await agent.expect("start_run")).start_run.run_id == r.json()["id"]


def sans(pem: bytes) -> set[str]:
    cert = x509.load_pem_x509_certificate(pem)
    ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {str(v) for v in ext.get_values_for_type(x509.DNSName)} | {
        str(v) for v in ext.get_values_for_type(x509.IPAddress)
    }


async def test_generated_ca_and_server_cert(tmp_path: Path) -> None:
    s = test_settings(tmp_path, public_grpc_address="bench.example.com:443, 10.1.2.3:50051,[fd00::7]:9")
    async with running_server(s) as srv:
        assert srv.tls is not None and srv.tls.ca_path == s.data_dir / "tls" / "ca.pem"
        fp = srv.tls.ca_fingerprint
        assert fp.startswith("sha256:") and len(fp) == 71
    tls = s.data_dir / "tls"
    assert (tls.stat().st_mode & 0o777) == 0o700
    for name in ("ca-key.pem", "server-key.pem"):
        assert ((tls / name).stat().st_mode & 0o777) == 0o600, name
    server_pem = (tls / "server.pem").read_bytes()
    assert sans(server_pem) == {"localhost", "127.0.0.1", "::1", "bench.example.com", "10.1.2.3", "fd00::7"}
    ca = x509.load_pem_x509_certificate((tls / "ca.pem").read_bytes())
    assert ca.not_valid_after_utc - ca.not_valid_before_utc > timedelta(days=3649)
    x509.load_pem_x509_certificate(server_pem).verify_directly_issued_by(ca)

    # Same SANs: nothing regenerated. Other SANs: a new server certificate from the same CA.
    async with running_server(s) as srv:
        assert srv.tls is not None and srv.tls.ca_fingerprint == fp
    assert (tls / "server.pem").read_bytes() == server_pem
    s2 = test_settings(tmp_path, public_grpc_address="other.example.com:443")
    async with running_server(s2) as srv:
        assert srv.tls is not None and srv.tls.ca_fingerprint == fp
        agent = FakeAgent(
            f"127.0.0.1:{srv.grpc_port}",
            "test-token-0123456789abcdef",
            root_ca=(tls / "ca.pem").read_bytes(),
            server_name="other.example.com",
        )
        await agent.connect()
        await agent.close()
    assert sans((tls / "server.pem").read_bytes()) == {"localhost", "127.0.0.1", "::1", "other.example.com"}


async def test_plaintext_only_when_both_sides_opt_out(tmp_path: Path) -> None:
    async with running_server(test_settings(tmp_path / "tls")) as srv:
        plain = FakeAgent(f"127.0.0.1:{srv.grpc_port}", "test-token-0123456789abcdef", root_ca=None)
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await asyncio.wait_for(plain.enroll(), 15)
        assert e.value.code() == grpc.StatusCode.UNAVAILABLE
        assert not (await _machines(srv))
    async with running_server(test_settings(tmp_path / "plain", grpc_tls=False)) as srv:
        assert srv.tls is None and not (tmp_path / "plain" / "data" / "tls").exists()
        plain = FakeAgent(f"127.0.0.1:{srv.grpc_port}", "test-token-0123456789abcdef", root_ca=None)
        await plain.connect()
        await plain.close()


async def _machines(srv: CtxbenchServer) -> list[Any]:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.http_port}", headers=ADMIN) as c:
        r = await c.get("/api/v1/machines")
        r.raise_for_status()
        return list(r.json())


async def test_credentials_never_stored_or_logged_in_clear(
    make_agent: MakeAgent, server: CtxbenchServer, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    jt = await new_join_token(http)
    agent = make_agent(token=jt["token"])
    await agent.connect()
    await refused(make_agent(token=jt["token"]), grpc.StatusCode.UNAUTHENTICATED, "already used")
    cred = agent.credential
    assert cred and cred.startswith("cxm_")
    async with server.sessionmaker() as session:
        m = await session.get(Machine, agent.agent_id)
        assert m is not None and m.token_hash and cred not in m.token_hash and len(m.token_hash) == 64
    text = caplog.text
    assert jt["token"] not in text and cred not in text
