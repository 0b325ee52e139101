"""Feeding the store from the durable log: the next events after the watermark, exactly once.

One ``step`` reads up to ``batch`` events after the store's watermark (by id: ingest's single
writer commits them in id order), brings each one's visit up to date, and hands the engine the
events, the new rows of the visits they touched and the new watermark to write together. The
visits of the last hours are kept in memory; a visit not in memory is read back from the store,
so a restarted feeder continues where the last one stopped.

A visit's attributes (source, UTM tags, browser, OS, device, place) are those of its first event
fed; its start and end are its earliest and latest event times, its entry and exit pages those of
its earliest and latest pageview.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from sqlalchemy import BigInteger, Integer, cast, extract, func, literal, select

from sightline.storage import Database
from sightline.storage.schema import events
from sightline.store import schema
from sightline.store.engines import Columns, Engine

log = logging.getLogger("sightline.store")

PAGEVIEW = "pageview"
NONE = "(none)"
VALUE_MAX = 500  # paths and prop values are cut to this many characters
KEEP = 3 * 3600 * 1_000_000  # visits idle for longer than this leave the memory
LOOK_BACK = 2 * 86400 * 1_000_000  # how far back a visit is looked for in the store
_KEY = b"sightline-store-v1"
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


def key_of(site_id: int, code: str) -> int:
    """The store's 64-bit key of a visitor code or a visit (session) id of one site."""
    digest = hashlib.blake2b(f"{site_id}\x1f{code}".encode(), digest_size=8, key=_KEY).digest()
    return int.from_bytes(digest, "little")


def cut(value: str | None) -> str:
    return value[:VALUE_MAX] if value else ""


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
        out.append(cut(f"{key}\x1f{text}"))
    return out


@dataclass(slots=True)
class Visit:
    site_id: int
    visit: int
    visitor: int
    born: int
    start: int
    last: int
    pageviews: int
    events: int
    entry: str | None
    entry_at: int | None
    exit: str | None
    exit_at: int | None
    attrs: tuple[str, ...]  # schema.VISIT_ATTRIBUTES, in order
    version: int

    def row(self) -> tuple[Any, ...]:
        return (
            self.site_id,
            self.visit,
            self.visitor,
            self.born,
            self.start,
            self.last,
            self.pageviews,
            self.events,
            self.entry,
            self.entry_at,
            self.exit,
            self.exit_at,
            *self.attrs,
            self.version,
        )


def _visit(row: Sequence[Any]) -> Visit:
    """A visit as ``Engine.visits_of`` reads it back (``schema.VISIT_COLUMNS`` order)."""
    n = len(schema.VISIT_ATTRIBUTES)
    site_id, visit, visitor, born, start, last, pageviews, count, entry, entry_at, exit_, exit_at = row[:12]
    return Visit(
        int(site_id),
        int(visit),
        int(visitor),
        int(born),
        int(start),
        int(last),
        int(pageviews),
        int(count),
        entry,
        entry_at,
        exit_,
        exit_at,
        tuple(row[12 : 12 + n]),
        int(row[12 + n]),
    )


def _new_visit(row: Sequence[Any], at: int, key: int, visitor: int) -> Visit:
    """A visit first seen at this log row (``key`` and ``visitor`` hashed): the row's attributes."""
    event_id, site_id = row[:2]
    source, utm_s, utm_m, utm_c, browser, os_name, device, *place = row[8:]
    attrs = (
        cut(source) or NONE,
        cut(utm_s),
        cut(utm_m),
        cut(utm_c),
        browser or NONE,
        os_name or NONE,
        device or NONE,
        place[0] or NONE,  # country: "(none)" when unknown, as the reports show it
        *(p or "" for p in place[1:]),  # region, city: "" when the database has none
    )
    return Visit(site_id, key, visitor, at, at, at, 0, 0, None, None, None, None, attrs, event_id)


def _place(name: str) -> Any:
    column = getattr(events.c, name, None)
    return column if column is not None else literal(None)


class Feeder:
    """Feeds one engine from one log, a batch at a time."""

    def __init__(self, db: Database, engine: Engine, batch: int = 20000) -> None:
        self.db = db
        self.engine = engine
        self.batch = batch
        self.visits: dict[tuple[int, str], Visit] = {}  # by (site id, session id)
        self._keys: dict[tuple[int, str], int] = {}  # visits read back or new in this batch: hashes
        self._visitors: dict[tuple[int, str], int] = {}  # visitor codes' hashes (bounded cache)
        self.fed_events = 0
        self.last_step_ms: float | None = None

    def _read(self, after: int, until: int | None) -> list[Any]:
        e = events.c
        query = select(
            e.id,
            e.site_id,
            micros_of(e.time, self.db.dialect),
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
        ).where(e.id > after)
        if until is not None:
            query = query.where(e.id <= until)
        with self.db.read() as conn:
            return list(conn.execute(query.order_by(e.id).limit(self.batch)).all())

    def step(self) -> int:
        """Feeds the next batch; returns how many events it fed (0: the store is up to date)."""
        started = time.perf_counter()
        replay = self.engine.pending_range()
        after = replay[0] if replay else self.engine.watermark()
        rows = self._read(after, replay[1] if replay else None)
        if not rows:
            return 0
        if replay:  # the visits in memory may already hold this batch: read them back afterwards
            self.visits.clear()
        try:
            event_columns, visit_columns = self._build(rows)
            self.engine.write(after, int(rows[-1][0]), event_columns, visit_columns)
        except BaseException:
            self.visits.clear()
            raise
        if replay:
            self.visits.clear()
        self.fed_events += len(rows)
        self.last_step_ms = round((time.perf_counter() - started) * 1000, 1)
        return len(rows)

    def catch_up(self) -> int:
        total = 0
        while fed := self.step():
            total += fed
        return total

    def _load(self, rows: Sequence[Any]) -> None:
        """Reads back from the store the visits of ``rows`` that are not in memory."""
        visits = self.visits
        missing = {(r[1], r[4]) for r in rows if (r[1], r[4]) not in visits}
        self._keys = {pair: key_of(*pair) for pair in missing}
        if not missing:
            return
        by_key = {key: pair for pair, key in self._keys.items()}
        oldest = min(int(r[2]) for r in rows) - LOOK_BACK
        keys = sorted(by_key)
        for i in range(0, len(keys), 5000):
            for row in self.engine.visits_of(keys[i : i + 5000], oldest):
                visit = _visit(row)
                visits[by_key[visit.visit]] = visit

    def _build(self, rows: Sequence[Any]) -> tuple[Columns, Columns]:
        """The batch's event rows and the new rows of the visits it touched, as columns.

        The per-event loop is the feed's hot path: visits are found by (site, session) in memory
        (hashed once per visit), and each event becomes one tuple; the columns are one ``zip``.
        """
        self._load(rows)
        visits = self.visits
        out: list[tuple[Any, ...]] = []
        append = out.append
        touched: dict[tuple[int, str], Visit] = {}
        for row in rows:
            event_id, site_id, at, _, session_id, name, path, props = row[:8]
            at = int(at)
            visit = visits.get((site_id, session_id))
            if visit is None:
                visit = visits[(site_id, session_id)] = _new_visit(
                    row, at, self._keys[(site_id, session_id)], self._visitor(site_id, row[3])
                )
            page = path if len(path) <= VALUE_MAX else path[:VALUE_MAX]
            if at < visit.start:
                visit.start = at
            if at > visit.last:
                visit.last = at
            if name == PAGEVIEW:
                visit.pageviews += 1
                if visit.entry_at is None or at < visit.entry_at:
                    visit.entry, visit.entry_at = page, at
                if visit.exit_at is None or at >= visit.exit_at:
                    visit.exit, visit.exit_at = page, at
            else:
                visit.events += 1
            visit.version = event_id
            touched[(site_id, session_id)] = visit
            append(
                (
                    site_id,
                    at,
                    event_id,
                    visit.visitor,
                    visit.visit,
                    name,
                    page,
                    props_of(props),
                    visit.start,
                    *visit.attrs,
                )
            )
        columns = list(zip(*out, strict=True))
        event_columns: Columns = {
            name: list(values) for name, values in zip(schema.EVENT_COLUMNS, columns, strict=True)
        }
        visit_rows = [visit.row() for visit in touched.values()]
        visit_columns: Columns = {
            name: list(values)
            for name, values in zip(schema.VISIT_COLUMNS, zip(*visit_rows, strict=True), strict=True)
        }
        self._forget(max(int(r[2]) for r in rows))
        return event_columns, visit_columns

    def _visitor(self, site_id: int, code: str) -> int:
        key = self._visitors.get((site_id, code))
        if key is None:
            if len(self._visitors) > 500_000:
                self._visitors.clear()
            key = self._visitors[(site_id, code)] = key_of(site_id, code)
        return key

    def _forget(self, newest: int) -> None:
        if len(self.visits) < 200_000:
            return
        idle = newest - KEEP
        self.visits = {k: v for k, v in self.visits.items() if v.last >= idle}
