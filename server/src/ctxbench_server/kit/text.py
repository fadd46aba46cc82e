"""Text as the database can hold it, on every backend.

PostgreSQL refuses a NUL character in any text value and a string longer than its VARCHAR column (the
whole statement fails with a DataError); SQLite stores both. Free text an agent reports (a host name, a
unit, a kernel's stderr) is cleaned with `storable` before it is stored, so a report that SQLite keeps is
kept on PostgreSQL too, and reads back the same on both.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import String

REPLACEMENT = "\ufffd"
ELLIPSIS = "\u2026"


def storable(s: str, limit: int | None = None) -> str:
    """NUL characters become U+FFFD; over `limit` characters the text is cut and ends in an ellipsis."""
    s = s.replace("\x00", REPLACEMENT)
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + ELLIPSIS
    return s


def column_length(attr: Any) -> int | None:
    """The length of a mapped VARCHAR column (e.g. `Machine.name`); None for unbounded text."""
    t = attr.property.columns[0].type
    return t.length if isinstance(t, String) else None
