"""Selections kept between report queries: the rows a query selects, held in memory by the embedded
store while the store's data stays as it was, so that the dashboard's requests under one filter
select their visits once.

Under a filter on the visits' events (page, event, goal, prop), every report request first selects
the visits that match: a semi-join of the period's events with its visits, the costliest part of
the request (about 125 ms of CPU over 30 days at 10 M events). The dashboard asks a dozen reports
of the same period and filters at once (summary, time series, every table), so the reports ask the
store to keep that selection (``Kept.keep``): its rows are written once into a table of an
in-memory database attached to the store (``kept``), and the requests read that table instead.

A kept table is a function of its query (SQL and bound values) and of its site's data in the
store. Every write the store makes records, once committed, the sites and spans of time it changed
(``store.changes``: a fed batch, an erasure, a retention cut, the self-check's refill, a deleted
site; a rebuild changes every site). Every write holds ``writing`` from its start until its change
is recorded, and an ask waits while a write is under way, so a table handed out holds every write
committed before the ask (a query that saw a commit never gets a table read before it:
``reports.table_days`` keeps figures read from it with the change number asked before).

- A selection asked **with its span** (``span``: the visits it selects started in it, and its SQL
  reads ``$kept_low`` and ``$kept_high`` as further bounds of their start and ``$kept_low`` as one
  of their events' time) is brought up to date in place (one transaction, which a query under way
  does not see half done). A visit's selected row is a function of its own row and its own events.
  When every change since it was read is a fed batch, each recorded the keys of the visits it
  touched (``store.changes``: every event it wrote is one of theirs, and it rewrote their rows
  alone): the rows of those visits are deleted (by ``KEY``, wherever their start went) and
  selected again (bounded below by their earliest start), the others stay. A live site's step
  touches a few hundred visits: a 30-day selection is read again for those, not for the hour's
  thousands. After any other change (an erasure, a retention cut, the self-check's refill, which
  replaces visits), or too many keys, the rows of the visits that started in the spans changed
  are deleted and selected again instead: a write that changes a visit's row or events records
  the hour of its start (and of the start it had before), so the rows outside those spans are
  those a cold read gives. A change of the whole site (a deleted site, a rebuild, more changes
  than are remembered) reads it all again.
- A selection asked **without its span** is read again, as a new table, after any change of its
  site; one asked without its site after any change at all. (Rewriting spans in site order changes
  no row's content and records nothing.)

So an erased visitor is never counted from a kept table, and a report never mixes a kept selection
with data it missed, while a batch fed for another site leaves the selection as it is.

A table no longer handed out is dropped ``GRACE`` seconds later (a query may still be on its way
with its name); at most ``MOST`` tables and ``MOST_BYTES`` of rows (estimated from their number
and columns) are kept, the least recently used going first; a selection bigger than that serves
the request that read it and is then
dropped like a stale one. Concurrent asks for the same selection wait for the one reading it. Lost with the
process: nothing outlives a restart.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sightline.store.changes import Changes, Keys

if TYPE_CHECKING:
    import duckdb

DATABASE = "kept"
MOST = 16  # tables kept at once
MOST_BYTES = 400 << 20  # every kept table together, estimated as below
COLUMN_BYTES = 9  # a row's share per column in memory (a visits row, 24 columns: 217 bytes at 10 M)
GRACE = 30.0  # seconds a table stays after it was last handed out, once stale or evicted
MOST_RUNS = 8  # separate stretches of changed hours selected again in place; more: one covering them
LOW, HIGH = "kept_low", "kept_high"  # the bound values a selection with its span reads its start by
Span = tuple[int, int]  # [low, high), UTC microseconds
KEY = "session"  # a selected row's visit key, as ``store.changes`` records the visits a batch touched


@dataclass
class _Entry:
    name: str
    version: int
    rows: int
    width: int  # estimated bytes of a row (``COLUMN_BYTES`` per column)
    used: float = field(default_factory=time.monotonic)
    span: Span | None = None  # the start of every visit it selects lies in it (brought up to date in place)
    keyed: bool = False  # its rows carry their visit's key (``KEY``): brought up to date by keys

    @property
    def bytes(self) -> int:
        return self.rows * self.width


class Kept:
    """The kept selections of one DuckDB database (``connect`` gives a cursor of it)."""

    def __init__(self, connect: Callable[[], duckdb.DuckDBPyConnection], changes: Changes) -> None:
        self._connect = connect
        self._changes = changes
        self._lock = threading.Lock()
        self._reading: dict[str, threading.Lock] = {}  # one reader per selection
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._retired: list[_Entry] = []
        self._numbers = itertools.count(1)
        self._writes = 0  # writes under way
        self._idle = threading.Condition(self._lock)
        self.by_keys = 0  # selections brought up to date by the keys of the visits changes touched
        cursor = connect()
        try:
            cursor.execute(f"ATTACH ':memory:' AS {DATABASE}")
        finally:
            cursor.close()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Around each write of the store's data, until its change is recorded: no table is
        handed out meanwhile (the write may have committed before its change is recorded)."""
        with self._lock:
            self._writes += 1
        try:
            yield
        finally:
            with self._lock:
                self._writes -= 1
                self._idle.notify_all()

    def keep(
        self, sql: str, params: dict[str, Any], site_id: int | None = None, span: Span | None = None
    ) -> str:
        """The name of a table holding the rows of ``sql`` (a selection of ``site_id``'s rows; with
        ``span``, of the visits that started in it, each row with its visit's ``start``, ``sql``
        bounding their start by ``$kept_low`` and ``$kept_high`` too) as the store holds them now."""
        asked = {k: v for k, v in params.items() if k not in (LOW, HIGH)}
        key = sql + "\x00" + repr(sorted(asked.items())) + "\x00" + repr(site_id) + "\x00" + repr(span)
        if span is not None:
            asked.update({LOW: span[0], HIGH: span[1]})
        with self._lock:
            reading = self._reading.setdefault(key, threading.Lock())
        runs: list[Span] | None = None
        touched: tuple[Keys, int] | None = None
        with reading:
            with self._lock:
                while self._writes:  # a write under way: its commit may be seen already
                    self._idle.wait()
                entry = self._entries.get(key)
                version = self._changes.latest(site_id)
                if entry is not None and entry.version >= version:
                    entry.used = time.monotonic()
                    self._entries.move_to_end(key)
                    return entry.name
                if entry is not None and entry.span is not None and site_id is not None:
                    changed = self._changes.since(site_id, entry.version)
                    version = int(changed["number"])  # every change up to it is in ``changed``
                    runs = None if changed["everything"] else _runs(changed["spans"], entry.span)
                    if runs and entry.keyed:  # the same changes' keys (no write can record meanwhile)
                        touched = self._changes.touched(site_id, entry.version)
                    if runs is not None:
                        entry.version = version  # asks meanwhile wait on ``reading``
                        entry.used = time.monotonic()
                        self._entries.move_to_end(key)
                        if not runs:  # no change inside its span
                            return entry.name
            if entry is not None and entry.span is not None and runs is not None:
                if touched is not None and self._refresh_keys(entry, sql, asked, *touched):
                    return entry.name
                if touched is None and self._refresh(entry, sql, asked, runs):
                    return entry.name
                version = self._changes.latest(site_id)  # not brought up to date: read whole
            name = f"{DATABASE}.s{next(self._numbers)}"
            cursor = self._connect()
            try:
                cursor.execute(f"CREATE TABLE {name} AS {sql}", asked)
                found = cursor.execute(f"SELECT count(*) FROM {name}").fetchone()  # noqa: S608
                described = cursor.execute(f"SELECT * FROM {name} LIMIT 0").description or ()  # noqa: S608
                columns = len(described)
            finally:
                cursor.close()
            with self._lock:
                old = self._entries.pop(key, None)
                if old is not None:
                    self._retired.append(old)
                entry = _Entry(
                    name, version, int(found[0]) if found else 0, COLUMN_BYTES * columns, span=span
                )
                entry.keyed = span is not None and KEY in (column[0] for column in described)
                if entry.bytes > MOST_BYTES:  # too big to keep: this request's alone, dropped after its grace
                    self._retired.append(entry)
                    self._reading.pop(key, None)
                else:
                    self._entries[key] = entry
                    self._evict()
                gone = self._due()
            self._drop(gone)
            return name

    def _refresh(self, entry: _Entry, sql: str, params: dict[str, Any], runs: list[Span]) -> bool:
        """Selects again, in place, the rows of the visits that started in ``runs`` (False: it
        could not, the table is to be read whole)."""

        def write(cursor: duckdb.DuckDBPyConnection) -> None:
            for low, high in runs:
                bounds = {LOW: max(low, params[LOW]), HIGH: min(high, params[HIGH])}
                changed = f"start >= ${LOW} AND start < ${HIGH}"
                cursor.execute(f"DELETE FROM {entry.name} WHERE {changed}", bounds)  # noqa: S608
                cursor.execute(f"INSERT INTO {entry.name} {sql}", {**params, **bounds})

        return self._in_place(entry, write)

    def _refresh_keys(
        self, entry: _Entry, sql: str, params: dict[str, Any], keys: Keys, earliest: int
    ) -> bool:
        """Selects again, in place, the rows of the visits with these keys (``KEY``), whose starts
        are no earlier than ``earliest``: the only rows the changes since it was read touched
        (False: it could not, the table is to be read whole)."""
        import pyarrow as pa

        bounds = {LOW: max(earliest, params[LOW]), HIGH: params[HIGH]}

        def write(cursor: duckdb.DuckDBPyConnection) -> None:
            cursor.register("touched", pa.table({KEY: pa.array(keys, pa.uint64())}))
            touched = f"{KEY} IN (SELECT {KEY} FROM touched)"  # noqa: S608 (fixed names)
            cursor.execute(f"DELETE FROM {entry.name} WHERE {touched}")  # noqa: S608
            if bounds[LOW] < bounds[HIGH]:
                cursor.execute(
                    f"INSERT INTO {entry.name} SELECT * FROM ({sql}) WHERE {touched}",  # noqa: S608
                    {**params, **bounds},
                )

        done = self._in_place(entry, write)
        if done:
            with self._lock:
                self.by_keys += 1
        return done

    def _in_place(self, entry: _Entry, write: Callable[[duckdb.DuckDBPyConnection], None]) -> bool:
        """Runs ``write`` on ``entry``'s table in one transaction, then counts its rows (False:
        the write failed, or the table is now too big to keep: it is to be read whole)."""
        import duckdb  # here: the server process imports this module for its bounds' names alone

        cursor = self._connect()
        try:
            cursor.execute("BEGIN TRANSACTION")
            write(cursor)
            found = cursor.execute(f"SELECT count(*) FROM {entry.name}").fetchone()  # noqa: S608
            cursor.execute("COMMIT")
        except duckdb.Error:
            cursor.execute("ROLLBACK")
            return False
        finally:
            cursor.close()
        with self._lock:
            entry.rows = int(found[0]) if found else 0
            entry.used = time.monotonic()
            if entry.bytes > MOST_BYTES:
                return False
            self._evict()
        return True

    def _evict(self) -> None:
        """Retires the least recently used tables beyond ``MOST`` or ``MOST_BYTES`` (never the newest)."""
        while len(self._entries) > 1 and (
            len(self._entries) > MOST or sum(e.bytes for e in self._entries.values()) > MOST_BYTES
        ):
            key, entry = next(iter(self._entries.items()))
            del self._entries[key]
            self._reading.pop(key, None)
            self._retired.append(entry)

    def _due(self) -> list[str]:
        """The retired tables whose grace has passed (taken out of the list)."""
        now = time.monotonic()
        due = [e.name for e in self._retired if now - e.used > GRACE]
        self._retired = [e for e in self._retired if now - e.used <= GRACE]
        return due

    def _drop(self, names: list[str]) -> None:
        if not names:
            return
        cursor = self._connect()
        try:
            for name in names:
                cursor.execute(f"DROP TABLE IF EXISTS {name}")
        finally:
            cursor.close()

    def __len__(self) -> int:
        return len(self._entries)


def _runs(changed: list[tuple[int, int, int]], span: Span) -> list[Span]:
    """The stretches of ``span`` the changed spans (number, low, high) touch, adjacent ones merged;
    one covering them all when there are more than ``MOST_RUNS``."""
    inside = sorted((max(low, span[0]), min(high, span[1])) for _, low, high in changed)
    runs: list[list[int]] = []
    for low, high in inside:
        if high <= low:
            continue
        if runs and low <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], high)
        else:
            runs.append([low, high])
    if len(runs) > MOST_RUNS:
        return [(runs[0][0], max(high for _, high in runs))]
    return [(low, high) for low, high in runs]
