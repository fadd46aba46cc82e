"""Many rows into one table through the driver's executemany, with SQLAlchemy's per-row work left out
(insert_many); the same for a statement of named parameters run once per row (execute_many: ingest's
UPDATEs of a transaction's items and runs, one row per item).

A batch POST of 100 machines x 50 items inserts 5000 run_items rows: through a Core insert, SQLAlchemy
builds and checks a parameter dict per row (~40 ms of the POST on the dev VM, the database's own work
~30 ms). Here the statement is compiled once per table and dialect, its positional order read from the
compiled form, and each row becomes one tuple with the columns' bind processors (JSON's serializer,
sql/json_once.py; a datetime's) applied by hand: the same values reach the driver as a Core insert
sends. Only the session's own transaction is used, so the insert commits or rolls back with the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Table, insert
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.dml import UpdateBase

from ctxbench_server.sql.one_writer import OneWriterSession

Processor = Callable[[Any], Any] | None  # a column type's bind processor, if it has one
Statement = tuple[str, list[str], list[Processor]]  # SQL, its parameters' order, their processors
_compiled: dict[tuple[str, str, tuple[str, ...]], Statement] = {}


def _statement(table: Table, dialect: Dialect, keys: tuple[str, ...]) -> Statement:
    key = (table.name, dialect.name, keys)
    got = _compiled.get(key)
    if got is None:
        compiled = insert(table).compile(dialect=dialect, column_keys=list(keys))
        order = list(compiled.positiontup or [])
        if sorted(order) != sorted(keys):
            raise ValueError(f"{table.name}: compiled parameters {order} are not the rows' keys {keys}")
        procs: list[Processor] = [table.c[k].type._cached_bind_processor(dialect) for k in order]
        got = (compiled.string, order, procs)
        _compiled[key] = got
    return got


async def insert_many(session: AsyncSession, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """INSERT every row (all with the keys of the first) in the session's transaction."""
    if not rows:
        return
    if isinstance(session, OneWriterSession):
        await session.before_write()  # SQLite: this process's one writer at a time
    conn = await session.connection()
    sql, order, procs = _statement(table, conn.dialect, tuple(rows[0]))
    await conn.exec_driver_sql(sql, _tuples(rows, order, procs))


# statement (kept alive here: its id is the key), dialect -> its SQL, parameter order and processors
_dml: dict[tuple[int, str], tuple[UpdateBase, Statement]] = {}


def _dml_statement(statement: UpdateBase, dialect: Dialect) -> Statement:
    key = (id(statement), dialect.name)
    got = _dml.get(key)
    if got is None or got[0] is not statement:
        compiled = statement.compile(dialect=dialect)
        if compiled.positiontup is None:
            raise ValueError(f"{dialect.name}: no positional parameters to run {statement} by hand")
        order = list(compiled.positiontup)
        procs: list[Processor] = [compiled.binds[k].type._cached_bind_processor(dialect) for k in order]
        got = _dml[key] = (statement, (compiled.string, order, procs))
    return got[1]


async def execute_many(
    session: AsyncSession, statement: UpdateBase, rows: Sequence[Mapping[str, Any]]
) -> None:
    """Runs `statement` (built once, its values named bind parameters) for every row, in the session's
    transaction, as one executemany: each row a tuple in the compiled order, its parameters' bind
    processors applied by hand (what session.execute(statement, rows) sends)."""
    if not rows:
        return
    if isinstance(session, OneWriterSession):
        await session.before_write()
    conn = await session.connection()
    sql, order, procs = _dml_statement(statement, conn.dialect)
    await conn.exec_driver_sql(sql, _tuples(rows, order, procs))


def _tuples(
    rows: Sequence[Mapping[str, Any]], order: list[str], procs: list[Processor]
) -> list[tuple[Any, ...]]:
    processed = [(i, p) for i, p in enumerate(procs) if p is not None]
    params: list[tuple[Any, ...]] = []
    for row in rows:
        values = [row[k] for k in order]
        for i, p in processed:  # as Core applies them: to every value, None too
            values[i] = p(values[i])
        params.append(tuple(values))
    return params
