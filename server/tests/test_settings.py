import os
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError

from ctxbench_server.config import (
    Settings,
    host_name,
    load_settings,
    resolve_admin_token,
    resolve_agent_token,
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in list(os.environ):
        if k.startswith("CTXBENCH_"):
            monkeypatch.delenv(k)


def test_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    s = load_settings([])
    assert (s.http_host, s.http_port, s.grpc_host, s.grpc_port) == ("127.0.0.1", 8080, "127.0.0.1", 50051)
    assert s.data_dir == tmp_path / "data"
    assert s.database_url == f"sqlite+aiosqlite:///{tmp_path / 'data' / 'ctxbench.db'}"
    assert s.frontend_dir == tmp_path / "build" / "frontend"
    assert (s.heartbeat_interval_s, s.env, s.log_level, s.agent_token) == (10, "prod", "info", None)


def test_flags_beat_env_beat_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CTXBENCH_HTTP_PORT", "9000")
    monkeypatch.setenv("CTXBENCH_GRPC_PORT", "9001")
    monkeypatch.setenv("CTXBENCH_DATA_DIR", str(tmp_path / "env-data"))
    s = load_settings(["--http-port", "0", "--log-level", "debug"])
    assert s.http_port == 0  # flag over env
    assert s.grpc_port == 9001  # env over default
    assert s.data_dir == tmp_path / "env-data"
    assert s.log_level == "debug"
    assert s.database_url is not None and s.database_url.endswith("env-data/ctxbench.db")
    monkeypatch.setenv("CTXBENCH_DATABASE_URL", "postgresql+asyncpg://u:p@db/ctxbench")
    assert load_settings([]).database_url == "postgresql+asyncpg://u:p@db/ctxbench"


def test_bad_values_are_refused() -> None:
    with pytest.raises(ValidationError):
        load_settings(["--http-port", "70000"])
    with pytest.raises(ValidationError):
        load_settings(["--env", "staging"])


@pytest.mark.parametrize("token", ["changeme", "secret", "short"])
def test_placeholder_token_refused_outside_dev(token: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXBENCH_AGENT_TOKEN", token)
    with pytest.raises(ValidationError, match="placeholder"):
        load_settings([])
    assert load_settings(["--env", "dev"]).agent_token is not None


def test_token_file_generated_0600_then_reused(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path / "d")
    token, source = resolve_agent_token(s)
    path = tmp_path / "d" / "agent-token"
    assert source == str(path)
    assert len(token) >= 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert resolve_agent_token(s)[0] == token


def test_token_from_env_wins_over_file(tmp_path: Path) -> None:
    (tmp_path / "agent-token").write_text("file-token-0123456789abcdef\n")
    assert resolve_agent_token(Settings(data_dir=tmp_path))[0] == "file-token-0123456789abcdef"
    s = Settings(data_dir=tmp_path, agent_token="env-token-0123456789abcdef")  # type: ignore[arg-type]
    assert resolve_agent_token(s) == ("env-token-0123456789abcdef", "CTXBENCH_AGENT_TOKEN")


def test_placeholder_or_empty_token_file_refused(tmp_path: Path) -> None:
    (tmp_path / "agent-token").write_text("changeme\n")
    with pytest.raises(ValueError, match="placeholder"):
        resolve_agent_token(Settings(data_dir=tmp_path))
    (tmp_path / "agent-token").write_text("")
    with pytest.raises(ValueError, match="empty"):
        resolve_agent_token(Settings(data_dir=tmp_path))


def test_empty_env_values_count_as_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CTXBENCH_AGENT_TOKEN", "")
    monkeypatch.setenv("CTXBENCH_DATABASE_URL", " ")
    monkeypatch.setenv("CTXBENCH_DATA_DIR", str(tmp_path))
    s = load_settings([])
    assert s.agent_token is None
    assert s.database_url == f"sqlite+aiosqlite:///{tmp_path / 'ctxbench.db'}"


def test_admin_token_generated_0600_apart_from_the_agent_token(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path / "d")
    admin, source = resolve_admin_token(s)
    path = tmp_path / "d" / "admin-token"
    assert source == str(path) and len(admin) >= 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert resolve_admin_token(s)[0] == admin != resolve_agent_token(s)[0]
    given = Settings(data_dir=tmp_path, admin_token="env-admin-0123456789abcdef")  # type: ignore[arg-type]
    assert resolve_admin_token(given) == ("env-admin-0123456789abcdef", "CTXBENCH_ADMIN_TOKEN")


def test_access_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXBENCH_ADMIN_TOKEN", "changeme")
    with pytest.raises(ValidationError, match="CTXBENCH_ADMIN_TOKEN"):
        load_settings([])
    monkeypatch.delenv("CTXBENCH_ADMIN_TOKEN")
    s = load_settings([])
    assert (s.public_read, s.public_url, s.session_ttl_s) == (False, None, 7 * 86400)
    assert s.served_hosts() == {"127.0.0.1", "localhost", "::1"}
    assert s.base_url(8080) == "http://127.0.0.1:8080"
    s = load_settings(
        ["--http-host", "0.0.0.0", "--public-url", "https://Bench.example/x/", "--public-read", "true"]
    )
    assert s.public_read and s.public_url == "https://Bench.example/x"
    assert s.served_hosts() == {"0.0.0.0", "127.0.0.1", "localhost", "::1", "bench.example"}
    assert s.base_url(1) == "https://Bench.example/x"
    assert load_settings(["--http-host", "::"]).base_url(80) == "http://[::1]:80"
    s = load_settings(["--allowed-hosts", "a.lan, B.lan:8080,[::2]"])
    assert s.served_hosts() == {"a.lan", "b.lan", "::2"}
    with pytest.raises(ValidationError, match="PUBLIC_URL"):
        load_settings(["--public-url", "bench.example"])


def test_host_name_takes_a_whole_host_header_or_nothing() -> None:
    assert host_name("Bench.LAN:8080") == "bench.lan" and host_name("[::1]:80") == "::1"
    assert host_name("::1") == "::1" and host_name("*") == "*" and host_name("10.0.0.2") == "10.0.0.2"
    for bad in ("127.0.0.1:9180@attacker.example", "a:b:c.example", "x:99999999", "[::1", "a b", ""):
        assert host_name(bad) == "", bad


def test_connect_admission_must_leave_the_agents_pool_room(monkeypatch: pytest.MonkeyPatch) -> None:
    s = load_settings([])
    assert (s.connect_concurrency, s.connect_queue) == (4, 256)
    monkeypatch.setenv("CTXBENCH_CONNECT_CONCURRENCY", "15")
    with pytest.raises(ValidationError, match=r"CTXBENCH_CONNECT_CONCURRENCY.*CTXBENCH_AGENT_DB_POOL_SIZE"):
        load_settings([])
    monkeypatch.setenv("CTXBENCH_AGENT_DB_POOL_SIZE", "10")
    assert load_settings([]).connect_concurrency == 15
