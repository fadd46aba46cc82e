"""Alembic environment. The server passes its own connection (config.attributes["connection"]);
the `alembic` CLI (server/alembic.ini) connects with CTXBENCH_DATABASE_URL or the default settings."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from ctxbench_server.models import Base

target_metadata = Base.metadata


def _run(conn: Connection) -> None:
    context.configure(
        connection=conn,
        target_metadata=target_metadata,
        render_as_batch=conn.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _url() -> str:
    url = context.config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from ctxbench_server.config import Settings

    return Settings().db_url


async def _run_async() -> None:
    from ctxbench_server.db import create_engine

    engine = create_engine(_url())
    async with engine.begin() as conn:
        await conn.run_sync(_run)
    await engine.dispose()


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    given = context.config.attributes.get("connection")
    if given is not None:
        _run(given)
    else:
        asyncio.run(_run_async())
