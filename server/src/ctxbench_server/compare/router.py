from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from ctxbench_server.compare import service
from ctxbench_server.compare.schemas import CompareOut
from ctxbench_server.db import SessionDep
from ctxbench_server.dispatch.deps import HubDep
from ctxbench_server.web.openapi import errors

router = APIRouter(tags=["compare"])


@router.get(
    "/compare",
    response_model=CompareOut,
    responses=errors(
        {
            404: "unknown machine (named)",
            422: "unknown kernel, prefix, run or batch; baseline not compared; too many",
        }
    ),
)
async def compare(
    session: SessionDep,
    hub: HubDep,
    machines: str | None = None,
    kernels: str | None = None,
    baseline: str | None = None,
    runs: str | None = None,
    batch: str | None = None,
    sides: Annotated[
        str | None,
        Query(max_length=20_000, description="sets of runs as the columns: label:run,run;label:run"),
    ] = None,
) -> Response:
    """Each machine's latest successful result per (kernel, params) side by side, ratios to the
    baseline's with a hierarchical-bootstrap CI and the rule that made each significant or not
    (`significance`), geometric means, and the facts that differ. `runs`: a machine with runs among
    these uses only their results; `batch`: the same for a batch's runs (and its machines when
    `machines` is omitted); `sides`: named sets of runs as the columns instead of machines (before/after a
    change on one machine), each side's noise learned from its own runs."""
    q = service.CompareQuery(
        machines=service.split_list(machines),
        kernels=service.split_list(kernels),
        baseline=baseline or None,
        runs=service.split_list(runs),
        batch=batch or None,
        sides=sides or None,
    )
    fragments: dict[str, str] = {}
    answer = await service.compare(session, q, await hub.online(), fragments=fragments)
    return Response(service.render(answer, fragments), media_type="application/json")
