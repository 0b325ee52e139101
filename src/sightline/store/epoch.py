"""Times as the store keeps them: microseconds since the Unix epoch (UTC), exactly.

Apart from the feed and the log reader (which load DuckDB and Arrow), so that the server's
reports and store client use them without loading either.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import BigInteger, Integer, cast, extract, func

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def micros(moment: datetime) -> int:
    """Microseconds since the epoch, exactly (no float on the way)."""
    return (moment - EPOCH) // MICROSECOND


def micros_of(column: Any, dialect: str) -> Any:
    """Microseconds since the epoch of a UTC timestamp column, computed exactly by the database."""
    if dialect == "sqlite":  # stored as text: 'YYYY-MM-DD HH:MM:SS.ffffff'
        return cast(func.strftime("%s", column), Integer) * 1_000_000 + cast(
            func.substr(column, 21, 6), Integer
        )
    return cast(extract("epoch", column) * 1_000_000, BigInteger)
