"""The FastAPI application: REST under /api/v1, OpenAPI at /docs, the explorer at /."""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ctxbench_server import __version__, exception_handlers, frontend
from ctxbench_server.alerts.router import router as alerts_router
from ctxbench_server.auth import service as auth_service
from ctxbench_server.auth.deps import require_read
from ctxbench_server.auth.middleware import BrowserSafety
from ctxbench_server.auth.router import install_login_link, session_router, tokens_router
from ctxbench_server.compare.router import router as compare_router
from ctxbench_server.config import Settings
from ctxbench_server.dispatch.dispatcher import Dispatcher
from ctxbench_server.dispatch.hub import AgentHub
from ctxbench_server.fleet.dist import router as dist_router
from ctxbench_server.fleet.router import router as fleet_router
from ctxbench_server.fleetchanges.router import router as fleetchanges_router
from ctxbench_server.history.router import router as history_router
from ctxbench_server.kernels.router import router as kernels_router
from ctxbench_server.limits.router import router as limits_router
from ctxbench_server.machines.router import router as machines_router
from ctxbench_server.metrics.router import router as metrics_router
from ctxbench_server.push.router import router as push_router
from ctxbench_server.runs.events import RunEvents
from ctxbench_server.runs.router import batches_router
from ctxbench_server.runs.router import router as runs_router
from ctxbench_server.schedules.router import router as schedules_router
from ctxbench_server.shares.router import router as shares_router
from ctxbench_server.web import swagger
from ctxbench_server.web.body_limit import BodyLimit
from ctxbench_server.webhooks.router import router as webhooks_router

api = APIRouter(prefix="/api/v1")


@api.get("/health", tags=["health"])
async def health() -> dict[str, str]:
    return {"status": "ok"}


# Reads need a credential unless CTXBENCH_PUBLIC_READ=true; each write route adds WriteDep or AdminDep.
# Open: health, session, GET /shares/{slug} (the shares router guards its own POST).
readers = [Depends(require_read)]
api.include_router(session_router)
api.include_router(machines_router, dependencies=readers)
api.include_router(kernels_router, dependencies=readers)
api.include_router(runs_router, dependencies=readers)
api.include_router(batches_router, dependencies=readers)
api.include_router(schedules_router, dependencies=readers)
api.include_router(compare_router, dependencies=readers)
api.include_router(history_router, dependencies=readers)
api.include_router(alerts_router, dependencies=readers)
api.include_router(fleetchanges_router, dependencies=readers)
api.include_router(webhooks_router, dependencies=readers)  # and an admin, route by route
api.include_router(limits_router, dependencies=readers)
api.include_router(tokens_router, dependencies=readers)
api.include_router(push_router, dependencies=readers)
api.include_router(shares_router)
api.include_router(fleet_router)


def create_app(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    hub: AgentHub,
    dispatcher: Dispatcher[RunEvents],
    admin_token: str,
) -> FastAPI:
    app = FastAPI(
        title="ctxbench",
        version=__version__,
        description="What OS primitives cost on your machines.",
        # FastAPI's pages load Swagger UI and ReDoc from CDNs: /docs is served from here instead.
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.sessionmaker = sessionmaker
    app.state.hub = hub
    app.state.dispatcher = dispatcher
    app.state.admin_token_digest = auth_service.digest(admin_token)
    exception_handlers.install(app)
    app.include_router(api)
    app.include_router(metrics_router, dependencies=readers)  # /metrics, where Prometheus looks
    app.include_router(dist_router)  # open: the installer and the bundles hold no secret
    swagger.install(app)  # /docs, open like /openapi.json
    install_login_link(app, lambda: frontend.index_response(settings.frontend_dir))
    frontend.install(app, settings.frontend_dir)
    app.add_middleware(BodyLimit, max_body_bytes=settings.max_body_bytes)
    app.add_middleware(BrowserSafety, settings=settings)  # outermost: Host first, headers on every answer
    return app
