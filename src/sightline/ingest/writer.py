"""Group commit: one writer drains every waiting batch, stores them in ONE transaction, answers all.

There is no waiting window: while a commit runs, new batches queue up and form the next group,
so the group size follows the load by itself. A request is answered only after the transaction
holding its events committed (SQLite WAL with synchronous=FULL, or PostgreSQL), so an
acknowledged event survives a killed process. The queue is bounded in events; a batch that does
not fit is refused (429) before anything is promised.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, delete
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from sightline.ingest.checkpoint import WRITER_AUTOCHECKPOINT, WalCheckpointer
from sightline.sites.traffic import TrafficMarker
from sightline.storage import Database
from sightline.storage.tables.events import EVENT_COLUMNS, event_batches, events
from sightline.storage.types import utcnow

log = logging.getLogger("sightline.ingest")

BATCH_RETENTION = timedelta(days=7)  # a retry older than this is stored again
PRUNE_EVERY = 3600.0
BATCH_CHUNK = 500  # batch rows per INSERT: 4 parameters each, far below every engine's limit
# Event rows per INSERT: 256 x 19 parameters, below SQLite's (32,766) and PostgreSQL's (65,535)
# limits. A group is stored with statements of 256, 128, ..., 1 rows: at most 9 distinct ones,
# all in the driver's statement cache.
EVENT_CHUNK = 256
EVENT_WIDTH = len(EVENT_COLUMNS)


class StorageUnavailableError(Exception):
    """The group's transaction failed; none of its batches was stored."""


class QueueFullError(Exception):
    """The bounded queue has no room for the batch."""


@dataclass(slots=True)
class Pending:
    site_id: int
    batch_id: str
    events: int
    values: list[Any]  # the events' column values, row after row (EVENT_COLUMNS order)
    future: asyncio.Future[bool] = field(repr=False)

    @property
    def key(self) -> tuple[int, str]:
        return (self.site_id, self.batch_id)


@dataclass
class CommitStats:
    commits: int = 0
    failures: int = 0
    last_commit_ms: float | None = None
    last_group_batches: int = 0
    last_failure_at: float | None = None
    stored_events: int = 0
    stored_batches: int = 0
    duplicate_batches: int = 0


class Store:
    """The blocking half, run on the writer thread: one transaction per group."""

    def __init__(self, db: Database, marker: TrafficMarker) -> None:
        self.db = db
        self.marker = marker
        dialect = db.engine.dialect
        quote = dialect.identifier_preparer.quote
        mark = "?" if db.dialect == "sqlite" else "%s"
        # Names come from the schema, values travel as parameters: no per-row SQLAlchemy work.
        columns = ", ".join(quote(c) for c in EVENT_COLUMNS)
        self._insert_events_head = f"INSERT INTO {quote(events.name)} ({columns}) VALUES "  # noqa: S608
        self._event_row = "(" + ", ".join(mark for _ in EVENT_COLUMNS) + ")"
        self._mark = mark
        self._batch_sql: dict[int, str] = {}
        self._events_sql: dict[int, str] = {}
        # A server time as the driver takes it: on SQLite the UTC text SQLAlchemy's DateTime
        # stores ("2026-11-21 03:10:20.685059"), on PostgreSQL the aware datetime.
        self.time_param: Callable[[datetime], Any] = _sqlite_time if db.dialect == "sqlite" else _same
        if db.dialect == "sqlite":
            _bind_none_fast()
        self._last_prune = float("-inf")
        self._held: Connection | None = None
        driver = db.engine.dialect.loaded_dbapi
        # (database unreachable or busy, database refused the data): SQLAlchemy's and the driver's.
        self.errors: tuple[tuple[type[Exception], ...], tuple[type[Exception], ...]] = (
            (OperationalError, InterfaceError, driver.OperationalError, driver.InterfaceError),
            (DBAPIError, driver.Error),
        )

    def commit(self, group: Sequence[Pending]) -> set[tuple[int, str]]:
        """Store the group's new batches; returns the (site_id, batch_id) keys stored now."""
        now = utcnow()
        first: dict[tuple[int, str], Pending] = {}
        for pending in group:
            first.setdefault(pending.key, pending)
        received = self.time_param(now)
        batches = list(first.values())
        stored: set[tuple[int, str]] = set()
        conn = self._connection()
        try:
            self._store(conn, first, batches, received, stored, now)
        except Exception:
            self.release()  # the next group starts on a fresh connection
            raise
        return stored

    def _store(
        self,
        conn: Connection,
        first: dict[tuple[int, str], Pending],
        batches: list[Pending],
        received: Any,
        stored: set[tuple[int, str]],
        now: datetime,
    ) -> None:
        with conn.begin():
            # The driver's own cursor, in SQLAlchemy's transaction: no per-statement framework work
            # while this thread holds the interpreter lock the request handlers need.
            cursor = conn.connection.cursor()
            try:
                for start in range(0, len(batches), BATCH_CHUNK):
                    chunk = batches[start : start + BATCH_CHUNK]
                    params = [v for p in chunk for v in (p.site_id, p.batch_id, received, p.events)]
                    cursor.execute(self._insert_batches(len(chunk)), params)
                    stored.update((int(row[0]), str(row[1])) for row in cursor.fetchall())
                self._insert_events(cursor, first, stored)
            finally:
                cursor.close()
            due = self.marker.due(site for site, _ in stored)
            self.marker.touch(conn, due, now)
        self.marker.written(due)

    def _insert_events(
        self, cursor: Any, first: dict[tuple[int, str], Pending], stored: set[tuple[int, str]]
    ) -> None:
        """The new batches' events with a few multi-row INSERTs.

        Not ``executemany``: Python's sqlite3 releases and retakes the interpreter lock around
        every row's step, and each retake waits for the event loop thread to let go of it; a
        multi-row statement is bound in one go and steps once, without the lock.
        """
        values: list[Any] = []
        count = 0
        for key, pending in first.items():
            if key in stored:
                values += pending.values
                count += pending.events
        start = 0
        while count:
            size = EVENT_CHUNK if count >= EVENT_CHUNK else 1 << (count.bit_length() - 1)
            end = start + size * EVENT_WIDTH
            cursor.execute(self._insert_events_sql(size), values[start:end])
            start, count = end, count - size

    def _insert_events_sql(self, count: int) -> str:
        sql = self._events_sql.get(count)
        if sql is None:
            sql = self._events_sql[count] = self._insert_events_head + ", ".join([self._event_row] * count)
        return sql

    def _connection(self) -> Connection:
        """The writer's own connection, held between groups: no pool checkout (or PostgreSQL
        pre-ping round trip) per group, and on SQLite its own checkpoint threshold."""
        if self._held is None:
            conn = self.db.engine.connect()
            if self.db.dialect == "sqlite":
                conn.exec_driver_sql(f"PRAGMA wal_autocheckpoint={WRITER_AUTOCHECKPOINT}")
            conn.commit()
            self._held = conn
        return self._held

    def release(self) -> None:
        """Give the held connection back (after a failure, and at shutdown)."""
        if self._held is not None:
            held, self._held = self._held, None
            try:
                held.close()
            except Exception:
                log.warning("ingest: closing the writer's connection failed", exc_info=True)

    def _insert_batches(self, count: int) -> str:
        """INSERT of ``count`` batch rows that skips stored ones and returns the new ones' keys."""
        sql = self._batch_sql.get(count)
        if sql is None:
            row = "(" + ", ".join([self._mark] * 4) + ")"
            sql = (
                "INSERT INTO event_batches (site_id, batch_id, received_at, events) "  # noqa: S608
                f"VALUES {', '.join([row] * count)} "
                "ON CONFLICT (site_id, batch_id) DO NOTHING RETURNING site_id, batch_id"
            )
            self._batch_sql[count] = sql
        return sql

    def prune_due(self) -> bool:
        return time.monotonic() - self._last_prune >= PRUNE_EVERY

    def prune(self) -> int:
        """Forget batch ids older than BATCH_RETENTION."""
        self._last_prune = time.monotonic()
        with self.db.engine.begin() as conn:
            result = conn.execute(
                delete(event_batches).where(event_batches.c.received_at < utcnow() - BATCH_RETENTION)
            )
        return int(result.rowcount or 0)


class GroupCommitter:
    """The bounded queue and the writer thread that feeds ``Store``.

    The writer is a thread of its own that goes from one group straight to the next while
    batches wait: the event loop only queues batches and receives the outcome of each group, so
    no round trip through the loop sits between two commits.
    """

    def __init__(self, store: Store, capacity: int) -> None:
        self.store = store
        self.checkpointer = WalCheckpointer(store.db) if store.db.dialect == "sqlite" else None
        self.capacity = capacity
        self.stats = CommitStats()
        self.queued_events = 0  # waiting or being committed; changed on the event loop only
        # Batches waiting for the writer, then None when it should stop. A C queue: putting a
        # batch costs the event loop well under a microsecond (a Condition cost several).
        self._queue: queue.SimpleQueue[Pending | None] = queue.SimpleQueue()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self._stopping

    def enqueue(self, site_id: int, batch_id: str, size: int, values: list[Any]) -> Pending:
        """Queue a batch of ``size`` events (``values``: their rows' values, row after row) for
        the next group; QueueFullError at once when it does not fit."""
        if self.queued_events + size > self.capacity or not self.running:
            raise QueueFullError
        self.queued_events += size
        assert self._loop is not None  # running
        # The loop kept by start(): asyncio.get_running_loop() costs a getpid() system call.
        pending = Pending(site_id, batch_id, size, values, self._loop.create_future())
        self._queue.put(pending)
        return pending

    @staticmethod
    async def committed(pending: Pending) -> bool:
        """Wait for the batch's transaction: True when stored now, False when it was stored before.

        Raises StorageUnavailableError when the transaction failed (nothing of it was stored).
        """
        return await pending.future

    def start(self) -> None:
        if self._thread is None:
            self._loop = asyncio.get_running_loop()
            self._thread = threading.Thread(target=self._work, name="ingest-writer", daemon=True)
            self._thread.start()

    async def stop(self) -> None:
        """Commit what is waiting, then stop the writer."""
        if self._thread is not None:
            self._stopping = True
            self._queue.put(None)
            await asyncio.to_thread(self._thread.join)
            self._thread = None
        if self.checkpointer is not None:
            self.checkpointer.close()

    def _work(self) -> None:
        """The writer thread: take every waiting batch, commit them, hand the outcome to the loop."""
        assert self._loop is not None
        try:
            stopping = False
            while not stopping:
                group, stopping = self._take()
                if not group:
                    continue
                started = time.perf_counter()
                try:
                    stored, refused = self._commit(group)
                except Exception:
                    log.exception("ingest: a group of %d batches was not stored", len(group))
                    outcome: tuple[set[tuple[int, str]], set[tuple[int, str]]] | None = None
                else:
                    outcome = (stored, refused)
                elapsed = (time.perf_counter() - started) * 1000
                try:
                    self._loop.call_soon_threadsafe(self._finish, group, outcome, elapsed)
                except RuntimeError:  # the loop is gone: the process is ending
                    return
                if self.checkpointer is not None:
                    self.checkpointer.poke()
                if self.store.prune_due():
                    self._prune()
        finally:
            self.store.release()

    def _take(self) -> tuple[list[Pending], bool]:
        """Wait for a batch, then take every batch waiting: (the group, whether to stop after it)."""
        item = self._queue.get()
        group: list[Pending] = []
        take = self._queue.get_nowait
        while item is not None:
            group.append(item)
            try:
                item = take()
            except queue.Empty:
                return group, False
        return group, True

    def _finish(
        self,
        group: list[Pending],
        outcome: tuple[set[tuple[int, str]], set[tuple[int, str]]] | None,
        elapsed_ms: float,
    ) -> None:
        """On the event loop: account for the group and answer its requests."""
        self.queued_events -= sum(p.events for p in group)
        if outcome is None:
            self.stats.failures += 1
            self.stats.last_failure_at = time.monotonic()
            for pending in group:
                if not pending.future.done():
                    pending.future.set_exception(StorageUnavailableError())
            return
        self.stats.commits += 1
        self.stats.last_commit_ms = round(elapsed_ms, 3)
        self.stats.last_group_batches = len(group)
        self._answer(group, *outcome)

    def _commit(self, group: list[Pending]) -> tuple[set[tuple[int, str]], set[tuple[int, str]]]:
        """(stored keys, refused keys) of the group."""
        unavailable, refused_data = self.store.errors
        try:
            return self.store.commit(group), set()
        except unavailable:
            raise
        except refused_data:
            if len(group) == 1:
                raise
        # One batch the database refuses must not sink the others: store them one by one.
        log.warning("ingest: retrying a refused group of %d batches one by one", len(group))
        stored: set[tuple[int, str]] = set()
        refused: set[tuple[int, str]] = set()
        for pending in group:
            try:
                stored |= self.store.commit([pending])
            except refused_data:
                log.exception("ingest: the database refused batch %s", pending.batch_id)
                refused.add(pending.key)
        return stored, refused

    def _answer(
        self, group: list[Pending], stored: set[tuple[int, str]], refused: set[tuple[int, str]]
    ) -> None:
        answered: set[tuple[int, str]] = set()
        for pending in group:
            if pending.future.done():
                continue
            if pending.key in refused:
                pending.future.set_exception(StorageUnavailableError())
                continue
            new = pending.key in stored and pending.key not in answered
            answered.add(pending.key)
            if new:
                self.stats.stored_batches += 1
                self.stats.stored_events += pending.events
            else:
                self.stats.duplicate_batches += 1
            pending.future.set_result(new)

    def _prune(self) -> None:
        try:
            removed = self.store.prune()
        except Exception:
            log.exception("ingest: pruning old batch ids failed")
            return
        if removed:
            log.info("ingest: forgot %d batch ids older than %s", removed, BATCH_RETENTION)


def _bind_none_fast() -> None:
    """Make Python's sqlite3 bind None without its slow adaptation lookup.

    sqlite3 (3.11) looks every parameter that is not an int, float or str up in its adapter
    registry and then, finding none, probes ``__adapt__`` and ``__conform__`` (about 0.2 µs per
    None; an event row has 4-6 of them). With an adapter registered for ``NoneType`` the lookup
    ends at once, and the adapter, ``{}.get``, a C function, returns None unchanged: still
    stored as NULL (a 256-row INSERT: 2.9 -> 2.2 µs per row). Process-wide, and harmless for
    every other use of sqlite3: None is bound as NULL either way.
    """
    none: dict[None, None] = {}
    sqlite3.register_adapter(type(None), none.get)


def _same(value: datetime) -> datetime:
    return value


def _sqlite_time(value: datetime) -> str:
    if value.tzinfo is not UTC:
        value = value.astimezone(UTC)
    return value.replace(tzinfo=None).isoformat(" ", "microseconds")
