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
store. It is valid only while nothing was written to that site since it was read: every write the
store makes records, once committed, the sites it changed (``store.changes``: a fed batch, an
erasure, a retention cut, the self-check's refill, a deleted site; a rebuild changes every site),
and a selection read before the site's latest change is read again when next asked for. Every write
holds ``writing`` from its start until its change is recorded, and an ask waits while a write is
under way, so a table handed out holds every write committed before the ask (a query that saw a
commit never gets a table read before it: ``reports.table_days`` keeps figures read from it with
the change number asked before). A selection asked without its site is dropped by any change.
(Rewriting spans in site order changes no row's content and records nothing.) So an erased
visitor is never counted from a kept table, and a report never mixes a kept selection with data it
missed, while a batch fed for another site leaves the selection as it is.

A table no longer handed out is dropped ``GRACE`` seconds later (a query may still be on its way
with its name); at most ``MOST`` tables and ``MOST_ROWS`` rows are kept, the least recently used
going first; a selection of more rows than that serves the request that read it and is then
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
from typing import Any

import duckdb

from sightline.store.changes import Changes

DATABASE = "kept"
MOST = 16  # tables kept at once
MOST_ROWS = 3_000_000  # rows of every kept table together (a visit's row: about 48 bytes in memory)
GRACE = 30.0  # seconds a table stays after it was last handed out, once stale or evicted


@dataclass
class _Entry:
    name: str
    version: int
    rows: int
    used: float = field(default_factory=time.monotonic)


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

    def keep(self, sql: str, params: dict[str, Any], site_id: int | None = None) -> str:
        """The name of a table holding the rows of ``sql`` (a selection of ``site_id``'s rows) as
        the store holds them now."""
        key = sql + "\x00" + repr(sorted(params.items())) + "\x00" + repr(site_id)
        with self._lock:
            reading = self._reading.setdefault(key, threading.Lock())
        with reading:
            with self._lock:
                while self._writes:  # a write under way: its commit may be seen already
                    self._idle.wait()
                entry = self._entries.get(key)
                version = self._changes.latest(site_id)
                if entry is not None and entry.version == version:
                    entry.used = time.monotonic()
                    self._entries.move_to_end(key)
                    return entry.name
            name = f"{DATABASE}.s{next(self._numbers)}"
            cursor = self._connect()
            try:
                cursor.execute(f"CREATE TABLE {name} AS {sql}", params)
                found = cursor.execute(f"SELECT count(*) FROM {name}").fetchone()  # noqa: S608
            finally:
                cursor.close()
            with self._lock:
                old = self._entries.pop(key, None)
                if old is not None:
                    self._retired.append(old)
                entry = _Entry(name, version, int(found[0]) if found else 0)
                if entry.rows > MOST_ROWS:  # too big to keep: this request's alone, dropped after its grace
                    self._retired.append(entry)
                    self._reading.pop(key, None)
                else:
                    self._entries[key] = entry
                    self._evict()
                gone = self._due()
            self._drop(gone)
            return name

    def _evict(self) -> None:
        """Retires the least recently used tables beyond ``MOST`` or ``MOST_ROWS`` (never the newest)."""
        while len(self._entries) > 1 and (
            len(self._entries) > MOST or sum(e.rows for e in self._entries.values()) > MOST_ROWS
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
