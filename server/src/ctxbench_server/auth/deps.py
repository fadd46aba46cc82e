"""Stub of the auth branch's dependencies (ROUND.md): the lead takes auth's version at merge."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends


def _noop() -> None:
    return None


AdminDep = Annotated[None, Depends(_noop)]
