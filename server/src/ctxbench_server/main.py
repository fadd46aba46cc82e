"""`ctxbench-server`: uvicorn (FastAPI) and grpc.aio in one asyncio process."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import re
import signal
import socket
import sys
from collections.abc import Iterator, Sequence

import grpc
import uvicorn
import uvloop
from pydantic import ValidationError

from ctxbench_server.agents.admission import Admission
from ctxbench_server.agents.servicer import AgentService, add_to_server
from ctxbench_server.alerts.watch import AlertWatcher
from ctxbench_server.app import create_app
from ctxbench_server.auth import service as auth_service
from ctxbench_server.cluster import Cluster
from ctxbench_server.compare import latest
from ctxbench_server.config import Settings, load_settings, resolve_admin_token, resolve_agent_token
from ctxbench_server.db import create_engine, create_sessionmaker, migrate
from ctxbench_server.dispatch.dispatcher import Dispatcher
from ctxbench_server.dispatch.hub import AgentHub
from ctxbench_server.fleet.router import FleetInfo
from ctxbench_server.fleet.tls import TlsMaterial, ensure_tls, public_grpc_addresses
from ctxbench_server.ingest.ci import CIFiller
from ctxbench_server.push.budget import StreamBudget
from ctxbench_server.push.changes import Changes
from ctxbench_server.runs.events import RunEvents
from ctxbench_server.schedules.firing import Scheduler
from ctxbench_server.stats import pool as stats_pool
from ctxbench_server.stored import StoredEvents
from ctxbench_server.tasks import cancel_and_wait
from ctxbench_server.webhooks.sender import Sender

log = logging.getLogger("ctxbench_server")
GRPC_GRACE_S = 3.0
HTTP_GRACE_S = 3
GRPC_OPTIONS = [
    # Find dead peers behind NAT even when nobody writes; let agents ping as often as every 10 s.
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_pings_without_data", 0),
    # Agents keep reports far below this (at most 100 000 samples, 3 MiB); gRPC refuses bigger ones.
    ("grpc.max_receive_message_length", 4 * 1024 * 1024),
    # An agent needs one Connect stream (and an Enroll once) per connection.
    ("grpc.max_concurrent_streams", 8),
    # No BDP probe: gRPC answered each idle heartbeat with a PING of its own (and read its ACK) to size
    # the stream's window; 1000 idle agents paid that 100 times a second. A stream's window then stays
    # at gRPC's initial size (at 64 KiB a round trip, a rare 3 MiB report needs ~5 s over a 100 ms link).
    ("grpc.http2.bdp_probe", 0),
]


_LOGIN_PARAM = re.compile(r"(login=)[^&\s\"]+")


def redact_login_codes(record: logging.LogRecord) -> bool:
    """Access log lines (log level debug) show `/?login=<redacted>`: a code is a credential until used."""
    if isinstance(record.args, tuple):
        record.args = tuple(
            _LOGIN_PARAM.sub(r"\1<redacted>", a) if isinstance(a, str) else a for a in record.args
        )
    return True


def announce(line: str) -> None:
    """Lines scripts and tests parse (ports, paths): always on stdout, whatever the log level."""
    print(f"ctxbench-server: {line}", flush=True)


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: this process owns SIGINT/SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class CtxbenchServer:
    """Everything one server process runs. start() returns once both ports listen; stop() undoes it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.http_port = 0
        self.grpc_port = 0
        self.token = ""
        self.admin_token = ""
        self.sign_in_url = ""

    async def start(self) -> None:
        s = self.settings
        s.data_dir.mkdir(parents=True, exist_ok=True)
        logging.getLogger("uvicorn.access").addFilter(redact_login_codes)  # once: filters are a set
        self.token, token_source = resolve_agent_token(s)
        announce(f"data dir {s.data_dir}")
        announce(f"agent token from {token_source}")
        self.admin_token, admin_source = resolve_admin_token(s)
        announce(f"admin token from {admin_source}")
        self.engine = create_engine(s.db_url, s.db_pool_size)
        await migrate(self.engine)
        announce(f"database {self.engine.url.render_as_string(hide_password=True)}")
        self.sessionmaker = create_sessionmaker(self.engine)
        # Agents' own pool: a browser storm that holds every REST connection never delays a heartbeat.
        self.agent_engine = create_engine(s.db_url, s.agent_db_pool_size)
        self.agent_sessionmaker = create_sessionmaker(self.agent_engine, share_writes_with=self.sessionmaker)
        async with self.sessionmaker() as session:
            # Bound to this admin token: a printed link stops working when the token is rotated.
            login_code = await auth_service.create_login_code(session, auth_service.digest(self.admin_token))
        self.hub = AgentHub()
        budget = StreamBudget(s.max_sse_per_client, s.max_sse_total)  # run streams and push streams
        events = RunEvents(self.sessionmaker, budget=budget)
        self.changes = events.changes = Changes(budget, self.sessionmaker)
        self.hub.on_presence = lambda machine_id, online: self.changes.machine(
            machine_id, "online" if online else "offline"
        )
        self.changes.start()
        self.dispatcher = Dispatcher(self.hub, self.agent_sessionmaker, events, self.sessionmaker)
        # "result stored": compare's latest pointers in ingest's transaction, SSE after its commit
        stored = StoredEvents()
        stored.on_transaction(latest.on_results_stored)
        stored.on_commit(events.results_stored)
        # Alerts: the series results land on are checked after the commit, off ingest's path; the
        # webhook deliveries they queue go out from the sender's task (alerts/watch.py, webhooks/sender.py).
        self.webhook_sender = Sender(self.sessionmaker, s)
        self.alerts = AlertWatcher(
            self.sessionmaker,
            s,
            on_queued=self.webhook_sender.wake,
            on_opened=lambda alert_id: self.changes.alert(alert_id, "opened"),
        )
        stored.on_commit(self.alerts.results_stored)

        # The CI of each result's median, after its ack (ingest/ci.py); the watcher checks a series once
        # its results have theirs.
        def cis_filled(run_id: str, result_ids: Sequence[str]) -> None:
            events.results_updated(run_id, result_ids)
            self.alerts.cis_filled(run_id, result_ids)

        self.ci_filler = CIFiller(self.sessionmaker, cis_filled)
        stored.on_commit(self.ci_filler.results_stored)
        if self.engine.dialect.name == "postgresql":
            await self._join_cluster(events)

        await self._start_grpc(stored)

        self.app = create_app(s, self.sessionmaker, self.hub, self.dispatcher, self.admin_token)
        self.app.state.changes = self.changes
        self.app.state.webhook_sender = self.webhook_sender
        self.app.state.fleet = FleetInfo(
            grpc_addresses=public_grpc_addresses(s, self.grpc_port),
            ca_fingerprint=self.tls.ca_fingerprint if self.tls else "",
            tls=self.tls is not None,
        )
        await self._start_http()
        self.sign_in_url = f"{s.base_url(self.http_port)}/?login={login_code}"
        announce(f"sign in at {self.sign_in_url}")
        self._lost_task = asyncio.create_task(self.dispatcher.watch_lost(s.agent_lost_grace_s))
        self._seen_task = asyncio.create_task(self.agent_service.liveness.keep_last_seen())
        self._silent_task = asyncio.create_task(self.agent_service.liveness.watch(self.hub.connections))
        # Every process ticks; the database decides which one fires a slot (schedules/firing.py).
        self.scheduler = Scheduler(self.sessionmaker, s, self.dispatcher, self.changes)
        self._schedules_task = asyncio.create_task(self.scheduler.run())
        self._alerts_task = asyncio.create_task(self.alerts.run())
        self._webhooks_task = asyncio.create_task(self.webhook_sender.run())
        self._ci_task = asyncio.create_task(self.ci_filler.run())
        self.agent_service.admission.is_open = True  # agents' connects are recorded from now on

    async def _start_grpc(self, stored: StoredEvents) -> None:
        s = self.settings
        self.grpc = grpc.aio.server(options=GRPC_OPTIONS)
        self.agent_service = AgentService(
            self.token,
            self.hub,
            self.dispatcher,
            self.agent_sessionmaker,
            s.heartbeat_interval_s,
            approve_new_hosts=s.approve_new_hosts,
            max_streams=s.max_agent_streams,
            hello_timeout_s=s.hello_timeout_s,
            stored=stored,
            admission=Admission(s.connect_concurrency, s.connect_queue, is_open=False),
            progress_interval_ms=s.progress_interval_ms,
        )
        add_to_server(self.agent_service, self.grpc)
        self.tls: TlsMaterial | None = None
        if s.grpc_tls:
            self.tls = ensure_tls(s)
            if self.tls.ca_path is not None:
                announce(f"grpc tls ca {self.tls.ca_path} fingerprint {self.tls.ca_fingerprint}")
            else:
                announce(f"grpc tls cert {s.grpc_tls_cert} fingerprint {self.tls.ca_fingerprint or '-'}")
        else:
            log.warning("gRPC without TLS (grpc_tls=false): only behind a TLS-terminating proxy")
        try:
            addr = _hostport(s.grpc_host, s.grpc_port)
            if self.tls is not None:
                creds = grpc.ssl_server_credentials([(self.tls.key_pem, self.tls.cert_chain_pem)])
                self.grpc_port = self.grpc.add_secure_port(addr, creds)
            else:
                self.grpc_port = self.grpc.add_insecure_port(addr)
        except RuntimeError:
            self.grpc_port = 0
        if self.grpc_port == 0:
            raise OSError(f"cannot listen for gRPC on {_hostport(s.grpc_host, s.grpc_port)} (in use?)")
        await self.grpc.start()
        announce(f"grpc listening on {_hostport(s.grpc_host, self.grpc_port)}")

    async def _start_http(self) -> None:
        s = self.settings
        family = socket.AF_INET6 if ":" in s.http_host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((s.http_host, s.http_port))
        except OSError as e:
            sock.close()
            raise OSError(
                f"cannot listen for HTTP on {_hostport(s.http_host, s.http_port)}: {e.strerror}"
            ) from e
        sock.set_inheritable(True)
        self.http_port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_level=s.log_level,
            access_log=s.log_level == "debug",
            lifespan="off",
            log_config=None,
            timeout_graceful_shutdown=HTTP_GRACE_S,
        )
        self.http = _Uvicorn(config)
        self._http_task = asyncio.create_task(self.http.serve(sockets=[sock]))
        while not self.http.started:
            if self._http_task.done():
                await self._http_task
                raise RuntimeError("the HTTP server stopped during start-up")
            await asyncio.sleep(0.01)
        announce(f"http listening on http://{_hostport(s.http_host, self.http_port)}")

    async def _join_cluster(self, events: RunEvents) -> None:
        """Several server processes may share this PostgreSQL: listen to what the others tell (cluster.py)."""
        self.cluster = cluster = Cluster(self.engine)
        self.hub.cluster = events.cluster = self.changes.cluster = cluster
        changes = self.changes

        def run_changed(run_id: str) -> None:
            events.changed(run_id)
            changes.received_run(run_id)

        cluster.on_run = run_changed
        cluster.on_machine = self.dispatcher.reconcile_soon
        cluster.on_release = self.hub.release_here
        cluster.on_change = changes.received
        cluster.on_gone = lambda machine_id: changes.received(f"machine:offline:{machine_id}")

        def resync() -> None:
            events.resync()
            changes.resync()
            self.dispatcher.resync()

        cluster.on_resync = resync
        await cluster.start()
        announce(f"cluster: listening on PostgreSQL as process {cluster.instance}")

    async def stop(self) -> None:
        for name in (
            "_schedules_task",
            "_alerts_task",
            "_webhooks_task",
            "_ci_task",
            "_lost_task",
            "_seen_task",
            "_silent_task",
        ):
            task = getattr(self, name, None)
            if task is not None:
                await _cancelled(task)
        if hasattr(self, "dispatcher"):
            self.dispatcher.events.close()  # end SSE streams so HTTP can drain
        if hasattr(self, "changes"):
            await self.changes.close()
        if hasattr(self, "http"):
            self.http.should_exit = True
            with contextlib.suppress(Exception):
                await self._http_task
        gone = self.hub.close_all() if hasattr(self, "hub") else []
        if hasattr(self, "grpc"):
            await self.grpc.stop(GRPC_GRACE_S)
        if hasattr(self, "cluster"):
            # Its machines' presence ends first, then the other processes' browsers are told they went
            # offline (each refetches and reads them so, unless an agent is already back on another).
            await self.cluster.let_go()
            for machine_id in gone:
                self.changes.machine(machine_id, "offline")
            await self.cluster.close()
        if hasattr(self, "agent_engine"):
            await self.agent_engine.dispose()
        if hasattr(self, "engine"):
            await self.engine.dispose()
        stats_pool.shutdown()


async def _cancelled(task: asyncio.Task[None]) -> None:
    """Ends a background task (tasks.cancel_and_wait) and logs it if it had failed."""
    if (failed := await cancel_and_wait(task)) is not None:
        log.error("%s had failed before the server stopped", task.get_name(), exc_info=failed)


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def serve(settings: Settings) -> None:
    server = CtxbenchServer(settings)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    try:
        await server.start()
        # What start-up built (modules, routes, compiled statements) lives as long as the process: kept
        # out of the collector's full passes, which otherwise walk it inside a request now and then.
        # (Here, not in start(): a test process starts many servers and must collect them.)
        gc.freeze()
        await stopping.wait()
        announce("stopping")
    finally:
        await server.stop()
    announce("stopped")


def main(argv: list[str] | None = None) -> None:
    try:
        settings = load_settings(argv)
    except ValidationError as e:
        print(f"ctxbench-server: bad settings:\n{e}", file=sys.stderr)
        sys.exit(2)
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        # libuv's event loop: a stream's per-message work is mostly the loop's own (docs/performance.md
        # "Ingest against the floor"); the tests' in-process servers run on asyncio's, the same code
        uvloop.run(serve(settings))
    except (ValueError, OSError) as e:
        print(f"ctxbench-server: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
