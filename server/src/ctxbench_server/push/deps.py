from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from ctxbench_server.push.changes import Changes


def get_changes(request: Request) -> Changes:
    changes: Changes = request.app.state.changes
    return changes


ChangesDep = Annotated[Changes, Depends(get_changes)]
