"""Domain errors. Each carries its HTTP status and gRPC code; both mappings live here, once."""

from __future__ import annotations

from typing import Any, ClassVar

import grpc


class CtxbenchError(Exception):
    """Base of every error a service raises on purpose."""

    # A subclass names its HTTP status and gRPC code on its class line (`class NotFound(CtxbenchError,
    # http=404, grpc_code=...)`): the one place each error maps to both.

    status_code: int = 400
    grpc_code: grpc.StatusCode = grpc.StatusCode.INVALID_ARGUMENT
    headers: ClassVar[dict[str, str] | None] = None

    def __init_subclass__(
        cls, *, http: int | None = None, grpc_code: grpc.StatusCode | None = None, **kw: Any
    ) -> None:
        super().__init_subclass__(**kw)
        if http is not None:
            cls.status_code = http
        if grpc_code is not None:
            cls.grpc_code = grpc_code

    def __init__(self, detail: Any = None) -> None:
        self.detail = detail if detail is not None else self.__class__.__doc__ or "error"
        super().__init__(str(self.detail))


class NotFound(CtxbenchError, http=404, grpc_code=grpc.StatusCode.NOT_FOUND):
    """Not found."""


class Conflict(CtxbenchError, http=409, grpc_code=grpc.StatusCode.FAILED_PRECONDITION):
    """Conflict with the current state."""


class Unauthenticated(CtxbenchError, http=401, grpc_code=grpc.StatusCode.UNAUTHENTICATED):
    """Missing or wrong credentials."""

    headers: ClassVar[dict[str, str] | None] = {"WWW-Authenticate": "Bearer"}


class Forbidden(CtxbenchError, http=403, grpc_code=grpc.StatusCode.PERMISSION_DENIED):
    """The credential is valid but may not do this."""


class PermissionDenied(Forbidden):
    """Not allowed."""


class Unavailable(CtxbenchError, http=503, grpc_code=grpc.StatusCode.UNAVAILABLE):
    """Not now: retry later (e.g. an agent stream the server ended; the agent reconnects)."""


class ValidationFailed(CtxbenchError, http=422, grpc_code=grpc.StatusCode.INVALID_ARGUMENT):
    """Request fields that do not validate; detail is FastAPI's list of {loc, msg, type}."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(errors)
        self.errors = errors


def field_error(loc: list[str | int], msg: str, type_: str = "value_error", **extra: Any) -> dict[str, Any]:
    """One entry of a 422 detail list, shaped like FastAPI's own."""
    err: dict[str, Any] = {"loc": loc, "msg": msg, "type": type_}
    if extra:
        err["ctx"] = extra
    return err
