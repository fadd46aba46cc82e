"""The Connect stream: authenticate, Hello, then reports in and work out, concurrently."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import grpc
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server import __version__
from ctxbench_server.agents import reports_wire, wire
from ctxbench_server.agents.admission import Admission, Busy, refuse
from ctxbench_server.agents.liveness import Liveness
from ctxbench_server.agents.wire import add_to_server as add_to_server
from ctxbench_server.db import writing
from ctxbench_server.dispatch.commands import CancelRun, StartRun
from ctxbench_server.dispatch.dispatcher import Dispatcher
from ctxbench_server.dispatch.hub import AgentConnection, AgentHub
from ctxbench_server.errors import CtxbenchError, PermissionDenied, Unavailable
from ctxbench_server.fleet import service as fleet
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2 as pb
from ctxbench_server.gen.ctxbench.agent.v1 import agent_service_pb2_grpc as pb_grpc
from ctxbench_server.ingest import service as ingest
from ctxbench_server.ingest.messages import Message, Refused, Report
from ctxbench_server.ingest.writer import IngestWriter
from ctxbench_server.machines import service as machines
from ctxbench_server.machines.service import MAX_MACHINE_ID
from ctxbench_server.stored import StoredEvents

log = logging.getLogger(__name__)

# Messages of one stream handled together: its reports and updates in one transaction.
MAX_BATCH = 256


class StreamState:
    """What one stream's handler knows without asking the database."""

    def __init__(self, may_run: bool) -> None:
        # False while no StartRun went down this stream since its agent last finished or was told to
        # cancel a run (and its Hello named none): its idle heartbeats then need no look at its runs.
        self.may_run = may_run


class AgentService(pb_grpc.AgentServiceServicer):
    def __init__(
        self,
        token: str,
        hub: AgentHub,
        dispatcher: Dispatcher[Any],
        sessionmaker: async_sessionmaker[AsyncSession],
        heartbeat_interval_s: int,
        approve_new_hosts: bool = False,
        max_streams: int = 2000,
        hello_timeout_s: float = 10.0,
        *,
        stored: StoredEvents,
        admission: Admission,
        progress_interval_ms: int = 0,
    ) -> None:
        # Enrollments and Hellos are written a few at a time; the rest are told when to come back.
        self.admission = admission
        self.stored = stored  # told what ingest stored (compare's latest pointers, SSE)
        self.max_streams = max_streams
        self.hello_timeout_s = hello_timeout_s
        self.open_streams = 0
        self._agent_token = token  # the multi-use enrollment secret
        self.approve_new_hosts = approve_new_hosts
        self.hub = hub
        self.dispatcher = dispatcher
        self.sessionmaker = sessionmaker
        self.heartbeat_interval_s = heartbeat_interval_s
        self.progress_interval_ms = progress_interval_ms  # Welcome's: how often agents send progress
        self.writer = IngestWriter(sessionmaker, stored)  # every stream's batches, group-committed
        self.liveness = Liveness(sessionmaker, heartbeat_interval_s)

    async def Enroll(self, request: pb.EnrollRequest, context: grpc.aio.ServicerContext) -> pb.EnrollResponse:
        try:
            async with self.admission.admit(context.time_remaining()), writing(self.sessionmaker) as session:
                machine_id, credential, pending = await fleet.enroll(
                    session,
                    token=request.join_token,
                    agent_token=self._agent_token,
                    machine_id=request.proposed_machine_id,
                    name=request.name,
                    hostname=request.hostname,
                    agent_version=request.agent_version,
                    approve_new_hosts=self.approve_new_hosts,
                    enrollment_key=request.enrollment_key,
                )
        except Busy as busy:
            await refuse(context, busy, "enrollments")
        except CtxbenchError as e:
            # Never log the token: only why it was refused.
            log.warning("enrollment from %s refused: %s", context.peer(), e.detail)
            await context.abort(e.grpc_code, str(e.detail))
        except Exception:  # never a database's words to an agent
            log.exception("enrollment from %s failed", context.peer())
            await context.abort(
                grpc.StatusCode.UNAVAILABLE, "the server could not enroll this agent now; retry"
            )
        log.info(
            "machine %s (%s, %s) enrolled from %s%s",
            machine_id,
            request.name or request.hostname,
            request.agent_version,
            context.peer(),
            " (pending approval)" if pending else "",
        )
        return pb.EnrollResponse(machine_id=machine_id, machine_credential=credential, pending=pending)

    async def Connect(
        self, request_iterator: AsyncIterator[pb.ConnectRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ConnectResponse]:
        if self.open_streams >= self.max_streams:
            log.warning("agent stream from %s refused: %d streams open", context.peer(), self.open_streams)
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{self.max_streams} agent streams open (CTXBENCH_MAX_AGENT_STREAMS); retry later",
            )
            return
        self.open_streams += 1
        try:
            async for msg in self._connect(request_iterator, context):
                yield msg
        except grpc.aio.AbortError:
            raise
        except Exception:  # never a database's words to an agent (gRPC would send them as UNKNOWN)
            log.exception("agent stream from %s failed", context.peer())
            await context.abort(
                grpc.StatusCode.UNAVAILABLE, "the server failed serving this stream; reconnect"
            )
        finally:
            self.open_streams -= 1

    async def _hello(
        self, request_iterator: AsyncIterator[pb.ConnectRequest], context: grpc.aio.ServicerContext
    ) -> pb.Hello | None:
        """The stream's credential and its first message, a Hello of that machine; None when the stream
        ended or was refused (aborted with the reason)."""
        try:
            async with self.sessionmaker() as session:
                machine = await fleet.machine_for_credential(session, wire.bearer(context))
                machine_id = machine.id
            try:
                async with asyncio.timeout(self.hello_timeout_s):
                    first = await anext(aiter(request_iterator), None)
            except TimeoutError:
                log.warning(
                    "agent stream from %s: no Hello within %.0f s", context.peer(), self.hello_timeout_s
                )
                await context.abort(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    f"no Hello within {self.hello_timeout_s:.0f} s (CTXBENCH_HELLO_TIMEOUT_S)",
                )  # (abort raises)
            if first is None:
                return None
            if first.WhichOneof("msg") != "hello":
                raise CtxbenchError("the first message on a Connect stream must be Hello")
            hello = first.hello
            if not hello.agent_id or len(hello.agent_id) > MAX_MACHINE_ID or "\x00" in hello.agent_id:
                raise CtxbenchError(f"Hello.agent_id must be 1..{MAX_MACHINE_ID} characters, without NUL")
            if hello.agent_id != machine_id:
                raise PermissionDenied("credential belongs to another machine")
            if self.hub.is_revoked(machine_id):
                raise PermissionDenied(f"machine {machine_id} has been revoked")
        except CtxbenchError as e:
            log.warning("agent stream from %s refused: %s", context.peer(), e.detail)
            await context.abort(e.grpc_code, str(e.detail))
            return None
        return hello

    async def _connect(
        self, request_iterator: AsyncIterator[pb.ConnectRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ConnectResponse]:
        try:
            self.admission.until_open()  # before the credential's look-up: a start-up costs nothing
        except Busy as busy:
            log.info("agent stream from %s deferred: the server is starting", context.peer())
            await refuse(context, busy, "Hellos")
            return
        hello = await self._hello(request_iterator, context)
        if hello is None:
            return
        machine_id = hello.agent_id
        try:
            async with (
                self.admission.admit(),
                self.hub.locks[machine_id],
                writing(self.sessionmaker) as session,
            ):
                await machines.upsert_from_hello(session, wire.agent_hello(hello))
        except Busy as busy:
            log.info("agent %s: Hello deferred (%d waiting)", machine_id, self.admission.waiting)
            await refuse(context, busy, "Hellos")
            return
        except Exception:  # never a database's words to an agent: it retries with backoff
            log.exception("agent %s: could not record its Hello", machine_id)
            await context.abort(
                grpc.StatusCode.UNAVAILABLE, "the server could not record this Hello now; retry"
            )
            return
        conn = AgentConnection(hello.agent_id, context.peer())
        conn.start_run_parts = hello.start_run_parts
        conn.batched_acks = hello.batched_acks
        self.hub.register(conn)
        log.info(
            "agent %s (%s, %s) connected from %s with %d kernels",
            conn.machine_id,
            hello.name,
            hello.agent_version,
            conn.peer,
            len(hello.kernels),
        )
        conn.send(
            pb.ConnectResponse(
                welcome=pb.Welcome(
                    machine_id=conn.machine_id,
                    heartbeat_interval_s=self.heartbeat_interval_s,
                    server_version=__version__,
                    progress_interval_ms=self.progress_interval_ms,
                )
            )
        )
        state = StreamState(may_run=bool(hello.current_run_id))
        reader = asyncio.create_task(self._read(request_iterator, conn, state))
        try:
            await self.dispatcher.on_hello(conn, hello.current_run_id)
            while (msg := await conn.outbox.get()) is not None:
                if isinstance(msg, StartRun):
                    state.may_run = True
                elif isinstance(msg, CancelRun):
                    state.may_run = False
                yield wire.response(msg)
            if conn.abort_with is not None:
                await context.abort(conn.abort_with.grpc_code, str(conn.abort_with.detail))
        finally:
            reader.cancel()
            self.hub.unregister(conn)
            try:
                async with writing(self.sessionmaker) as session:
                    await machines.touch(session, conn.machine_id)
            except Exception:  # the process may be shutting down
                log.debug("could not record last_seen for %s", conn.machine_id, exc_info=True)
            log.info("agent %s disconnected", conn.machine_id)

    async def _pump(
        self,
        request_iterator: AsyncIterator[pb.ConnectRequest],
        conn: AgentConnection,
        state: StreamState,
        inbox: asyncio.Queue[pb.ConnectRequest | None],
    ) -> None:
        """Reads the agent's messages into `inbox` (bounded: a full one stops reading, and gRPC's flow
        control holds the agent back), then None. Liveness is kept in memory (agents.liveness); a
        heartbeat that has nothing else to say (see _handle) ends here, without waking the reader."""
        try:
            async for req in request_iterator:
                if conn.closed:
                    break
                self.liveness.heard(conn)
                hb = req.heartbeat if req.WhichOneof("msg") == "heartbeat" else None
                if hb is None or state.may_run or hb.current_run_id or not inbox.empty():
                    if inbox.full():  # (else what put does, without a coroutine a message)
                        await inbox.put(req)
                    else:
                        inbox.put_nowait(req)
        finally:
            with contextlib.suppress(asyncio.QueueFull):  # full: the handler sees the pump done instead
                inbox.put_nowait(None)

    async def _read(
        self, request_iterator: AsyncIterator[pb.ConnectRequest], conn: AgentConnection, state: StreamState
    ) -> None:
        """Handles what the agent sends in batches: every message ready when the last batch is done
        (at most MAX_BATCH) is handled at once, its reports and updates in one transaction."""
        inbox: asyncio.Queue[pb.ConnectRequest | None] = asyncio.Queue(MAX_BATCH)
        pump = asyncio.create_task(self._pump(request_iterator, conn, state, inbox))
        try:
            ended = False
            while not ended and not conn.closed:
                if pump.done() and inbox.empty():
                    break
                batch: list[pb.ConnectRequest] = []
                req = await inbox.get()
                while req is not None:
                    batch.append(req)
                    if len(batch) == MAX_BATCH or inbox.empty():
                        break
                    req = inbox.get_nowait()
                ended = req is None
                if batch and not conn.closed:
                    await self._handle(conn, state, batch)
            if pump.done():
                pump.result()  # the read failed: raise why; else the agent ended its side
        except asyncio.CancelledError:
            raise
        except Exception:  # never a database's words to an agent: it reconnects with backoff
            if conn.closed:  # this side ended the stream (revoked, silent, shutdown): the read just stops
                log.debug("agent %s: read ended after the stream was closed", conn.machine_id, exc_info=True)
                return
            log.exception("agent %s: stream failed", conn.machine_id)
            conn.abort_with = Unavailable("the server failed handling a message from this agent; reconnect")
        finally:
            pump.cancel()
            if pump.done() and not pump.cancelled():
                pump.exception()  # retrieved: a read that failed after the stream was closed is no news
            conn.close()

    async def _handle(
        self, conn: AgentConnection, state: StreamState, batch: list[pb.ConnectRequest]
    ) -> None:
        """In order: consecutive reports and updates are stored together (each read into the domain's
        message once, here); heartbeats between them."""
        group: list[Message] = []
        for req in batch:
            kind = req.WhichOneof("msg")
            if kind == "result_report":
                group.append(reports_wire.report(req.result_report))
                continue
            if kind == "run_update":
                group.append(reports_wire.update(req.run_update))
                continue
            if kind == "run_progress":  # RunUpdates coalesced by the agent: each stored as one alone
                try:
                    group.extend(reports_wire.progress_updates(req.run_progress))
                except Refused as bad:
                    log.warning("agent %s: rejected run_progress: %s", conn.machine_id, bad.message)
                    conn.send(pb.ConnectResponse(reject=reports_wire.reject(bad)))
                continue
            if group:
                await self._store(conn, state, group)
                group = []
            if kind == "heartbeat" and (state.may_run or req.heartbeat.current_run_id):
                await self.dispatcher.on_heartbeat(
                    conn, req.heartbeat.current_run_id, self.heartbeat_interval_s
                )
            elif kind == "hello":
                log.warning("agent %s: a second Hello on one stream is ignored", conn.machine_id)
        if group:
            await self._store(conn, state, group)

    async def _store(self, conn: AgentConnection, state: StreamState, msgs: list[Message]) -> None:
        """Reports and updates stored in one transaction (with other streams' ready batches: the group
        commit of ingest/writer.py), under the machine's lock (like cancel, retry and dispatch: no
        change of a run is lost to another one made between a read and a write); then each gets its
        answer: an Ack or a Reject per report. A report the database cannot take is rejected alone."""
        async with self.hub.locks[conn.machine_id]:
            done = await self.writer.store(conn.machine_id, msgs)
        await self._answer(conn, state, msgs, done)

    async def _answer(
        self, conn: AgentConnection, state: StreamState, msgs: list[Message], done: ingest.Recorded
    ) -> None:
        """Each report's Ack or Reject, in order (to an agent that reads batched acks: the Rejects, then
        one Ack for all the rest); browsers told about each run an update or a Reject touched once
        (stored results tell them themselves: the "result stored" event); the next run started if one
        finished."""
        run_ids: dict[str, None] = {}
        acked: list[str] = []
        for msg, outcome in zip(msgs, done.outcomes, strict=True):
            if isinstance(outcome, Refused):
                log.warning(
                    "agent %s: rejected %s (%s): %s",
                    conn.machine_id,
                    "result_report" if isinstance(msg, Report) else "run_update",
                    outcome.kind,
                    outcome.message,
                )
                conn.send(pb.ConnectResponse(reject=reports_wire.reject(outcome)))
                if outcome.run_id:
                    run_ids[outcome.run_id] = None
                continue
            if isinstance(msg, Report):
                if outcome is not None and outcome.ack:
                    if conn.batched_acks:
                        acked.append(msg.result_id)
                    else:
                        conn.send(pb.ConnectResponse(result_ack=pb.ResultAck(result_id=msg.result_id)))
                continue
            run_ids[msg.run_id] = None
        if acked:  # one message (a batch holds at most MAX_BATCH reports)
            ack = pb.ResultAck(result_id=acked[0], more_result_ids=acked[1:])
            conn.send(pb.ConnectResponse(result_ack=ack))
        for run_id in run_ids:
            self.dispatcher.events.notify(run_id)
        if done.finished:
            for run_id in done.finished:
                log.info("run %s finished", run_id)
            state.may_run = False  # the next StartRun (kick's, if any) sets it again
            await self.dispatcher.kick(conn.machine_id)
