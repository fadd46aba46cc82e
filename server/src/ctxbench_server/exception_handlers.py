"""Errors to HTTP, once: domain errors by their status, values the database refuses as 422, anything
unexpected as a bare 500."""

from __future__ import annotations

import logging
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from ctxbench_server.db import is_data_error
from ctxbench_server.errors import CtxbenchError

log = logging.getLogger(__name__)


async def _domain_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, CtxbenchError)
    return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)


def _json_safe(value: Any) -> Any:
    """NaN and infinities (JSON like `1e999` parses to inf) are not JSON: echo them as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def _short_input(err: Any) -> Any:
    """An error echoes its input only when it is a short scalar: never a whole (maybe huge or deep) body."""
    if not isinstance(err, dict) or "input" not in err:
        return err
    value = err["input"]
    if isinstance(value, dict | list | tuple) or len(repr(value)) > 200 or not _utf8(value):
        return {k: v for k, v in err.items() if k != "input"}
    return err


def _utf8(value: Any) -> bool:
    """A lone surrogate (JSON "\\ud800") parses into a str that no UTF-8 answer can carry."""
    if not isinstance(value, str):
        return True
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [_short_input(e) for e in exc.errors()]
    return JSONResponse({"detail": _json_safe(jsonable_encoder(errors))}, status_code=422)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    if is_data_error(exc):
        # What SQLite stores and PostgreSQL refuses (a NUL character in a name or an id, say): the
        # request's fault, and the same 4xx on both when a schema does not catch it first.
        log.info("%s %s: a value cannot be stored: %s", request.method, request.url.path, exc.__cause__)
        return JSONResponse(
            {"detail": "a value in this request cannot be stored (a NUL character, or too long)"},
            status_code=422,
        )
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"detail": "internal error"}, status_code=500)


def install(app: FastAPI) -> None:
    app.add_exception_handler(CtxbenchError, _domain_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _unexpected)
