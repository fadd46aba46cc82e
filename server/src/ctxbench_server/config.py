"""Settings: one pydantic-settings class, fed by CLI flags > CTXBENCH_* environment > defaults."""

from __future__ import annotations

import argparse
import os
import re
import secrets
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Tokens nobody should run a reachable server with. Refused unless env == "dev".
PLACEHOLDER_TOKENS = frozenset(
    {"changeme", "change-me", "change_me", "secret", "token", "password", "admin", "test", "dev", "xxx"}
)
MIN_TOKEN_LENGTH = 16
MIN_SCHEDULE_INTERVAL_S = 60


def is_placeholder_token(token: str) -> bool:
    return token.strip().lower() in PLACEHOLDER_TOKENS or len(token.strip()) < MIN_TOKEN_LENGTH


class Settings(BaseSettings):
    """Every knob of the server. Each field `x` is also the env var `CTXBENCH_X` and the flag `--x`."""

    model_config = SettingsConfigDict(env_prefix="CTXBENCH_", extra="ignore")

    http_host: str = "127.0.0.1"
    http_port: int = Field(default=8080, ge=0, le=65535)
    grpc_host: str = "127.0.0.1"
    grpc_port: int = Field(default=50051, ge=0, le=65535)
    data_dir: Path = Path("./data")
    # Default: sqlite+aiosqlite:///<data_dir>/ctxbench.db. postgresql+asyncpg://... switches to PostgreSQL.
    database_url: str | None = None
    # Shared agent token. Unset: read <data_dir>/agent-token, or generate one there (mode 0600).
    agent_token: SecretStr | None = None
    # The admin's API credential (authorization: Bearer). Unset: <data_dir>/admin-token, as agent_token.
    admin_token: SecretStr | None = None
    # Reads (GET) without a credential; writes always need one.
    public_read: bool = False
    # Host header names served (comma list, port ignored, "*" = any). Unset: http_host, localhost,
    # 127.0.0.1 and ::1. The host of public_url is always served.
    allowed_hosts: str | None = None
    # Base URL people reach the server by (share links, the sign-in link), e.g. https://bench.example.
    public_url: str | None = None
    # How long a browser session (sign-in) lasts.
    session_ttl_s: int = Field(default=7 * 86400, ge=60, le=366 * 86400)
    # Failed sign-ins (a wrong token or login code traded for a session) per client address: this many
    # at once, then one more every sign_in_refill_s seconds; past that 429 with Retry-After.
    sign_in_burst: int = Field(default=10, ge=1, le=100_000)
    sign_in_refill_s: float = Field(default=6.0, gt=0, le=86400)
    frontend_dir: Path = Path("./build/frontend")
    # The agent bundles, SHA256SUMS and install-agent.sh (`make dist`), served open at /dist/ and
    # /install-agent.sh.
    dist_dir: Path = Path("./build/dist")
    heartbeat_interval_s: int = Field(default=10, ge=1, le=3600)
    # How often, at most, an agent sends its items' launch progress (Welcome.progress_interval_ms): it
    # coalesces the RUNNING updates of an interval into one RunProgress. 0: each update on its own.
    progress_interval_ms: int = Field(default=1000, ge=0, le=60_000)
    # Lower bound of RunItem.timeout_s (per launch on the agent); longer runs get 20 x repetitions x
    # min_time_s + 60 s.
    item_timeout_s: float = Field(default=120.0, gt=0, le=86400)
    # A running run whose machine has been offline this long fails with error "agent lost".
    agent_lost_grace_s: float = Field(default=600.0, gt=0, le=30 * 86400)
    # gRPC over TLS (default). Without grpc_tls_cert/_key the server generates a CA and a server
    # certificate into <data_dir>/tls/ on first start. false only behind a TLS-terminating proxy
    # (agents must then say --insecure too).
    grpc_tls: bool = True
    grpc_tls_cert: Path | None = None
    grpc_tls_key: Path | None = None
    # Address(es) agents dial, host:port[,host:port...]: SANs of the generated server certificate and
    # the --server of the install command. Default: grpc_host:grpc_port.
    public_grpc_address: str = ""
    # New hosts wait as "pending" (connected, no runs) until an admin approves them.
    approve_new_hosts: bool = False
    # Budgets (docs/operations.md "Budgets"): a request over one is refused before any heavy work.
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024, le=1024**3)
    # Estimated kernel time of one run: items x repetitions x min time (the kernel's default 0.2 s when
    # unset), over the whole run; a batch holds at most max_batch_items items over all its machines.
    max_run_kernel_s: float = Field(default=24 * 3600, gt=0, le=30 * 86400)
    max_batch_items: int = Field(default=20_000, ge=1, le=1_000_000)
    # Agent streams: open Connect streams in all (more get RESOURCE_EXHAUSTED), and how long a new
    # stream may take to send its Hello (then DEADLINE_EXCEEDED).
    max_agent_streams: int = Field(default=2000, ge=1, le=100_000)
    hello_timeout_s: float = Field(default=10.0, gt=0, le=600)
    # Agents' connects (an Enroll, a Hello's machine and catalog) recorded at once, and waiting their turn;
    # one more is refused with UNAVAILABLE and a turn of its own to come back at (gRPC's pushback trailer).
    # A fleet reconnecting after a restart then arrives at the pace the database records it.
    connect_concurrency: int = Field(default=4, ge=1, le=1000)
    connect_queue: int = Field(default=256, ge=0, le=100_000)
    # Database connections (pool size; twice as many more open under load): REST and event streams use one
    # pool, agent streams (Hello, heartbeats, reports, dispatch) their own, so browsers never starve agents.
    db_pool_size: int = Field(default=5, ge=1, le=1000)
    agent_db_pool_size: int = Field(default=5, ge=1, le=1000)
    # Server-Sent Event streams (GET /runs/{id}/events) open at once: per client (its credential, else
    # its address; more get 429) and in all (more get 503). A batch page follows each of its runs.
    max_sse_per_client: int = Field(default=200, ge=1, le=100_000)
    max_sse_total: int = Field(default=2000, ge=1, le=1_000_000)
    # Schedules (docs/operations.md "Schedules"): how often each server process looks for due ones, how
    # many may exist, and the shortest interval_s a schedule may have (under 60 s only with env=dev: the
    # multi-server test fires every few seconds).
    schedule_tick_s: float = Field(default=5.0, gt=0, le=300)
    max_schedules: int = Field(default=200, ge=0, le=100_000)
    schedule_min_interval_s: int = Field(default=60, ge=1, le=86400)
    # Alerts (docs/architecture.md "Alerts"): a series is checked this long after a result lands on it
    # (the rest of its run lands meanwhile: one check), and a step older than alert_max_age_s (0: any
    # age) opens no alert (a first start does not raise every old step again).
    alert_settle_s: float = Field(default=2.0, ge=0, le=3600)
    alert_max_age_s: int = Field(default=14 * 86400, ge=0, le=366 * 86400)
    # Webhooks (docs/architecture.md "Webhooks"): how many may exist, how long one POST may take, how
    # many attempts a delivery gets and the backoff between them (doubling from webhook_backoff_s, at
    # most webhook_backoff_cap_s), and how often each server process looks for due deliveries.
    max_webhooks: int = Field(default=20, ge=0, le=1000)
    webhook_timeout_s: float = Field(default=5.0, gt=0, le=60)
    webhook_max_attempts: int = Field(default=8, ge=1, le=50)
    webhook_backoff_s: float = Field(default=10.0, gt=0, le=86400)
    webhook_backoff_cap_s: float = Field(default=3600.0, gt=0, le=7 * 86400)
    webhook_tick_s: float = Field(default=5.0, gt=0, le=300)
    env: Literal["dev", "prod"] = "prod"
    log_level: Literal["debug", "info", "warning", "error"] = "info"

    @field_validator(
        "agent_token",
        "admin_token",
        "database_url",
        "allowed_hosts",
        "grpc_tls_cert",
        "grpc_tls_key",
        "public_url",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v

    @model_validator(mode="after")
    def _derive(self) -> Settings:
        self.data_dir = self.data_dir.expanduser().resolve()
        self.frontend_dir = self.frontend_dir.expanduser().resolve()
        self.dist_dir = self.dist_dir.expanduser().resolve()
        if not self.database_url:
            self.database_url = f"sqlite+aiosqlite:///{self.data_dir / 'ctxbench.db'}"
        if (self.grpc_tls_cert is None) != (self.grpc_tls_key is None):
            raise ValueError("give both grpc_tls_cert and grpc_tls_key, or neither")
        if self.agent_token is not None:
            check_token(self.agent_token.get_secret_value(), self.env, "CTXBENCH_AGENT_TOKEN")
        if self.admin_token is not None:
            check_token(self.admin_token.get_secret_value(), self.env, "CTXBENCH_ADMIN_TOKEN")
        if self.connect_concurrency >= 3 * self.agent_db_pool_size:
            # on PostgreSQL each connect being recorded holds one of the agents' pool (docs/operations.md)
            raise ValueError(
                f"CTXBENCH_CONNECT_CONCURRENCY ({self.connect_concurrency}) must stay under the agents' pool "
                f"(CTXBENCH_AGENT_DB_POOL_SIZE {self.agent_db_pool_size}, 3x under load): heartbeats, "
                "reports and dispatch need connections too"
            )
        if self.schedule_min_interval_s < MIN_SCHEDULE_INTERVAL_S and self.env != "dev":
            raise ValueError(
                f"CTXBENCH_SCHEDULE_MIN_INTERVAL_S under {MIN_SCHEDULE_INTERVAL_S} only with "
                "CTXBENCH_ENV=dev (tests): a schedule that fires this often leaves a machine no idle time"
            )
        if self.public_url is not None:
            url = urlsplit(self.public_url)
            if url.scheme not in ("http", "https") or not url.hostname:
                raise ValueError("CTXBENCH_PUBLIC_URL: want http(s)://host[:port][/path]")
            self.public_url = self.public_url.rstrip("/")
        return self

    @property
    def db_url(self) -> str:
        assert self.database_url is not None  # set by _derive
        return self.database_url

    @property
    def tls_dir(self) -> Path:
        return self.data_dir / "tls"

    @property
    def token_file(self) -> Path:
        return self.data_dir / "agent-token"

    @property
    def admin_token_file(self) -> Path:
        return self.data_dir / "admin-token"

    def base_url(self, port: int | None = None) -> str:
        """public_url, else the bound address (loopback when bound to every interface)."""
        if self.public_url:
            return self.public_url
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.http_host, self.http_host)
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.http_port if port is None else port}"

    def served_hosts(self) -> frozenset[str]:
        """Host header names (lower case, no port) this server answers; "*" in it = any."""
        if self.allowed_hosts:
            hosts = {host_name(h) for h in self.allowed_hosts.split(",") if h.strip()}
        else:
            hosts = {host_name(self.http_host), "localhost", "127.0.0.1", "::1"}
        if self.public_url:
            hosts.add((urlsplit(self.public_url).hostname or "").lower())
        return frozenset(hosts)


# RFC 9110 Host: a name or IPv4 address, or an IPv6 address in brackets, then an optional :port. Nothing
# else: `127.0.0.1:9180@attacker.example` is not a host with a port, whatever is before its last colon.
_HOST = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9._-]+))(?::[0-9]{1,5})?")


def host_name(host: str) -> str:
    """A Host header or allowed_hosts entry without its port, lower case: `[::1]:80` -> `::1`; a bare
    IPv6 address (an allowed_hosts entry) as it is; "" for anything that is not a host (never served)."""
    host = host.strip().lower()
    if host == "*":  # allowed_hosts: any
        return host
    m = _HOST.fullmatch(host)
    if m is None:
        return host if re.fullmatch(r"[0-9a-f:.]+", host) and host.count(":") >= 2 else ""
    return m.group("v6") or m.group("name")


def check_token(token: str, env: str, source: str) -> None:
    if env != "dev" and is_placeholder_token(token):
        raise ValueError(
            f"{source}: refusing a placeholder or short token (fewer than {MIN_TOKEN_LENGTH} "
            "characters or a well-known value) outside env=dev; unset it to have one generated"
        )


def resolve_agent_token(settings: Settings) -> tuple[str, str]:
    """Returns (token, where it came from). Creates <data_dir>/agent-token (0600) on first start."""
    return _resolve_secret(settings, settings.agent_token, "CTXBENCH_AGENT_TOKEN", settings.token_file)


def resolve_admin_token(settings: Settings) -> tuple[str, str]:
    """Returns (token, where it came from). Creates <data_dir>/admin-token (0600) on first start."""
    return _resolve_secret(settings, settings.admin_token, "CTXBENCH_ADMIN_TOKEN", settings.admin_token_file)


def _resolve_secret(
    settings: Settings, given: SecretStr | None, env_name: str, path: Path
) -> tuple[str, str]:
    if given is not None:
        return given.get_secret_value(), env_name
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        token = path.read_text().strip()
        if not token:
            raise ValueError(f"{path} is empty: delete it to have a token generated") from None
        check_token(token, settings.env, str(path))
        return token, str(path)
    token = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token, str(path)


def build_arg_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ctxbench-server",
        description="ctxbench server: REST + explorer over HTTP, agents over gRPC, one process. "
        "Every flag can also be set as CTXBENCH_<NAME> (flags win).",
    )
    for name, field in Settings.model_fields.items():
        flag = "--" + name.replace("_", "-")
        kwargs: dict[str, Any] = {"default": None, "dest": name, "help": f"env CTXBENCH_{name.upper()}"}
        if field.default is not None:
            kwargs["help"] += f" (default {field.default})"
        p.add_argument(flag, **kwargs)
    return p


def load_settings(argv: list[str] | None = None) -> Settings:
    args = build_arg_parser().parse_args(argv)
    given = {k: v for k, v in vars(args).items() if v is not None}
    return Settings(**given)
