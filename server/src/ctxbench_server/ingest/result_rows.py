"""The results table as ingest's INSERT writes it: the same columns, the JSON ones (samples, iterations,
counters, harness, launches, params...) encoded by orjson instead of the engine's serializer
(sql/json_once.py, the stdlib's json). A result's row holds ~50 floats and 7 launch records; their text
was the largest part of the row's cost on the event loop. orjson writes floats as the shortest text that
reads back the same, as json.dumps does, and no spaces: every reader (json.loads, SQLite's and
PostgreSQL's JSON functions) reads the same values."""

from __future__ import annotations

from typing import Any, cast

import orjson
from sqlalchemy import JSON, Column, Dialect, MetaData, Table, TypeDecorator

from ctxbench_server.models import Result
from ctxbench_server.sql import json_once


def encode(value: Any) -> str:
    """A JSON column's text. The values are finite (agents/reports_wire.py drops or refuses the rest:
    orjson would write NaN as null); what orjson refuses (an int over 64 bits) goes through the
    engine's own serializer. None is JSON's null, as SQLAlchemy's JSON type writes it."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError
        return json_once.serialize(value)


class _OrJSON(TypeDecorator[Any]):
    """JSON (its bind cast on PostgreSQL included), encoded by `encode`."""

    impl = JSON
    cache_ok = True

    def bind_processor(self, dialect: Dialect) -> Any:
        return encode


_RESULTS = cast(Table, Result.__table__)
# (sql/bulk.py caches its statements by table name: this table's and the model's both write valid JSON.)
RESULT_ROWS = Table(
    _RESULTS.name,
    MetaData(),
    *(Column(c.name, _OrJSON() if isinstance(c.type, JSON) else c.type, key=c.key) for c in _RESULTS.c),
)
