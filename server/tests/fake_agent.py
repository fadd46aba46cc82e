"""A test agent that speaks the Connect protocol over real gRPC, built on the generated stub."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TypeVar

import grpc

from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2_grpc as pb_grpc

T = TypeVar("T")


def fake_catalog() -> list[pb.KernelSpec]:
    return [
        pb.KernelSpec(
            id="syscall.getppid",
            title="getppid",
            family="syscall",
            unit="ns/op",
            description="One getppid() per op.",
            executable="ctxbench-kernels-cpp",
            params=[
                pb.ParamSpec(
                    name="threads",
                    type=pb.PARAM_TYPE_INT,
                    default_value="1",
                    min=1,
                    max=64,
                    sweep=["1", "2", "4"],
                    help="threads",
                ),
                pb.ParamSpec(
                    name="placement",
                    type=pb.PARAM_TYPE_CHOICE,
                    default_value="same_core",
                    choices=["same_core", "cross_core", "unpinned"],
                ),
                pb.ParamSpec(name="ratio", type=pb.PARAM_TYPE_FLOAT, default_value="0.5", min=0, max=1),
                pb.ParamSpec(name="direct", type=pb.PARAM_TYPE_BOOL, default_value="false"),
                pb.ParamSpec(name="dir", type=pb.PARAM_TYPE_STRING, default_value="/tmp"),
            ],
            seed_reference=pb.SeedReference(seed="000", value=49.47, unit="ns/op", machine="Pentium G2030"),
        ),
        pb.KernelSpec(id="ctxsw.pipe", title="pipe ping-pong", family="ctxsw", unit="ns/op"),
    ]


class FakeAgent:
    """Enrolls with `token` (a join token or the agent token) on its first connect, then connects with
    the machine credential it got. `credentials` (agent id -> credential) is shared between the agents
    of one test, so a new FakeAgent with an old id is that agent restarted, not a newcomer.
    `root_ca`: PEM of the CA to trust (TLS); None: plaintext."""

    def __init__(
        self,
        target: str,
        token: str,
        agent_id: str | None = None,
        kernels: Iterable[pb.KernelSpec] | None = None,
        name: str = "fake-host",
        root_ca: bytes | None = None,
        credentials: dict[str, str] | None = None,
        server_name: str = "localhost",
        labels: dict[str, str] | None = None,
    ) -> None:
        self.target = target
        self.token = token
        self.root_ca = root_ca
        self.server_name = server_name
        self.credentials = credentials if credentials is not None else {}
        self.agent_id = agent_id or str(uuid.uuid4())
        self.kernels = list(kernels) if kernels is not None else fake_catalog()
        self.name = name
        self.labels = dict(labels or {})  # its --label flags, sent in every Hello
        self.inbox: asyncio.Queue[pb.ConnectResponse | BaseException] = asyncio.Queue()
        self._out: asyncio.Queue[pb.ConnectRequest | None] = asyncio.Queue()
        self._channel: grpc.aio.Channel | None = None
        self._reader: asyncio.Task[None] | None = None

    async def _requests(self) -> AsyncIterator[pb.ConnectRequest]:
        while (req := await self._out.get()) is not None:
            yield req

    async def _read(self, call: grpc.aio.StreamStreamCall) -> None:
        try:
            async for msg in call:
                await self.inbox.put(msg)
            await self.inbox.put(EOFError("stream ended"))
        except grpc.aio.AioRpcError as e:
            await self.inbox.put(e)

    def channel(self) -> grpc.aio.Channel:
        if self.root_ca is None:
            return grpc.aio.insecure_channel(self.target)
        return grpc.aio.secure_channel(
            self.target,
            grpc.ssl_channel_credentials(root_certificates=self.root_ca),
            options=[("grpc.ssl_target_name_override", self.server_name)],
        )

    @property
    def credential(self) -> str | None:
        return self.credentials.get(self.agent_id)

    async def enroll(self, token: str | None = None) -> pb.EnrollResponse:
        """Enroll over a fresh channel; keeps the credential. Raises grpc.aio.AioRpcError if refused."""
        async with self.channel() as ch:
            resp: pb.EnrollResponse = await pb_grpc.AgentServiceStub(ch).Enroll(
                pb.EnrollRequest(
                    join_token=self.token if token is None else token,
                    proposed_machine_id=self.agent_id,
                    name=self.name,
                    hostname=self.name,
                    agent_version="test",
                ),
                timeout=10,
            )
        self.credentials[resp.machine_id] = resp.machine_credential
        return resp

    async def admitted(self, attempt: Callable[[], Awaitable[T]], tries: int = 20) -> T:
        """`attempt` (enroll, connect) again after each refusal that carries the server's pushback, as the
        real agent does (agents/admission.py): at most `tries` times."""
        for _ in range(tries - 1):
            try:
                return await attempt()
            except grpc.aio.AioRpcError as e:
                pushback = dict(e.trailing_metadata() or ()).get("grpc-retry-pushback-ms")
                if e.code() != grpc.StatusCode.UNAVAILABLE or pushback is None:
                    raise
                await self.close()
                await asyncio.sleep(int(pushback) / 1000)
        return await attempt()

    async def open(self, credential: str | None = None) -> None:
        """Opens a Connect stream, enrolling first when this agent has no credential yet."""
        if credential is None:
            if self.credential is None:
                await self.enroll()
            credential = self.credential
        self._out = asyncio.Queue()
        self.inbox = asyncio.Queue()
        self._channel = self.channel()
        stub = pb_grpc.AgentServiceStub(self._channel)
        call = stub.Connect(self._requests(), metadata=[("authorization", f"Bearer {credential}")])
        self._reader = asyncio.create_task(self._read(call))

    async def connect(
        self,
        current_run_id: str = "",
        pending: Iterable[str] = (),
        credential: str | None = None,
        wait_s: float = 5.0,
        start_run_parts: bool = False,
        batched_acks: bool = False,
    ) -> pb.Welcome:
        await self.open(credential)
        await self.send(
            pb.ConnectRequest(
                hello=pb.Hello(
                    agent_id=self.agent_id,
                    agent_version="test",
                    name=self.name,
                    facts=pb.MachineFacts(
                        hostname=self.name,
                        cpu_model="Test CPU",
                        logical_cpus=4,
                        memory_bytes=2**34,
                        preflight=[
                            pb.PreflightCheck(
                                check="governor", status="ok", detail="scaling governor performance"
                            ),
                            pb.PreflightCheck(
                                check="smt", status="warn", detail="SMT on", fix="echo off > .../smt/control"
                            ),
                        ],
                    ),
                    kernels=self.kernels,
                    pending_result_ids=list(pending),
                    current_run_id=current_run_id,
                    start_run_parts=start_run_parts,
                    batched_acks=batched_acks,
                    labels=self.labels,
                )
            )
        )
        return (await self.expect("welcome", wait_s)).welcome

    async def send(self, req: pb.ConnectRequest) -> None:
        await self._out.put(req)

    async def next(self, wait_s: float = 5.0) -> pb.ConnectResponse:
        got = await asyncio.wait_for(self.inbox.get(), wait_s)
        if isinstance(got, BaseException):
            raise got
        return got

    async def expect(self, kind: str, wait_s: float = 5.0) -> pb.ConnectResponse:
        msg = await self.next(wait_s)
        assert msg.WhichOneof("msg") == kind, f"expected {kind}, got {msg}"
        return msg

    async def expect_nothing(self, within: float = 0.3) -> None:
        with contextlib.suppress(TimeoutError):
            msg = await self.next(within)
            raise AssertionError(f"expected no message, got {msg}")

    async def running(self, run_id: str, item_id: str, index: int = 0) -> None:
        await self.send(
            pb.ConnectRequest(
                run_update=pb.RunUpdate(
                    run_id=run_id, state=pb.ITEM_STATE_RUNNING, item_id=item_id, item_index=index
                )
            )
        )

    def result(
        self,
        run_id: str,
        item: pb.RunItem,
        samples: Iterable[float] = (10.0, 11.0, 12.0, 10.5, 11.5, 10.2, 10.8, 11.1, 10.9, 11.3),
        status: int = pb.RESULT_STATUS_OK,
        result_id: str | None = None,
        error: str = "",
    ) -> pb.ConnectRequest:
        samples = list(samples)
        return pb.ConnectRequest(
            result_report=pb.ResultReport(
                result_id=result_id or str(uuid.uuid4()),
                run_id=run_id,
                item_id=item.item_id,
                status=status,  # type: ignore[arg-type]
                kernel_id=item.kernel_id,
                params=dict(item.params),
                unit="ns/op",
                samples=samples if status == pb.RESULT_STATUS_OK else [],
                iterations=[1000] * len(samples) if status == pb.RESULT_STATUS_OK else [],
                counters={"voluntary_ctxsw_per_op": 0.0},
                harness=pb.Harness(name="google-benchmark", version="1.7.1", min_time_s=0.01),
                exit_code=0 if status == pb.RESULT_STATUS_OK else 1,
                error=error,
            )
        )

    async def report(self, run_id: str, item: pb.RunItem, **kw: object) -> str:
        """Sends one result and waits for its ack. Returns the result id."""
        req = self.result(run_id, item, **kw)  # type: ignore[arg-type]
        await self.send(req)
        ack = await self.expect("result_ack")
        assert ack.result_ack.result_id == req.result_report.result_id
        return req.result_report.result_id

    async def close(self) -> None:
        await self._out.put(None)
        if self._reader is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._reader, 2)
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
