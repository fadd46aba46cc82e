"""What a route documents besides its answer: FastAPI's `responses` for the error statuses it may answer
with, each a description only (the body is always `{"detail": ...}`, errors.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def errors(descriptions: Mapping[int, str]) -> dict[int | str, dict[str, Any]]:
    """`responses=` of a route: status -> {"description": why}."""
    return {status: {"description": why} for status, why in descriptions.items()}
