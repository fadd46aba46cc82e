from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.stack import AGENT_BIN, KERNELS_DIR, SERVER_BIN, Agent, Server, online_machine, running


def _require_built() -> None:
    missing = [str(p) for p in (SERVER_BIN, AGENT_BIN, KERNELS_DIR) if not p.exists()]
    if missing:
        pytest.fail(f"not built: {', '.join(missing)} (run 'make build')")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    _require_built()
    data = tmp_path / "data"
    data.mkdir()
    with running(Server(data)) as srv:
        yield srv


@pytest.fixture
def agent(server: Server, tmp_path: Path) -> Iterator[Agent]:
    with running(Agent(server, tmp_path / "spool")) as ag:
        yield ag


@pytest.fixture
def machine(server: Server, agent: Agent) -> dict:
    """The local agent's machine, once it is online."""
    return online_machine(server)
