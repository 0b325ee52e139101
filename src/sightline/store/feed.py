"""Feeding the store from the durable log: the next events after the watermark, exactly once.

One ``step`` reads up to ``batch`` events after the store's watermark (by id: ingest's single
writer commits them in id order), reads back from the store the visits they continue, brings
those visits up to date, and hands the engine the events, the new rows of the visits and the new
watermark to write together. Nothing is kept in memory between two steps, so a restarted feeder
continues exactly where the last one stopped.

The per-event work is SQL, vectorised, in an in-memory DuckDB of the feeder's own (``batch.sql``
below), whichever engine holds the store: Python only reads the log's rows and parses props.

A visit's attributes (source, UTM tags, browser, OS, device, place) are those of its first event
fed; its start and end are its earliest and latest event times, its entry and exit pages those of
its earliest and latest pageview. Visitor codes and visit ids become keyed 64-bit hashes
(``key_of``: the lower half of an MD5, which DuckDB computes as ``md5_number_lower``).
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter or a column)
from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import orjson
import pyarrow as pa
from sqlalchemy import BigInteger, Integer, cast, extract, func, literal, select

from sightline.storage import Database
from sightline.storage.schema import events
from sightline.store import schema
from sightline.store.engines import Engine

log = logging.getLogger("sightline.store")

PAGEVIEW = "pageview"
NONE = "(none)"
VALUE_MAX = 500  # paths and prop values are cut to this many characters
LOOK_BACK = 2 * 86400 * 1_000_000  # how far back a visit is looked for in the store
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)
RAW = (
    ("id", pa.int64()),
    ("site_id", pa.int32()),
    ("time", pa.int64()),
    ("visitor_id", pa.string()),
    ("session_id", pa.string()),
    ("name", pa.string()),
    ("path", pa.string()),
    ("props", pa.list_(pa.string())),
    ("source", pa.string()),
    ("utm_source", pa.string()),
    ("utm_medium", pa.string()),
    ("utm_campaign", pa.string()),
    ("browser", pa.string()),
    ("os", pa.string()),
    ("device", pa.string()),
    ("country", pa.string()),
    ("region", pa.string()),
    ("city", pa.string()),
)
_ATTRIBUTES = {  # a visit attribute from its first event, as the reports show it
    "source": f"coalesce(nullif(left(source, {VALUE_MAX}), ''), '{NONE}')",
    "utm_source": f"coalesce(left(utm_source, {VALUE_MAX}), '')",
    "utm_medium": f"coalesce(left(utm_medium, {VALUE_MAX}), '')",
    "utm_campaign": f"coalesce(left(utm_campaign, {VALUE_MAX}), '')",
    "browser": f"coalesce(nullif(browser, ''), '{NONE}')",
    "os": f"coalesce(nullif(os, ''), '{NONE}')",
    "device": f"coalesce(nullif(device, ''), '{NONE}')",
    "country": f"coalesce(nullif(country, ''), '{NONE}')",  # "(none)" when unknown
    "region": "coalesce(region, '')",  # "" when the database has none
    "city": "coalesce(city, '')",
}
_PV = f"name = '{PAGEVIEW}'"
_KEYED = (  # the batch with its keys and cut paths
    "CREATE OR REPLACE TEMP TABLE b AS SELECT *, "
    "md5_number_lower(site_id::VARCHAR || chr(31) || session_id) AS visit, "
    "md5_number_lower(site_id::VARCHAR || chr(31) || visitor_id) AS visitor, "
    f"left(path, {VALUE_MAX}) AS page FROM raw"
)
_CONTRIBUTION = (  # what the batch adds to each visit
    "CREATE OR REPLACE TEMP TABLE n AS SELECT site_id, visit, arg_min(visitor, id) AS visitor, "
    "arg_min(time, id) AS born, min(time) AS start, max(time) AS last, "
    f"count(*) FILTER (WHERE {_PV}) AS pageviews, count(*) FILTER (WHERE NOT {_PV}) AS events, "
    f"arg_min(page, [time, id]) FILTER (WHERE {_PV}) AS entry, min(time) FILTER (WHERE {_PV}) AS entry_at, "
    f"arg_max(page, [time, id]) FILTER (WHERE {_PV}) AS exit, max(time) FILTER (WHERE {_PV}) AS exit_at, "
    + ", ".join(f"arg_min({sql}, id) AS {name}" for name, sql in _ATTRIBUTES.items())
    + ", max(id) AS version FROM b GROUP BY site_id, visit"
)
_NEWER_ENTRY = "o.entry_at IS NULL OR (n.entry_at IS NOT NULL AND n.entry_at < o.entry_at)"
_NEWER_EXIT = "o.exit_at IS NULL OR (n.exit_at IS NOT NULL AND n.exit_at >= o.exit_at)"
_MERGED = (  # each touched visit's new row: what the store held, plus the batch
    "CREATE OR REPLACE TEMP TABLE m AS SELECT n.site_id::INTEGER AS site_id, n.visit::UBIGINT AS visit, "
    "coalesce(o.visitor, n.visitor)::UBIGINT AS visitor, coalesce(o.born, n.born)::BIGINT AS born, "
    "least(coalesce(o.start, n.start), n.start)::BIGINT AS start, "
    "greatest(coalesce(o.last, n.last), n.last)::BIGINT AS last, "
    "(coalesce(o.pageviews, 0) + n.pageviews)::INTEGER AS pageviews, "
    "(coalesce(o.events, 0) + n.events)::INTEGER AS events, "
    f"CASE WHEN {_NEWER_ENTRY} THEN n.entry ELSE o.entry END::VARCHAR AS entry, "
    f"CASE WHEN {_NEWER_ENTRY} THEN n.entry_at ELSE o.entry_at END::BIGINT AS entry_at, "
    f"CASE WHEN {_NEWER_EXIT} THEN n.exit ELSE o.exit END::VARCHAR AS exit, "
    f"CASE WHEN {_NEWER_EXIT} THEN n.exit_at ELSE o.exit_at END::BIGINT AS exit_at, "
    + ", ".join(f"coalesce(o.{name}, n.{name})::VARCHAR AS {name}" for name in schema.VISIT_ATTRIBUTES)
    + ", n.version::BIGINT AS version FROM n LEFT JOIN old AS o ON o.visit = n.visit"
)
_EVENTS = (  # the batch's rows for the store, with their visit's attributes
    "SELECT b.site_id, b.time, b.id, m.visitor, m.visit, b.name, b.page AS path, b.props, "
    "m.start AS visit_start, "
    + ", ".join(f"m.{name}" for name in schema.VISIT_ATTRIBUTES)
    + " FROM b JOIN m ON m.visit = b.visit ORDER BY b.id"
)


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


def key_of(site_id: int, code: str) -> int:
    """The store's 64-bit key of a visitor code or a visit (session) id of one site."""
    digest = hashlib.md5(f"{site_id}\x1f{code}".encode(), usedforsecurity=False).digest()
    return int.from_bytes(digest[8:], "little")


def props_of(raw: str | None) -> list[str]:
    """The event's props as ``key\\x1fvalue`` strings (values as the SDK sent them, as text)."""
    if not raw:
        return []
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return []
    if not isinstance(parsed, dict):
        return []
    out = []
    for key, value in parsed.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, str):
            text = value
        else:
            text = orjson.dumps(value).decode()
        out.append(f"{key}\x1f{text}"[:VALUE_MAX])
    return out


def _place(name: str) -> Any:
    column = getattr(events.c, name, None)
    return column if column is not None else literal(None)


class Feeder:
    """Feeds one engine from one log, a batch at a time."""

    def __init__(self, db: Database, engine: Engine, batch: int = 20000) -> None:
        self.db = db
        self.engine = engine
        self.batch = batch
        self.compute = duckdb.connect(config={"threads": 1, "memory_limit": "256MB"})
        self.fed_events = 0
        self.last_step_ms: float | None = None
        e = events.c
        self._query = select(
            e.id,
            e.site_id,
            micros_of(e.time, db.dialect),
            e.visitor_id,
            e.session_id,
            e.name,
            e.path,
            e.props,
            e.referrer_source,
            e.utm_source,
            e.utm_medium,
            e.utm_campaign,
            e.browser,
            e.os,
            e.device_type,
            *(_place(name) for name in schema.PLACES),
        ).order_by(e.id)

    def _read(self, after: int, until: int | None) -> list[Sequence[Any]]:
        query = self._query.where(events.c.id > after)
        if until is not None:
            query = query.where(events.c.id <= until)
        with self.db.read() as conn:
            # The driver's own cursor hands back plain tuples, which zip() turns into columns at C
            # speed; every value in the statement is an integer of ours, bound as a literal.
            sql = str(
                query.limit(self.batch).compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True})
            )
            cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
            try:
                cursor.execute(sql)
                rows: list[Sequence[Any]] = cursor.fetchall()
            finally:
                cursor.close()
            return rows

    def step(self) -> int:
        """Feeds the next batch; returns how many events it fed (0: the store is up to date)."""
        started = time.perf_counter()
        replay = self.engine.pending_range()
        after = replay[0] if replay else self.engine.watermark()
        rows = self._read(after, replay[1] if replay else None)
        if not rows:
            return 0
        event_rows, visit_rows = self._build(rows)
        self.engine.write(after, int(rows[-1][0]), event_rows, visit_rows)
        self.fed_events += len(rows)
        self.last_step_ms = round((time.perf_counter() - started) * 1000, 1)
        return len(rows)

    def catch_up(self) -> int:
        total = 0
        while fed := self.step():
            total += fed
        return total

    def _build(self, rows: Sequence[Sequence[Any]]) -> tuple[pa.Table, pa.Table]:
        """The batch's event rows and the new rows of the visits it touched (Arrow tables)."""
        columns = list(zip(*rows, strict=True))
        columns[7] = tuple(props_of(raw) if raw else [] for raw in columns[7])
        raw = pa.table(
            {name: pa.array(values, type=kind) for (name, kind), values in zip(RAW, columns, strict=True)}
        )
        con = self.compute
        con.register("raw", raw)
        try:
            con.execute(_KEYED)
            keys = [row[0] for row in con.execute("SELECT DISTINCT visit FROM b").fetchall()]
            oldest = min(columns[2]) - LOOK_BACK
            old = self.engine.visits_of(keys, oldest)
            con.register("old", old)
            con.execute(_CONTRIBUTION)
            con.execute(_MERGED)
            event_rows = con.sql(_EVENTS).to_arrow_table()
            visit_rows = con.sql("SELECT * FROM m").to_arrow_table()
        finally:
            con.unregister("raw")
            con.unregister("old")
        return event_rows, visit_rows
