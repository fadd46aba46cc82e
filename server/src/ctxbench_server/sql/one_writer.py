"""One writer at a time on SQLite, queued in the event loop instead of in SQLite's busy handler.

SQLite has one write lock per database. A session that waits for it inside SQLite polls until
busy_timeout and then fails with "database is locked"; under a burst (200 agents saying Hello at once,
every heartbeat a write) the writers ahead of it, each holding the lock across awaits, can take longer
than that. So on SQLite a session takes this process's write gate, an asyncio.Lock (first come, first
served), before its first write, and gives it back when its transaction ends: writers wait their turn,
for as long as WRITE_WAIT_S, instead of failing. Reads never take the gate (WAL lets them run beside the
writer). PostgreSQL has row locks and needs none of this.

A session that reads before it writes has checked out a pooled connection by the time it waits for the
gate. The paths that write in bursts (enrolments, Hellos, disconnects, run starts, liveness, ingest) open
their sessions with db.writing, which takes the gate before the first statement: the queue for the one
writer holds no connections, and readers keep the pool.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import TextClause, event, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session, SessionTransaction
from sqlalchemy.sql.dml import UpdateBase

# A writer waiting longer than this is in a deadlock (a task writing through a second session while its
# first holds the gate) or the database is stuck: it fails rather than waits for ever.
WRITE_WAIT_S = 60.0
_GATE = "ctxbench_write_gate"
_HELD = "ctxbench_write_gate_held"
_WRITES = ("insert", "update", "delete", "replace", "create", "drop", "alter")


def _is_write(statement: Any) -> bool:
    if isinstance(statement, UpdateBase):
        return True
    if isinstance(statement, TextClause):
        return (
            statement.text.lstrip().split(None, 1)[0].lower() in _WRITES if statement.text.strip() else False
        )
    return False


class OneWriterSession(AsyncSession):
    """An AsyncSession that holds the write gate from its first write to the end of its transaction."""

    async def _gate(self, statement: Any = None) -> None:
        sync = self.sync_session
        if sync.info.get(_HELD):
            return
        if not (_is_write(statement) or sync.new or sync.deleted or sync.dirty):
            return
        gate: asyncio.Lock = sync.info[_GATE]
        try:
            # (not asyncio.wait_for: on Python 3.11 it can swallow a cancel that comes as the gate frees)
            async with asyncio.timeout(WRITE_WAIT_S):
                await gate.acquire()
        except TimeoutError:
            raise TimeoutError(f"waited {WRITE_WAIT_S:.0f} s for the SQLite write gate") from None
        sync.info[_HELD] = gate

    async def before_write(self) -> None:
        """Takes the gate now: for a write made past the session (on its connection, the driver's SQL),
        or before the first statement of a session that will write (db.writing)."""
        await self._gate(text("insert"))

    async def execute(self, statement: Any, *args: Any, **kw: Any) -> Any:
        await self._gate(statement)
        return await super().execute(statement, *args, **kw)

    async def scalar(self, statement: Any, *args: Any, **kw: Any) -> Any:
        await self._gate(statement)
        return await super().scalar(statement, *args, **kw)

    async def scalars(self, statement: Any, *args: Any, **kw: Any) -> Any:
        await self._gate(statement)
        return await super().scalars(statement, *args, **kw)

    async def get(self, *args: Any, **kw: Any) -> Any:
        await self._gate()  # autoflush
        return await super().get(*args, **kw)

    async def flush(self, objects: Any = None) -> None:
        await self._gate()
        await super().flush(objects)

    async def commit(self) -> None:
        await self._gate()
        await super().commit()

    async def close(self) -> None:
        try:
            await super().close()
        finally:  # a write that failed before any transaction began still gives the gate back
            gate = self.sync_session.info.pop(_HELD, None)
            if gate is not None:
                gate.release()


def _release(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None:  # the outermost transaction ended: committed, rolled back or closed
        gate = session.info.pop(_HELD, None)
        if gate is not None:
            gate.release()


def one_writer_kwargs(gate: asyncio.Lock | None = None) -> dict[str, Any]:
    """async_sessionmaker arguments for a SQLite engine: sessions of this maker share one gate (`gate`:
    the gate of another maker of the same database, whose sessions then take turns with these)."""
    return {"class_": OneWriterSession, "info": {_GATE: gate or asyncio.Lock()}}


def write_gate(sessionmaker: Any) -> asyncio.Lock | None:
    """The gate of a maker made with one_writer_kwargs, else None."""
    gate = sessionmaker.kw.get("info", {}).get(_GATE)
    return gate if isinstance(gate, asyncio.Lock) else None


event.listen(Session, "after_transaction_end", _release)
