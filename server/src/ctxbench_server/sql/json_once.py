"""The engine's JSON serializer (db.create_engine's json_serializer), and JSON columns whose value is
encoded once for many rows: a batch POST stores the same request body in each of its runs and the same
point's params in the items of every machine (100 x 50 rows: 5100 encodings for 51 distinct values).
An Encoded's text is taken as it is; any other value is encoded by orjson, which writes what json.dumps
writes without its spaces (floats as the shortest text that reads back the same): every reader
(json.loads, SQLite's and PostgreSQL's JSON functions) reads the same values. A result's row (~50
floats, 7 launch records) was most of the ingest writer's own cost with the stdlib's encoder."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

# What orjson refuses (a dict with keys that are not strings, an int over 64 bits, nesting past 254):
# json.dumps's text, without its check for circular containers (the values stored are built from
# JSON-like data and cannot hold themselves).
_stdlib = json.JSONEncoder(check_circular=False).encode


def _encode(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError
        return _stdlib(value)


class Encoded(dict[str, Any]):
    """A dict with its JSON text, computed when made. Not to be changed after (the text would be stale):
    made just before an insert, from values nothing else changes."""

    __slots__ = ("text",)

    def __init__(self, value: Mapping[str, Any]) -> None:
        super().__init__(value)
        self.text = _encode(self)


class Shared:
    """Encoded values by the identity of what they were made from: dicts shared by many rows are
    encoded once. Keeps the originals alive while it lives, so that their ids are not reused."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[Mapping[str, Any], Encoded]] = {}

    def __call__(self, value: Mapping[str, Any]) -> Encoded:
        hit = self._by_id.get(id(value))
        if hit is None:
            hit = self._by_id[id(value)] = (value, Encoded(value))
        return hit[1]


def serialize(value: Any) -> str:
    return value.text if type(value) is Encoded else _encode(value)
