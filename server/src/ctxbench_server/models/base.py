"""Declarative base: stable constraint names for migrations, UTC-aware timestamps on every backend."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, MetaData
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


_V4 = (0x4000 << 64) | (0x8000 << 48)  # RFC 4122 version 4, variant 10
_V4_MASK = ~((0xF000 << 64) | (0xC000 << 48))


def new_ids(n: int) -> list[str]:
    """n new_id()s from one read of the OS's random source (a batch's 5000 items: 8 ms, not 18 ms)."""
    raw = os.urandom(16 * n)
    out = []
    for i in range(0, 16 * n, 16):
        h = f"{(int.from_bytes(raw[i : i + 16], 'big') & _V4_MASK) | _V4:032x}"
        out.append(f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")
    return out


class UTCDateTime(TypeDecorator[datetime]):
    """Stores UTC; always returns an aware UTC datetime (SQLite keeps no zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def bind_processor(self, dialect: Dialect) -> Callable[[datetime | None], Any] | None:
        """On SQLite, process_bind_param and the dialect's DATETIME text as one function writing the same
        text (the two were most of the bind work of a stored result's row); elsewhere both in turn."""
        if dialect.name != "sqlite":
            return super().bind_processor(dialect)

        def sqlite_text(value: datetime | None) -> str | None:
            if value is None:
                return None
            if value.tzinfo is not UTC:
                value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
            return value.replace(tzinfo=None).isoformat(" ", "microseconds")

        return sqlite_text

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
