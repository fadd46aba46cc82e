from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.stack import AGENT_BIN, KERNELS_DIR, SERVER_BIN, Agent, Server, wait_until


def _require_built() -> None:
    missing = [str(p) for p in (SERVER_BIN, AGENT_BIN, KERNELS_DIR) if not p.exists()]
    if missing:
        pytest.fail(f"not built: {', '.join(missing)} (run 'make build')")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    _require_built()
    data = tmp_path / "data"
    data.mkdir()
    srv = Server(data)
    try:
        yield srv
    finally:
        rc = srv.stop()
        assert rc == 0, f"server did not stop cleanly ({rc}):\n{srv.output()}"


@pytest.fixture
def agent(server: Server, tmp_path: Path) -> Iterator[Agent]:
    ag = Agent(server, tmp_path / "spool")
    try:
        yield ag
    finally:
        rc = ag.stop()
        assert rc == 0, f"agent did not stop cleanly ({rc}):\n{ag.output()}"


@pytest.fixture
def machine(server: Server, agent: Agent) -> dict:
    """The local agent's machine, once it is online."""

    def online() -> dict | None:
        machines = server.http.get("/machines").json()
        return next((m for m in machines if m["online"]), None)

    return wait_until("the agent's machine to come online", online, 30)
