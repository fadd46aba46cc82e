"""Domain errors. Each carries its HTTP status and gRPC code; both mappings live here, once."""

from __future__ import annotations

from typing import Any, ClassVar

import grpc


class CtxbenchError(Exception):
    """Base of every error a service raises on purpose."""

    status_code: int = 400
    grpc_code: grpc.StatusCode = grpc.StatusCode.INVALID_ARGUMENT
    headers: ClassVar[dict[str, str] | None] = None

    def __init__(self, detail: Any = None) -> None:
        self.detail = detail if detail is not None else self.__class__.__doc__ or "error"
        super().__init__(str(self.detail))


class NotFound(CtxbenchError):
    """Not found."""

    status_code = 404
    grpc_code = grpc.StatusCode.NOT_FOUND


class Conflict(CtxbenchError):
    """Conflict with the current state."""

    status_code = 409
    grpc_code = grpc.StatusCode.FAILED_PRECONDITION


class Unauthenticated(CtxbenchError):
    """Missing or wrong credentials."""

    status_code = 401
    grpc_code = grpc.StatusCode.UNAUTHENTICATED
    headers: ClassVar[dict[str, str] | None] = {"WWW-Authenticate": "Bearer"}


class Forbidden(CtxbenchError):
    """The credential is valid but may not do this."""

    status_code = 403
    grpc_code = grpc.StatusCode.PERMISSION_DENIED


class PermissionDenied(CtxbenchError):
    """Not allowed."""

    status_code = 403
    grpc_code = grpc.StatusCode.PERMISSION_DENIED


class Unavailable(CtxbenchError):
    """Not now: retry later (e.g. an agent stream the server ended; the agent reconnects)."""

    status_code = 503
    grpc_code = grpc.StatusCode.UNAVAILABLE


class ValidationFailed(CtxbenchError):
    """Request fields that do not validate; detail is FastAPI's list of {loc, msg, type}."""

    status_code = 422
    grpc_code = grpc.StatusCode.INVALID_ARGUMENT

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(errors)
        self.errors = errors


def field_error(loc: list[str | int], msg: str, type_: str = "value_error", **extra: Any) -> dict[str, Any]:
    """One entry of a 422 detail list, shaped like FastAPI's own."""
    err: dict[str, Any] = {"loc": loc, "msg": msg, "type": type_}
    if extra:
        err["ctx"] = extra
    return err
