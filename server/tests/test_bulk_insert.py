"""sql/bulk.py and sql/json_once.py: a batch's item rows through the driver's executemany store what a
Core insert stores, and ingest's UPDATEs through it change what Core's change, on SQLite and
(CTXBENCH_TEST_DATABASE_URL) on PostgreSQL, in the session's transaction and, on SQLite, under its
one-writer gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Table, insert, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from ctxbench_server.db import create_sessionmaker, migrate
from ctxbench_server.models import ItemState, Run, RunItem
from ctxbench_server.models.base import new_ids
from ctxbench_server.sql import bulk, json_once
from ctxbench_server.sql.one_writer import OneWriterSession

from .test_db import fresh_engine


def rows(run_id: str, point: dict[str, Any]) -> list[dict[str, Any]]:
    shared = json_once.Shared()
    ids = new_ids(3)
    return [
        {
            "id": ids[i],
            "run_id": run_id,
            "index": i,
            "kernel_id": "storage.write",
            "params": shared(point) if i < 2 else {"nested": [1, 2.5, None, "é"]},
            "state": ItemState.QUEUED,
            "timeout_s": 12.5,
            "attempt": 1,
            "error": None if i else "a'b\"c",
            "result_id": None,
            "launches_done": 0,
            "launches_wall_s": 0.0,
        }
        for i in range(3)
    ]


def test_encoded_is_encoded_once() -> None:
    point = {"threads": 4, "dir": "/tmp/x", "big": 2**40, "f": 0.1}
    shared = json_once.Shared()
    enc = shared(point)
    assert enc == point and json.loads(enc.text) == point and json_once.serialize(enc) is enc.text
    assert shared(point) is enc and shared(dict(point)) is not enc  # by identity, not by value
    assert json.loads(json_once.serialize({"a": [1]})) == {"a": [1]}


def test_serialize_writes_valid_json_of_the_same_values() -> None:
    """orjson's text: what json.dumps writes without its spaces (the same values read back, floats to
    the last bit, strings that need escapes); what orjson refuses (an int over 64 bits, keys that are
    not strings) goes through the stdlib's encoder. A float that is not finite is JSON's null (json.dumps
    writes NaN, which is not JSON and which PostgreSQL refuses): results never hold one (the wire layer
    keeps them out), and any other value gets valid JSON."""
    launches = [{"index": i, "wall_s": 0.1 * i, "cpu_s": None, "kept": True} for i in range(3)]
    floats = [0.1, 1 / 3, 1e-300, 2.5e16, -0.0, 5e-324]
    for value in (launches, {'é"\\': ["\x00", floats]}, [], {}, None, 1.5, {"big": 2**70}, {1: "a"}):
        text = json_once.serialize(value)
        assert json.loads(text) == json.loads(json.dumps(value)), value
    assert json.loads(json_once.serialize({"x": float("nan"), "y": [float("inf")]})) == {
        "x": None,
        "y": [None],
    }


async def two_runs(engine: AsyncEngine) -> None:
    """Machine "m" and its runs "r" and "r2", for items written two ways and compared."""
    async with engine.begin() as conn:
        now = "2026-11-22 01:00:00.000000"
        await conn.execute(
            text(
                "INSERT INTO machines (id, name, hostname, agent_version, first_seen, last_seen, facts)"
                f" VALUES ('m', 'm', 'm', 'v', '{now}', '{now}', '{{}}')"
            )
        )
        for rid in ("r", "r2"):
            await conn.execute(insert(Run.__table__).values(id=rid, machine_id="m", batch_id="b", spec={}))


async def rows_of_runs(
    engine: AsyncEngine, table: Table, cols: list[Any]
) -> dict[str, list[tuple[Any, ...]]]:
    """Runs "r" and "r2"'s items as tuples of `cols`, in item order, to compare the two ways' rows."""
    async with engine.connect() as conn:
        return {
            rid: [
                tuple(r)
                for r in await conn.execute(
                    select(*cols).where(table.c.run_id == rid).order_by(table.c.index)
                )
            ]
            for rid in ("r", "r2")
        }


async def test_bulk_rows_read_back_as_core_rows(tmp_path: Path) -> None:
    engine = await fresh_engine(tmp_path)
    sessionmaker = create_sessionmaker(engine)
    table = cast(Table, RunItem.__table__)
    point = {"threads": 4, "placement": "same_core", "dir": "/d/é"}
    try:
        await migrate(engine)
        await two_runs(engine)
        async with sessionmaker() as session:
            await bulk.insert_many(session, table, rows("r", point))
            if isinstance(session, OneWriterSession):  # SQLite: the writer's gate taken for it
                assert session.sync_session.info.get("ctxbench_write_gate_held") is not None
            await session.execute(insert(table), rows("r2", point))
            await bulk.insert_many(session, table, [])
            await session.rollback()  # the session's transaction: nothing stays
            assert await session.scalar(select(RunItem.id).limit(1)) is None
            await bulk.insert_many(session, table, rows("r", point))
            await session.execute(insert(table), rows("r2", point))
            await session.commit()
        cols = [c for c in table.c if c.name not in ("id", "run_id")]
        got = await rows_of_runs(engine, table, cols)
        assert got["r"] == got["r2"] and len(got["r"]) == 3
        assert got["r"][0][2] == point and got["r"][2][2] == {"nested": [1, 2.5, None, "é"]}
    finally:
        await engine.dispose()


async def test_execute_many_writes_what_core_writes(tmp_path: Path) -> None:
    """execute_many (ingest's UPDATEs of a transaction's items: a result's, a launch count with its
    time, a CASE that reads one parameter twice) changes the rows as session.execute(statement, rows)
    does, in the session's transaction."""
    from datetime import UTC, datetime

    from ctxbench_server.ingest.repository import _SET_ITEM_LAUNCHES, _SET_ITEM_RESULT

    engine = await fresh_engine(tmp_path)
    sessionmaker = create_sessionmaker(engine)
    table = cast(Table, RunItem.__table__)
    at = datetime(2026, 11, 28, 5, 0, 1, 250000, tzinfo=UTC)
    try:
        await migrate(engine)
        await two_runs(engine)
        by_run = {rid: rows(rid, {"threads": 1}) for rid in ("r", "r2")}
        async with sessionmaker() as session:
            for items in by_run.values():
                await bulk.insert_many(session, table, items)
            for rid, run in (("r", True), ("r2", False)):
                ids = [item["id"] for item in by_run[rid]]
                launches = [
                    {"b_id": i, "b_done": n, "b_planned": 7, "b_wall_s": 0.5 * n, "b_at": at}
                    for n, i in enumerate(ids)
                ]
                results = [
                    {
                        "b_id": i,
                        "b_result_id": i,
                        "b_state": ItemState.SUCCEEDED,
                        "b_error": e,
                        "b_launches": 1,
                        "b_wall_s": 0.25,
                    }
                    for i, e in zip(ids[:2], (None, "why"), strict=True)
                ]
                if run:
                    await bulk.execute_many(session, _SET_ITEM_LAUNCHES, launches)
                    await bulk.execute_many(session, _SET_ITEM_RESULT, results)
                    await bulk.execute_many(session, _SET_ITEM_RESULT, [])
                else:
                    await session.execute(_SET_ITEM_LAUNCHES, launches)
                    await session.execute(_SET_ITEM_RESULT, results)
            await session.commit()
        cols = [c for c in table.c if c.name not in ("id", "run_id", "result_id")]
        got = await rows_of_runs(engine, table, cols)
        assert got["r"] == got["r2"] and len(got["r"]) == 3
        names = [c.name for c in cols]
        first, last = dict(zip(names, got["r"][1], strict=True)), dict(zip(names, got["r"][2], strict=True))
        assert first["state"] == ItemState.SUCCEEDED and first["error"] == "why"
        assert first["launches_done"] == 1 and first["launch_at"] == at and last["launches_wall_s"] == 1.0
    finally:
        await engine.dispose()
