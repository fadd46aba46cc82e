"""Text as the database can hold it, on every backend.

PostgreSQL refuses a NUL character in any text value and a string longer than its VARCHAR column (the
whole statement fails with a DataError); SQLite stores both. Free text an agent reports (a host name, a
unit, a kernel's stderr) is cleaned with `storable` before it is stored, so a report that SQLite keeps is
kept on PostgreSQL too, and reads back the same on both.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any

from pydantic import AfterValidator, StringConstraints
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


# ---------------------------------------------------------------- names and notes people type
# Budgets match the columns (machines.display_name 255, runs/batches.name 200, note 4000 characters);
# a longer value or a control character is a 422 naming the field, never a database error.


def _one_line(v: str) -> str:
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in v):
        raise ValueError("a name is one line: no control characters (newline, tab, NUL) nor lone surrogates")
    return v


def _note(v: str) -> str:
    # A lone surrogate (JSON "\ud800") is no character PostgreSQL can store.
    if any(
        (unicodedata.category(c) == "Cc" and c not in "\n\r\t") or unicodedata.category(c) == "Cs" for c in v
    ):
        raise ValueError("no control characters other than newlines and tabs, nor lone surrogates")
    return v


MachineName = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=255), AfterValidator(_one_line)
]
Title = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200), AfterValidator(_one_line)]
Note = Annotated[str, StringConstraints(max_length=4000), AfterValidator(_note)]
