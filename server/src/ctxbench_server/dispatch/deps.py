"""FastAPI dependencies: the hub (who is online, machine locks) and the dispatcher."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from ctxbench_server.dispatch.dispatcher import Dispatcher
from ctxbench_server.dispatch.hub import AgentHub
from ctxbench_server.runs.events import RunEvents


def get_hub(request: Request) -> AgentHub:
    hub: AgentHub = request.app.state.hub
    return hub


def get_dispatcher(request: Request) -> Dispatcher[RunEvents]:
    d: Dispatcher[RunEvents] = request.app.state.dispatcher
    return d


HubDep = Annotated[AgentHub, Depends(get_hub)]
DispatcherDep = Annotated[Dispatcher[RunEvents], Depends(get_dispatcher)]
