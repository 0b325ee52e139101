"""Feeding the store from the durable log: the next events after the watermark, exactly once.

One ``step`` reads up to ``batch`` events after the store's watermark (by id: ingest's single
writer commits them in id order; ``BACKLOG_BATCH`` while a backlog is fed), reads back from the
store the visits they continue, brings those visits up to date, and hands the engine the events,
the new rows of the visits and the new watermark to write together. Nothing is kept in memory
between two steps, so a restarted feeder continues exactly where the last one stopped.

The per-event work is SQL, vectorised, in an in-memory DuckDB of the feeder's own (``batch.sql``
below), whichever engine holds the store: Python only reads the log's rows and parses props.

A visit's attributes (source, UTM tags, browser, OS, device, place) are those of its first event
fed, and its channel (``sightline.channels``) follows from them, worked out by the rules' SQL once,
when the visit is first fed; its start and end are its earliest and latest event times, its entry
and exit pages those of its earliest and latest pageview; its ``events`` count only the events that
make it engaged (custom events, not autocapture's passive ones: ``autocapture.events.PASSIVE``).
Visitor codes and visit (session) ids become keyed 64-bit hashes (``key_of``: the lower half of an
MD5, which DuckDB computes as ``md5_number_lower``). A visit the store does not hold yet gets the
next number of its site (its site's ``visit_counts`` plus its rank among the batch's new visits of
that site, by their first event's id): the same numbers whenever the same batch is built again from
the same store, so ClickHouse's batch written again after a cut (``engines.ClickHouse.write``)
carries the numbers its first writing gave, and DuckDB's counter is written in the batch's own
transaction.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter or a column)
from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor

import duckdb
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from sightline import channels
from sightline.autocapture.events import PASSIVE
from sightline.database import Database
from sightline.store import schema
from sightline.store.changes import HOUR, Spans
from sightline.store.dialects import Params
from sightline.store.engines import Engine
from sightline.store.epoch import micros as micros  # re-exported: the feed's callers use it
from sightline.store.log import LogReader
from sightline.store.schema import PAGEVIEW

log = logging.getLogger("sightline.store")

NONE = "(none)"
VALUE_MAX = 500  # paths and prop values are cut to this many characters
LOOK_BACK = 2 * 86400 * 1_000_000  # how far back a visit is looked for in the store
# Batches while a backlog is fed: one DuckDB row group, which DuckDB writes to the file straight
# away instead of into its write-ahead log first, and one step's fixed cost over 6x the events:
# 25 -> 16.5 µs of CPU per event (`python -m bench store`).
BACKLOG_BATCH = 122_880
BACKLOG_BYTES = 64 * 2**20  # ... or fewer, when the log's rows are big (props up to 64 KiB)
# Each stored visit attribute (``schema.VISIT_ATTRIBUTES``, in the registry's order), as the
# reports show it: from the visit's first event, or (``_WORKED_OUT``) from those attributes.
ATTRIBUTES = {
    "source": f"coalesce(nullif(left(source, {VALUE_MAX}), ''), '{NONE}')",
    "channel": channels.SQL,  # from the source and UTM tags, once, when the visit is first fed
    "utm_source": f"coalesce(left(utm_source, {VALUE_MAX}), '')",
    "utm_medium": f"coalesce(left(utm_medium, {VALUE_MAX}), '')",
    "utm_campaign": f"coalesce(left(utm_campaign, {VALUE_MAX}), '')",
    "browser": f"coalesce(nullif(browser, ''), '{NONE}')",
    "os": f"coalesce(nullif(os, ''), '{NONE}')",
    "device": f"coalesce(nullif(device, ''), '{NONE}')",
    "country": f"coalesce(nullif(country, ''), '{NONE}')",  # "(none)" when unknown
    "region": "coalesce(region, '')",  # "" when the database has none
    "city": "coalesce(city, '')",
    "language": "coalesce(language, '')",  # "" when the visitor's browser did not say
}
_WORKED_OUT = frozenset({"channel"})
_FIRST = {name: sql for name, sql in ATTRIBUTES.items() if name not in _WORKED_OUT}
_PV = f"name = '{PAGEVIEW}'"
# Events that make a visit engaged (not a bounce): every event but pageviews and passive ones.
_ENGAGING = f"name NOT IN ('{PAGEVIEW}', " + ", ".join(f"'{name}'" for name in PASSIVE) + ")"
_KEYED = (  # the batch, typed, with its visit keys and cut paths
    "CREATE OR REPLACE TEMP TABLE b AS SELECT id::BIGINT AS id, site_id::INTEGER AS site_id, "
    "time, visitor_id::VARCHAR AS visitor_id, name::VARCHAR AS name, "
    f"left(path::VARCHAR, {VALUE_MAX}) AS page, props, "
    "md5_number_lower(site_id::VARCHAR || chr(31) || session_id::VARCHAR) AS session, "
    "referrer_source::VARCHAR AS source, utm_source::VARCHAR AS utm_source, "
    "utm_medium::VARCHAR AS utm_medium, utm_campaign::VARCHAR AS utm_campaign, "
    "browser::VARCHAR AS browser, os::VARCHAR AS os, device_type::VARCHAR AS device, "
    "country::VARCHAR AS country, region::VARCHAR AS region, city::VARCHAR AS city, "
    "language::VARCHAR AS language FROM raw"
)
_CONTRIBUTION = (  # what the batch adds to each visit, and the channel of its attributes
    "CREATE OR REPLACE TEMP TABLE n AS SELECT *, "
    + ", ".join(f"{ATTRIBUTES[name]} AS {name}" for name in sorted(_WORKED_OUT))
    + " FROM (SELECT site_id, session, min(id) AS first_id, "
    "md5_number_lower(site_id::VARCHAR || chr(31) || arg_min(visitor_id, id)) AS visitor, "
    "arg_min(time, id) AS born, min(time) AS start, max(time) AS last, "
    f"count(*) FILTER (WHERE {_PV}) AS pageviews, count(*) FILTER (WHERE {_ENGAGING}) AS events, "
    f"arg_min(page, [time, id]) FILTER (WHERE {_PV}) AS entry, min(time) FILTER (WHERE {_PV}) AS entry_at, "
    f"arg_max(page, [time, id]) FILTER (WHERE {_PV}) AS exit, max(time) FILTER (WHERE {_PV}) AS exit_at, "
    + ", ".join(f"arg_min({sql}, id) AS {name}" for name, sql in _FIRST.items())
    + ", max(id) AS version FROM b GROUP BY site_id, session)"
)
_NUMBERED = (  # the next numbers of their sites for the visits the store does not hold yet
    "CREATE OR REPLACE TEMP TABLE f AS SELECT n.session, (coalesce(c.visits, 0) + row_number() OVER "
    "(PARTITION BY n.site_id ORDER BY n.first_id))::UINTEGER AS visit FROM n "
    "LEFT JOIN counts AS c ON c.site_id = n.site_id "
    "WHERE NOT EXISTS (SELECT 1 FROM old AS o WHERE o.session = n.session)"
)
_NEWER_ENTRY = "o.entry_at IS NULL OR (n.entry_at IS NOT NULL AND n.entry_at < o.entry_at)"
_NEWER_EXIT = "o.exit_at IS NULL OR (n.exit_at IS NOT NULL AND n.exit_at >= o.exit_at)"
_MERGED = (  # each touched visit's new row: what the store held, plus the batch
    "CREATE OR REPLACE TEMP TABLE m AS SELECT n.site_id::INTEGER AS site_id, "
    "coalesce(o.visit, f.visit)::UINTEGER AS visit, n.session::UBIGINT AS session, "
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
    + ", n.version::BIGINT AS version "
    "FROM n LEFT JOIN old AS o ON o.session = n.session "
    "LEFT JOIN f ON f.session = n.session"
)
_EVENTS = (  # the batch's rows for the store, with their visit's attributes
    "SELECT b.site_id, b.time, b.id, m.visitor, m.visit, b.name, b.page AS path, b.props, "
    "m.start AS visit_start, "
    + ", ".join(f"m.{name}" for name in schema.VISIT_ATTRIBUTES)
    + " FROM b JOIN m ON m.session = b.session ORDER BY b.id"
)

_CHANGED = (  # the hours a batch changes, per site: its events', its visits' starts, new and old
    f"SELECT DISTINCT site_id, h FROM (SELECT site_id, time // {HOUR} AS h FROM b UNION ALL "
    f"SELECT site_id, start // {HOUR} FROM m UNION ALL "
    f"SELECT m.site_id, o.start // {HOUR} FROM m JOIN old AS o ON o.session = m.session)"
)


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


class Feeder:
    """Feeds one engine from one log, a batch at a time."""

    def __init__(
        self, db: Database, engine: Engine, batch: int = 20000, backlog: int = BACKLOG_BATCH
    ) -> None:
        self.db = db
        self.engine = engine
        self.batch = batch
        self.backlog = max(batch, backlog)  # the batch while a backlog is fed
        self.log = LogReader(db)
        self.compute = duckdb.connect(config={"threads": 1, "memory_limit": "256MB"})
        self.fed_events = 0
        self.last_step_ms: float | None = None
        self.behind = False  # the last step read a whole batch: more is waiting in the log
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-log-reader")
        self._ahead: tuple[int, int, Future[pa.Table]] | None = None  # (after which id, size, batch)

    def step(self) -> int:
        """Feeds the next batch; returns how many events it fed (0: the store is up to date)."""
        started = time.perf_counter()
        replay = self.engine.pending_range()
        after = replay[0] if replay else self.engine.watermark()
        until = replay[1] if replay else None
        rows, asked = self._rows_after(after, until)
        self.behind = until is None and rows.num_rows == asked
        if not rows.num_rows:
            return 0
        last = int(rows.column("id")[-1].as_py())
        if self.behind:
            # A backlog: the next, bigger batch is read from the log (Python, the interpreter lock)
            # while this one is built and written (DuckDB, which releases it): two cores, not one.
            size = min(self.backlog, max(self.batch, BACKLOG_BYTES * rows.num_rows // max(rows.nbytes, 1)))
            self._ahead = (last, size, self._reader.submit(self._read, last, None, size))
        event_rows, visit_rows, changed = self.build(rows)
        self.engine.write(after, last, event_rows, visit_rows, changed)
        self.fed_events += rows.num_rows
        self.last_step_ms = round((time.perf_counter() - started) * 1000, 1)
        return int(rows.num_rows)

    def catch_up(self) -> int:
        total = 0
        while fed := self.step():
            total += fed
        return total

    def close(self) -> None:
        self._discard()
        self._reader.shutdown(wait=True)
        self.compute.close()

    def _rows_after(self, after: int, until: int | None) -> tuple[pa.Table, int]:
        """The batch after ``after`` and how many events were asked for: the one read ahead when
        it starts there, else read now. A batch read ahead from anywhere else (its predecessor
        was not written) is dropped. A range left half written (``until``) is read whole."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            start, size, future = ahead
            if start == after and until is None:
                return future.result(), size
            self._ahead = ahead
            self._discard()
        size = self.batch if until is None else max(until - after, 1)  # ids: at least the events
        return self._read(after, until, size), size

    def _discard(self) -> None:
        ahead, self._ahead = self._ahead, None
        if ahead is not None and not ahead[2].cancel():
            with contextlib.suppress(Exception):
                ahead[2].result()

    def _read(self, after: int, until: int | None, size: int) -> pa.Table:
        """Up to ``size`` events of the log after ``after``, their props as ``key\x1fvalue`` lists."""
        return self.parsed(self.log.read(after, until, size))

    @staticmethod
    def parsed(rows: pa.Table) -> pa.Table:
        """The log's rows with their props as ``key\x1fvalue`` lists."""
        props = pa.array(
            [props_of(raw) if raw else [] for raw in rows.column("props").to_pylist()],
            type=pa.list_(pa.string()),
        )
        return rows.set_column(rows.schema.get_field_index("props"), "props", props)

    def build(self, raw: pa.Table, continuing: bool = True) -> tuple[pa.Table, pa.Table, Spans]:
        """The batch's event rows, the new rows of the visits it touched (Arrow tables) and what
        writing them changes (``store.changes``: per site, the hours of its events, of its visits'
        new starts and of the starts they had). ``continuing``: the batch continues the visits the
        store holds (the feed); else its visits are built from its events alone (the self-check's
        repair, ``store.check``)."""
        con = self.compute
        con.register("raw", raw)
        try:
            con.execute(_KEYED)
            keys = con.sql("SELECT DISTINCT session FROM b").to_arrow_table().column(0).combine_chunks()
            first = int(pc.min(raw.column("time")).as_py())
            if not continuing:
                keys = keys.slice(0, 0)  # no visit the store holds is looked for
            con.register("old", self.engine.visits_of(keys, first - LOOK_BACK))
            con.register("counts", self._counts(pc.unique(raw.column("site_id")).to_pylist()))
            con.execute(_CONTRIBUTION)
            con.execute(_NUMBERED)
            con.execute(_MERGED)
            event_rows = con.sql(_EVENTS).to_arrow_table()
            visit_rows = con.sql("SELECT * FROM m").to_arrow_table()
            hours = con.sql(_CHANGED).fetchall()
        finally:
            con.unregister("raw")
            con.unregister("old")
            con.unregister("counts")
        changed: dict[int, list[tuple[int, int]]] = {}
        for site, hour in hours:
            changed.setdefault(int(site), []).append((int(hour) * HOUR, (int(hour) + 1) * HOUR))
        return event_rows, visit_rows, changed

    def _counts(self, sites: list[int]) -> pa.Table:
        """The last visit number each of ``sites`` gave (none: 0), as the store holds it."""
        params = Params(self.engine.dialect)
        chosen = params.dialect.contains(params.bind(sites), "site_id")
        rows = self.engine.query(
            f"SELECT site_id, max(visits) FROM visit_counts WHERE {chosen} GROUP BY site_id",
            params.values,
        )
        return pa.table(
            {
                "site_id": pa.array([int(site) for site, _ in rows], pa.int32()),
                "visits": pa.array([int(n) for _, n in rows], pa.int64()),
            }
        )
