"""A retried Enroll whose first answer was lost: the agent's enrollment key gets it a fresh credential,
once, and only until the machine's first Hello; everything else is still refused as a takeover."""

from __future__ import annotations

import grpc
import httpx
import pytest

from ctxbench_server.errors import CtxbenchError, PermissionDenied, Unauthenticated
from ctxbench_server.fleet import service as fleet
from ctxbench_server.fleet.service import hash_secret
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2_grpc as pb_grpc
from ctxbench_server.machines.service import AgentHello, upsert_from_hello
from ctxbench_server.main import CtxbenchServer
from ctxbench_server.models import JoinToken, Machine, MachineStatus

from .conftest import TOKEN, RolledBack, server_ca
from .fake_agent import FakeAgent

KEY = "a" * 64
MID = "m-retry"


async def enroll(rb: RolledBack, token: str, key: str = KEY, name: str = "host") -> tuple[str, str, bool]:
    async with rb.sessionmaker() as session:
        return await fleet.enroll(
            session,
            token=token,
            agent_token=TOKEN,
            machine_id=MID,
            name=name,
            hostname=name,
            agent_version="test",
            approve_new_hosts=False,
            enrollment_key=key,
        )


async def stored(rb: RolledBack) -> Machine:
    async with rb.sessionmaker() as session:
        machine = await session.get(Machine, MID)
        assert machine is not None
        return machine


async def single_use_token(rb: RolledBack) -> tuple[str, str]:
    async with rb.sessionmaker() as session:
        jt, token = await fleet.create_join_token(session, uses=1, ttl_s=600, created_by="test")
        return jt.id, token


async def test_a_keyed_retry_gets_a_fresh_credential_without_a_second_token_use(
    rolled_back: RolledBack,
) -> None:
    jt_id, token = await single_use_token(rolled_back)
    _, lost, pending = await enroll(rolled_back, token)
    assert not pending
    first = await stored(rolled_back)
    assert first.enroll_key_hash == hash_secret(KEY) and first.token_hash == hash_secret(lost)

    # The single-use token is spent by the first try; the retry still gets a credential.
    mid, credential, pending = await enroll(rolled_back, token, name="renamed")
    assert (mid, pending) == (MID, False) and credential != lost
    again = await stored(rolled_back)
    assert again.token_hash == hash_secret(credential) and again.agent_name == "renamed"
    async with rolled_back.sessionmaker() as session:
        assert (await fleet.machine_for_credential(session, credential)).id == MID
        with pytest.raises(Unauthenticated):  # the lost credential's hash was replaced
            await fleet.machine_for_credential(session, lost)
        jt = await session.get(JoinToken, jt_id)
        assert jt is not None and (jt.uses, jt.uses_left) == (1, 0)


@pytest.mark.parametrize("key", ["b" * 64, ""])
async def test_a_wrong_key_or_none_is_still_a_takeover(rolled_back: RolledBack, key: str) -> None:
    _, credential, _ = await enroll(rolled_back, TOKEN)
    with pytest.raises(PermissionDenied, match="already enrolled"):
        await enroll(rolled_back, TOKEN, key=key)
    assert (await stored(rolled_back)).token_hash == hash_secret(credential)


async def test_the_first_hello_ends_the_key(rolled_back: RolledBack) -> None:
    await enroll(rolled_back, TOKEN)
    async with rolled_back.sessionmaker() as session:
        await upsert_from_hello(session, AgentHello(MID, "host", "host", "test", {}, []))
    assert (await stored(rolled_back)).enroll_key_hash is None
    with pytest.raises(PermissionDenied, match="already enrolled"):
        await enroll(rolled_back, TOKEN)


async def test_a_revoked_machine_is_not_brought_back_by_its_key(rolled_back: RolledBack) -> None:
    await enroll(rolled_back, TOKEN)
    async with rolled_back.sessionmaker() as session:
        await fleet.set_status(session, MID, MachineStatus.REVOKED)
    with pytest.raises(PermissionDenied, match="already enrolled"):
        await enroll(rolled_back, TOKEN)


async def test_an_oversized_key_is_refused_before_anything(rolled_back: RolledBack) -> None:
    with pytest.raises(CtxbenchError, match="enrollment_key") as e:
        await enroll(rolled_back, TOKEN, key="k" * 129)
    assert e.value.grpc_code == grpc.StatusCode.INVALID_ARGUMENT
    async with rolled_back.sessionmaker() as session:
        assert await session.get(Machine, MID) is None


async def test_a_lost_answer_no_longer_locks_the_agent_out(
    server: CtxbenchServer, http: httpx.AsyncClient
) -> None:
    """Over gRPC: the Enroll handler passes the key on, and the Hello on Connect ends it."""
    r = await http.post("/api/v1/join-tokens", json={})
    token = r.json()["token"]
    agent = FakeAgent(f"127.0.0.1:{server.grpc_port}", token=token, root_ca=server_ca(server))
    request = pb.EnrollRequest(
        join_token=token, proposed_machine_id=agent.agent_id, name="h", hostname="h", enrollment_key=KEY
    )
    try:
        async with agent.channel() as ch:
            stub = pb_grpc.AgentServiceStub(ch)
            await stub.Enroll(request, timeout=10)  # its answer lost on the way
            retried = await stub.Enroll(request, timeout=10)
            welcome = await agent.connect(credential=retried.machine_credential)
            assert welcome.machine_id == agent.agent_id
            # The key ended with the Hello: the retry is a plain Enroll again, and its token is spent.
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await stub.Enroll(request, timeout=10)
            assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert "join token already used" in (e.value.details() or "")
            request.enrollment_key = "k" * 129
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await stub.Enroll(request, timeout=10)
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "enrollment_key" in (e.value.details() or "")
    finally:
        await agent.close()
