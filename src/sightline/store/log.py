"""Reading the durable log (the SQL ``events`` table) in batches, as Arrow tables.

The feeder reads tens of thousands of rows per step. They come through the database driver's own
cursor (plain tuples, no SQLAlchemy row objects), are turned into columns by one ``zip`` and into
typed Arrow arrays in C; the event's time becomes microseconds since the epoch, computed by the
database, or on SQLite, which keeps it as text, parsed by Arrow in C (``strftime`` in the query
cost about a sixth of the read). (Apache Arrow's ADBC SQLite driver would read Arrow directly,
but it links a second copy of SQLite into the process, which SQLite's locking does not allow
beside Python's own.)
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from sqlalchemy import literal, select

from sightline.storage import Database
from sightline.storage.schema import events
from sightline.store.epoch import micros_of

# The log's columns the store needs, in order, with their Arrow types.
COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("id", pa.int64()),
    ("site_id", pa.int32()),
    ("time", pa.int64()),
    ("visitor_id", pa.string()),
    ("session_id", pa.string()),
    ("name", pa.string()),
    ("path", pa.string()),
    ("props", pa.string()),
    ("referrer_source", pa.string()),
    ("utm_source", pa.string()),
    ("utm_medium", pa.string()),
    ("utm_campaign", pa.string()),
    ("browser", pa.string()),
    ("os", pa.string()),
    ("device_type", pa.string()),
    ("country", pa.string()),
    ("region", pa.string()),
    ("city", pa.string()),
)


class LogReader:
    """Batches of the log after an id."""

    def __init__(self, db: Database) -> None:
        self.db = db
        e = events.c
        # SQLite keeps times as UTC text ('YYYY-MM-DD HH:MM:SS.ffffff', storage.types): read as is.
        self._text_time = db.dialect == "sqlite"
        picked = [
            (e.time if self._text_time else micros_of(e.time, db.dialect))
            if name == "time"
            else (e[name] if name in e else literal(None))
            for name, _ in COLUMNS
        ]
        self._query = select(*picked).order_by(e.id)

    def read(self, after: int, until: int | None, limit: int) -> pa.Table:
        """Up to ``limit`` events with ``after < id <= until``, by id."""
        query = self._query.where(events.c.id > after)
        if until is not None:
            query = query.where(events.c.id <= until)
        with self.db.read() as conn:
            # Every value in the statement is an integer of ours, bound as a literal.
            sql = str(
                query.limit(limit).compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True})
            )
            cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
            try:
                cursor.execute(sql)
                rows = cursor.fetchall()
            except Exception:
                # The driver's own error bypasses SQLAlchemy, which would otherwise hand a dead
                # connection back to its pool and log the failed reset with a traceback.
                conn.invalidate()
                raise
            finally:
                cursor.close()
        if not rows:
            return pa.table({name: pa.array([], type=kind) for name, kind in COLUMNS})
        columns = zip(*rows, strict=True)
        return pa.table(
            {
                name: self._times(values) if name == "time" else pa.array(values, type=kind)
                for (name, kind), values in zip(COLUMNS, columns, strict=True)
            }
        )

    def _times(self, values: tuple[object, ...]) -> pa.Array:
        """Microseconds since the epoch, from the database's or from SQLite's text."""
        if not self._text_time:
            return pa.array(values, type=pa.int64())
        return pc.cast(pc.cast(pa.array(values, type=pa.string()), pa.timestamp("us")), pa.int64())
