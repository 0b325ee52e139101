"""Reading the durable log (the SQL ``events`` table) in batches, as Arrow tables.

The feeder reads tens of thousands of rows per step. They come through the database driver's own
cursor (no SQLAlchemy row objects) and become typed Arrow arrays in C; the event's time becomes
microseconds since the epoch, computed by the database, or on SQLite, which keeps it as text,
parsed by Arrow in C (``strftime`` in the query cost about a sixth of the read).

On SQLite each row comes as one text, its columns joined by ``\x1f`` by SQLite's ``printf`` (a
NULL is empty, which the feed treats as NULL anyway), and Arrow splits them in C: one Python object
per row instead of one per column, 40 % less CPU for the read (`python -m bench store`).
A batch where a value holds the separator itself (the count of parts tells) is read again as
tuples. Ingest refuses NUL characters, which would end a value in ``printf``. (Apache Arrow's ADBC
SQLite driver would read Arrow directly, but it links a second copy of SQLite into the process,
which SQLite's locking does not allow beside Python's own: closing one copy's file drops the
other's locks.) Other databases' rows come as tuples, turned into columns by one ``zip``.

An event's id is its position in the log, never handed out twice (SQLite's AUTOINCREMENT,
PostgreSQL's sequence: ``database.tables.events``). ``LogPositions`` keeps it so where the log was
put back behind the store (an install hit by SQLite's reuse of ids before AUTOINCREMENT, a log
restored from an older backup beside a newer ClickHouse store): the next id given is past the
store's watermark, so the feed reads it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from sqlalchemy import ColumnElement, Select, func, literal, select, text

from sightline.database import Database
from sightline.database.lease import lock_key
from sightline.database.schema import events
from sightline.database.tables.events import COMMIT_ORDER
from sightline.store.epoch import micros, micros_of

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
    ("language", pa.string()),
)
TIME_INDEX = 2  # the place of ``time`` in COLUMNS
SEPARATOR = "\x1f"  # between the columns of a row read as one text (SQLite)


class LogReader:
    """Batches of the log after an id."""

    def __init__(self, db: Database) -> None:
        self.db = db
        columns = events.c
        # SQLite keeps times as UTC text ('YYYY-MM-DD HH:MM:SS.ffffff', database.types): read as is.
        self._text_time = db.dialect == "sqlite"
        picked = [
            (columns.time if self._text_time else micros_of(columns.time, db.dialect))
            if name == "time"
            else (columns[name] if name in columns else literal(None))
            for name, _ in COLUMNS
        ]
        self._query = select(*picked).order_by(columns.id)
        self._joined = (
            select(func.printf(SEPARATOR.join("%s" for _ in COLUMNS), *picked)).order_by(columns.id)
            if self._text_time
            else None
        )

    def read(self, after: int, until: int | None, limit: int) -> pa.Table:
        """Up to ``limit`` events with ``after < id <= until``, by id."""
        where = [events.c.id > after] if until is None else [events.c.id > after, events.c.id <= until]
        if self._joined is not None:
            table = self._split([row[0] for row in self._fetch(self._joined, where, limit)])
            if table is not None:
                return table
        return self._table(self._fetch(self._query, where, limit))

    def read_span(self, site_id: int, start: datetime, end: datetime, until: int) -> pa.Table:
        """Every event of one site with ``start <= time < end`` and ``id <= until``, by id."""
        columns = events.c
        query = self._query.where(
            columns.site_id == site_id, columns.time >= start, columns.time < end, columns.id <= until
        )
        with self.db.read() as conn:  # a repair's read, not the feed's: plain SQLAlchemy
            rows = [tuple(row) for row in conn.execute(query)]
        at = TIME_INDEX
        return self._table(
            [(*r[:at], micros(r[at]), *r[at + 1 :]) for r in rows] if self._text_time else rows, False
        )

    def _table(self, rows: list[Any], text_time: bool | None = None) -> pa.Table:
        if not rows:
            return pa.table({name: pa.array([], type=kind) for name, kind in COLUMNS})
        columns = zip(*rows, strict=True)
        text = self._text_time if text_time is None else text_time
        return pa.table(
            {
                name: self._times(values, text) if name == "time" else pa.array(values, type=kind)
                for (name, kind), values in zip(COLUMNS, columns, strict=True)
            }
        )

    def _fetch(self, query: Select[Any], where: list[ColumnElement[bool]], limit: int) -> list[Any]:
        query = query.where(*where).limit(limit)
        with self.db.read() as conn:
            # Every value in the statement is an integer of ours, bound as a literal.
            sql = str(query.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
            cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
            try:
                cursor.execute(sql)
                rows: list[Any] = cursor.fetchall()
            except Exception:
                # The driver's own error bypasses SQLAlchemy, which would otherwise hand a dead
                # connection back to its pool and log the failed reset with a traceback.
                conn.invalidate()
                raise
            finally:
                cursor.close()
        return rows

    def _split(self, texts: list[str]) -> pa.Table | None:
        """The rows' columns from their joined texts; None when a value holds the separator."""
        parts = pc.split_pattern(pa.array(texts, type=pa.string()), SEPARATOR)
        if texts and not pc.all(pc.equal(pc.list_value_length(parts), len(COLUMNS))).as_py():
            return None
        grid = pa.FixedSizeListArray.from_arrays(pc.list_flatten(parts), len(COLUMNS))
        columns = {}
        for index, (name, kind) in enumerate(COLUMNS):
            values = pc.list_element(grid, index)
            if name == "time":
                values = pc.cast(pc.cast(values, pa.timestamp("us")), pa.int64())
            elif kind != pa.string():
                values = pc.cast(values, kind)
            columns[name] = values
        return pa.table(columns)

    def _times(self, values: tuple[object, ...], text: bool) -> pa.Array:
        """Microseconds since the epoch, from the database's or from SQLite's text."""
        if not text:
            return pa.array(values, type=pa.int64())
        return pc.cast(pc.cast(pa.array(values, type=pa.string()), pa.timestamp("us")), pa.int64())


class LogPositions:
    """Where the log's ids stand, and keeping the next one past the store's watermark."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def newest(self) -> int:
        """The largest id the log holds (0: empty)."""
        with self.db.read() as conn:
            return int(conn.execute(select(func.coalesce(func.max(events.c.id), 0))).scalar_one())

    def keep_past(self, watermark: int) -> int | None:
        """Moves the log's sequence past ``watermark`` when the next id would be at or below it;
        returns the largest id it would have built on (None: it was past already)."""
        with self.db.begin() as conn:
            if self.db.dialect == "sqlite":
                if not conn.execute(
                    text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'")
                ).first():
                    return None  # no AUTOINCREMENT table yet (the schema is migrated first)
                found = conn.execute(text("SELECT seq FROM sqlite_sequence WHERE name = 'events'")).first()
                newest = conn.execute(select(func.coalesce(func.max(events.c.id), 0))).scalar_one()
                given = max(int(found[0]) if found else 0, int(newest))
                if given >= watermark:
                    return None
                if found is None:
                    conn.execute(
                        text("INSERT INTO sqlite_sequence (name, seq) VALUES ('events', :w)"),
                        {"w": watermark},
                    )
                else:
                    conn.execute(
                        text("UPDATE sqlite_sequence SET seq = :w WHERE name = 'events'"), {"w": watermark}
                    )
                return given
            sequence = conn.execute(text("SELECT pg_get_serial_sequence('events', 'id')")).scalar_one()
            read = text(f"SELECT last_value, is_called FROM {sequence}")  # noqa: S608 (the database's name)
            for locked in (False, True):
                last, called = conn.execute(read).one()
                given = int(last) if called else int(last) - 1
                if given >= watermark:
                    return None
                if not locked:  # ingest takes ids under this lock (ingest.log_writer): none while it moves
                    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": lock_key(COMMIT_ORDER)})
            conn.execute(text("SELECT setval(:sequence, :w)"), {"sequence": sequence, "w": watermark})
            return given
