"""JSON columns whose value is encoded once for many rows: a batch POST stores the same request body in
each of its runs and the same point's params in the items of every machine (100 x 50 rows: 5100
json.dumps, ~40 ms of the POST's event loop, for 51 distinct values). The engine's json_serializer
(db.create_engine) takes an Encoded's text as it is; any other value is json.dumps'd, as SQLAlchemy's
default serializer does (the same text)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# json.dumps's text, without its check for circular containers (a dict or list that holds itself):
# the values stored are built from JSON-like data and cannot hold themselves (one that did would fail
# with RecursionError instead of ValueError), and that check's bookkeeping for every dict and list was
# much of the cost of encoding a result's row (its launches are a list of dicts).
_encode = json.JSONEncoder(check_circular=False).encode


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
