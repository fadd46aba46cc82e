"""UTCDateTime's bind processor on SQLite is one function: it writes the text its process_bind_param and
SQLite's DATETIME type write in turn (what every reader parses back)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.sqlite.base import DATETIME

from ctxbench_server.models.base import UTCDateTime

EAST = timezone(timedelta(hours=5, minutes=30))
VALUES = [
    None,
    datetime(2026, 11, 28, 12, 47, 31, 123456, tzinfo=UTC),
    datetime(2026, 11, 28, 12, 47, 31, tzinfo=UTC),  # no microseconds: still six digits
    datetime(2026, 11, 28, 12, 47, 31, 5),
    datetime(2026, 11, 28, 1, 2, 3, 400000, tzinfo=EAST),  # another zone: the UTC wall time
    datetime(999, 1, 2, 3, 4, 5, 6, tzinfo=UTC),  # a year of three digits: padded to four
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
]


@pytest.mark.parametrize("value", VALUES)
def test_sqlite_text_is_what_the_decorator_and_the_dialect_write(value: datetime | None) -> None:
    dialect = sqlite.dialect()
    t = UTCDateTime()
    generic = DATETIME().bind_processor(dialect)
    assert generic is not None
    want = generic(t.process_bind_param(value, dialect))
    fast = t.bind_processor(dialect)
    assert fast is not None
    assert fast(value) == want


def test_other_dialects_keep_the_decorator_then_theirs() -> None:
    dialect = postgresql.asyncpg.dialect()  # type: ignore[attr-defined]
    value = datetime(2026, 11, 28, 1, 2, 3, tzinfo=EAST)
    processor = UTCDateTime().bind_processor(dialect)
    got = processor(value) if processor is not None else UTCDateTime().process_bind_param(value, dialect)
    assert got == value.astimezone(UTC)
