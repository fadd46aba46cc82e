"""Settings: one pydantic-settings class, fed by CLI flags > CTXBENCH_* environment > defaults."""

from __future__ import annotations

import argparse
import os
import secrets
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Tokens nobody should run a reachable server with. Refused unless env == "dev".
PLACEHOLDER_TOKENS = frozenset(
    {"changeme", "change-me", "change_me", "secret", "token", "password", "admin", "test", "dev", "xxx"}
)
MIN_TOKEN_LENGTH = 16


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
    frontend_dir: Path = Path("./build/frontend")
    heartbeat_interval_s: int = Field(default=10, ge=1, le=3600)
    # Lower bound of RunItem.timeout_s (per launch on the agent); longer runs get 20 x repetitions x
    # min_time_s + 60 s.
    item_timeout_s: float = Field(default=120.0, gt=0, le=86400)
    # A running run whose machine has been offline this long fails with error "agent lost".
    agent_lost_grace_s: float = Field(default=600.0, gt=0, le=30 * 86400)
    env: Literal["dev", "prod"] = "prod"
    log_level: Literal["debug", "info", "warning", "error"] = "info"

    @field_validator("agent_token", "database_url", mode="before")
    @classmethod
    def _empty_is_unset(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v

    @model_validator(mode="after")
    def _derive(self) -> Settings:
        self.data_dir = self.data_dir.expanduser().resolve()
        self.frontend_dir = self.frontend_dir.expanduser().resolve()
        if not self.database_url:
            self.database_url = f"sqlite+aiosqlite:///{self.data_dir / 'ctxbench.db'}"
        if self.agent_token is not None:
            check_token(self.agent_token.get_secret_value(), self.env, "CTXBENCH_AGENT_TOKEN")
        return self

    @property
    def db_url(self) -> str:
        assert self.database_url is not None  # set by _derive
        return self.database_url

    @property
    def token_file(self) -> Path:
        return self.data_dir / "agent-token"


def check_token(token: str, env: str, source: str) -> None:
    if env != "dev" and is_placeholder_token(token):
        raise ValueError(
            f"{source}: refusing a placeholder or short agent token (fewer than {MIN_TOKEN_LENGTH} "
            "characters or a well-known value) outside env=dev; unset it to have one generated"
        )


def resolve_agent_token(settings: Settings) -> tuple[str, str]:
    """Returns (token, where it came from). Creates <data_dir>/agent-token (0600) on first start."""
    if settings.agent_token is not None:
        return settings.agent_token.get_secret_value(), "CTXBENCH_AGENT_TOKEN"
    path = settings.token_file
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
