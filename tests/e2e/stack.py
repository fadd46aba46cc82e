"""Real processes for end-to-end tests: the built server and agent, on ephemeral loopback ports.

Nothing here is mocked: the server is `.venv/bin/ctxbench-server` with a SQLite file (or, when
CTXBENCH_TEST_DATABASE_URL names a PostgreSQL server, as scripts/with-postgres.sh sets it, a database of
its own there), the agent is `build/bin/ctxbench-agent` running the kernels in `build/kernels/`, and they
talk gRPC over a socket.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
from sqlalchemy import make_url, text
from sqlalchemy.ext.asyncio import create_async_engine

ROOT = Path(__file__).resolve().parents[2]
SERVER_BIN = ROOT / ".venv" / "bin" / "ctxbench-server"
AGENT_BIN = ROOT / "build" / "bin" / "ctxbench-agent"
KERNELS_DIR = ROOT / "build" / "kernels"

_HTTP_RE = re.compile(r"http listening on http://([\d.]+):(\d+)")
_GRPC_RE = re.compile(r"grpc listening on ([\d.]+):(\d+)")
_SIGN_IN_RE = re.compile(r"ctxbench-server: sign in at (\S+)")
# The harness's credential: given to the server as CTXBENCH_ADMIN_TOKEN, sent as authorization: Bearer.
ADMIN_TOKEN = "e2e-admin-token-0123456789abcdef"
_TLS_RE = re.compile(r"grpc tls ca (\S+) fingerprint (sha256:[0-9a-f]{64})")
# A PostgreSQL database (any one of the server's) to run every Server on instead of SQLite.
TEST_DATABASE_URL = os.environ.get("CTXBENCH_TEST_DATABASE_URL", "")


class Process:
    """A child process whose combined output is collected line by line in the background."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.name = name
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self.proc = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def wait_for_line(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        seen = 0
        with self._cond:
            while True:
                for line in self.lines[seen:]:
                    if m := pattern.search(line):
                        return m
                seen = len(self.lines)
                if self.proc.poll() is not None and not self._reader.is_alive():
                    raise RuntimeError(f"{self.name} exited ({self.proc.returncode}):\n{self.output()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{self.name}: no line matching {pattern.pattern!r}:\n{self.output()}")
                self._cond.wait(min(left, 0.5))

    def output(self) -> str:
        with self._cond:
            return "\n".join(self.lines[-200:])

    def signal(self, sig: int) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self, timeout: float = 10) -> int:
        """SIGTERM, then SIGKILL to the whole process group if it does not exit in time."""
        self.signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            return self.proc.wait(5)


def database_for(data_dir: Path) -> str:
    """The PostgreSQL database of one data dir, created empty when first asked for: a server restarted
    on the same data dir finds its data again, as it does in its SQLite file; other servers start empty."""
    url = make_url(TEST_DATABASE_URL)
    name = "ctxbench_" + hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]

    async def create() -> None:
        engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
        try:
            async with engine.connect() as conn:
                q = text("SELECT 1 FROM pg_database WHERE datname = :n")
                if (await conn.execute(q, {"n": name})).scalar() is None:
                    await conn.execute(text(f'CREATE DATABASE "{name}"'))
        finally:
            await engine.dispose()

    asyncio.run(create())
    return url.set(database=name).render_as_string(hide_password=False)


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXBENCH_")}
    env.update(extra)
    return env


class Server(Process):
    """The real server. Ports 0 pick free ones; pass fixed ports to restart on the same address."""

    def __init__(
        self,
        data_dir: Path,
        *,
        http_port: int = 0,
        grpc_port: int = 0,
        grpc_host: str = "127.0.0.1",
        start_s: float = 60.0,
        **settings: str,
    ) -> None:
        settings.setdefault("admin_token", ADMIN_TOKEN)
        if TEST_DATABASE_URL and "database_url" not in settings:
            settings["database_url"] = database_for(data_dir)
        env = base_env(
            CTXBENCH_DATA_DIR=str(data_dir),
            CTXBENCH_HTTP_PORT=str(http_port),
            CTXBENCH_GRPC_HOST=grpc_host,
            CTXBENCH_GRPC_PORT=str(grpc_port),
            CTXBENCH_FRONTEND_DIR=str(ROOT / "build" / "frontend"),
            **{f"CTXBENCH_{k.upper()}": v for k, v in settings.items()},
        )
        self.admin_token = env["CTXBENCH_ADMIN_TOKEN"]
        super().__init__("server", [str(SERVER_BIN)], env, data_dir)
        self.data_dir = data_dir
        http = self.wait_for_line(_HTTP_RE, start_s)
        grpc = self.wait_for_line(_GRPC_RE, 10)
        self.sign_in_url = self.wait_for_line(_SIGN_IN_RE, 10).group(1)
        self.base_url = f"http://{http.group(1)}:{http.group(2)}"
        self.http_port, self.grpc_port = int(http.group(2)), int(grpc.group(2))
        self.grpc_target = f"{grpc.group(1)}:{grpc.group(2)}"
        # The CA the server generated (announced before it listens); None when it serves plaintext.
        tls = next((m for line in self.lines if (m := _TLS_RE.search(line))), None)
        self.ca_file: Path | None = Path(tls.group(1)) if tls else None
        self.ca_fingerprint: str | None = tls.group(2) if tls else None
        self.auth = {"authorization": f"Bearer {self.admin_token}"}
        self.http = httpx.Client(base_url=self.base_url + "/api/v1", headers=self.auth, timeout=10)

    @property
    def token_file(self) -> Path:
        return self.data_dir / "agent-token"

    def stop(self, timeout: float = 10) -> int:
        self.http.close()
        return super().stop(timeout)


class Agent(Process):
    """The real agent. `target` overrides the server address (e.g. over a veth link) and `wrap` prefixes
    the command (e.g. `ip netns exec NS`, which execs, so signals reach the agent itself).

    It enrolls with the server's agent token (or `join_token_file`) and trusts the server's CA file,
    or pins `ca_fingerprint`; against a plaintext server it runs with --insecure."""

    def __init__(
        self,
        server: Server,
        spool: Path,
        name: str = "e2e-agent",
        token_file: Path | None = None,
        *,
        target: str | None = None,
        kernels: Path = KERNELS_DIR,
        wrap: list[str] | None = None,
        join_token_file: Path | None = None,
        ca_fingerprint: str | None = None,
        extra: list[str] | None = None,
        binary: Path = AGENT_BIN,
    ) -> None:
        if join_token_file is not None:
            token_args = ["--join-token-file", str(join_token_file)]
        else:
            token_args = ["--token-file", str(token_file or server.token_file)]
        if ca_fingerprint is not None:
            tls_args = ["--ca-fingerprint", ca_fingerprint]
        elif server.ca_file is not None:
            tls_args = ["--ca-file", str(server.ca_file)]
        else:
            tls_args = ["--insecure"]
        argv = [
            *(wrap or []),
            str(binary),
            "--server",
            target or server.grpc_target,
            *token_args,
            *tls_args,
            *(extra or []),
            "--kernels",
            str(kernels),
            "--spool",
            str(spool),
            "--name",
            name,
        ]
        super().__init__(f"agent {name}", argv, base_env(), spool.parent)
        self.spool = spool
        self.agent_id_file = spool / "agent-id"


def wait_until(what: str, check: Callable[[], Any], timeout: float, interval: float = 0.1) -> Any:
    """Polls check() until it returns something truthy; the test's own wait, not the product's."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout} s waiting for {what}; last: {last!r}")


TERMINAL = {"succeeded", "failed", "cancelled"}
P = TypeVar("P", bound=Process)


@contextmanager
def running(proc: P) -> Iterator[P]:
    """proc for the block, then stopped; it must stop cleanly (exit 0), or the test fails with its output."""
    try:
        yield proc
    finally:
        rc = proc.stop()
        assert rc == 0, f"{proc.name} did not stop cleanly ({rc}):\n{proc.output()}"


def online_machine(server: Server, name: str | None = None, timeout: float = 30) -> dict:
    """The first online machine (the one called name, when given), once there is one."""

    def find() -> dict | None:
        machines = server.http.get("/machines").json()
        return next((m for m in machines if m["online"] and name in (None, m["name"])), None)

    return wait_until(f"machine {name or '(any)'} online", find, timeout)


def post_run(server: Server, machine_id: str, items: list[dict], **extra: object) -> dict:
    """POST /runs; the created run (a refusal fails the test with the server's answer)."""
    r = server.http.post("/runs", json={"machine_id": machine_id, "items": items, **extra})
    assert r.status_code == 201, r.text
    return r.json()


def wait_run(server: Server, run_id: str, timeout: float = 60, interval: float = 0.1) -> dict:
    """The run, once it is succeeded, failed or cancelled."""

    def done() -> dict | None:
        run = server.http.get(f"/runs/{run_id}").json()
        return run if run["status"] in TERMINAL else None

    return wait_until(f"run {run_id} to finish", done, timeout, interval)
