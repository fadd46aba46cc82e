"""Errors to HTTP, once: domain errors by their status, anything unexpected as a bare 500."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from ctxbench_server.kit.errors import CtxbenchError

log = logging.getLogger(__name__)


async def _domain_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, CtxbenchError)
    return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"detail": "internal error"}, status_code=500)


def install(app: FastAPI) -> None:
    app.add_exception_handler(CtxbenchError, _domain_error)
    app.add_exception_handler(Exception, _unexpected)
