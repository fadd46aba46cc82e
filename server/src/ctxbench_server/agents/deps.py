from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from ctxbench_server.agents.hub import AgentHub
from ctxbench_server.runs.dispatch import Dispatcher


def get_hub(request: Request) -> AgentHub:
    hub: AgentHub = request.app.state.hub
    return hub


def get_dispatcher(request: Request) -> Dispatcher:
    d: Dispatcher = request.app.state.dispatcher
    return d


HubDep = Annotated[AgentHub, Depends(get_hub)]
DispatcherDep = Annotated[Dispatcher, Depends(get_dispatcher)]
