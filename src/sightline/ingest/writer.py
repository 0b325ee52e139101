"""Group commit: one writer drains every waiting batch, stores them in ONE transaction, answers all.

There is no waiting window: while a commit runs, new batches queue up and form the next group,
so the group size follows the load by itself. A request is answered only after the transaction
holding its events committed (SQLite WAL with synchronous=FULL, or PostgreSQL), so an
acknowledged event survives a killed process. The queue is bounded in events; a batch that does
not fit is refused (429) before anything is promised.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
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


class StorageUnavailableError(Exception):
    """The group's transaction failed; none of its batches was stored."""


class QueueFullError(Exception):
    """The bounded queue has no room for the batch."""


@dataclass(slots=True)
class Pending:
    site_id: int
    batch_id: str
    rows: list[tuple[Any, ...]]
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
        # Names come from the schema, values travel as parameters: executemany without per-row
        # SQLAlchemy processing (the hot path's biggest cost otherwise).
        columns = ", ".join(quote(c) for c in EVENT_COLUMNS)
        marks = ", ".join(mark for _ in EVENT_COLUMNS)
        self._insert_events = f"INSERT INTO {quote(events.name)} ({columns}) VALUES ({marks})"  # noqa: S608
        self._mark = mark
        self._batch_sql: dict[int, str] = {}
        # A server time as the driver takes it: on SQLite the UTC text SQLAlchemy's DateTime
        # stores ("2026-11-21 03:10:20.685059"), on PostgreSQL the aware datetime.
        self.time_param: Callable[[datetime], Any] = _sqlite_time if db.dialect == "sqlite" else _same
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
                    params = [v for p in chunk for v in (p.site_id, p.batch_id, received, len(p.rows))]
                    cursor.execute(self._insert_batches(len(chunk)), params)
                    stored.update((int(row[0]), str(row[1])) for row in cursor.fetchall())
                rows = [row for key, pending in first.items() if key in stored for row in pending.rows]
                if rows:
                    cursor.executemany(self._insert_events, rows)
            finally:
                cursor.close()
            due = self.marker.due(site for site, _ in stored)
            self.marker.touch(conn, due, now)
        self.marker.written(due)

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
    """The asynchronous half: the bounded queue and the writer task that feeds ``Store``."""

    def __init__(self, store: Store, capacity: int) -> None:
        self.store = store
        self.checkpointer = WalCheckpointer(store.db) if store.db.dialect == "sqlite" else None
        self.capacity = capacity
        self.stats = CommitStats()
        self.queued_events = 0
        self._waiting: list[Pending] = []
        self._wake: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._busy = False
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-writer")

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def enqueue(self, site_id: int, batch_id: str, rows: list[tuple[Any, ...]]) -> Pending:
        """Queue a batch for the next group; QueueFullError at once when it does not fit."""
        size = len(rows)
        if self.queued_events + size > self.capacity or not self.running:
            raise QueueFullError
        self.queued_events += size
        pending = Pending(site_id, batch_id, rows, asyncio.get_running_loop().create_future())
        self._waiting.append(pending)
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)
        return pending

    @staticmethod
    async def committed(pending: Pending) -> bool:
        """Wait for the batch's transaction: True when stored now, False when it was stored before.

        Raises StorageUnavailableError when the transaction failed (nothing of it was stored).
        """
        return await pending.future

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="ingest-writer")

    async def stop(self) -> None:
        """Commit what is waiting, then stop the writer."""
        if self._task is not None:
            while (self._waiting or self._busy) and self.running:
                await asyncio.sleep(0.01)
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._executor.submit(self.store.release)
        self._executor.shutdown(wait=True)
        if self.checkpointer is not None:
            self.checkpointer.close()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self._waiting:
                self._wake = loop.create_future()
                await self._wake
                self._wake = None
            group, self._waiting = self._waiting, []
            size = sum(len(p.rows) for p in group)
            started = time.perf_counter()
            self._busy = True
            try:
                stored, refused = await loop.run_in_executor(self._executor, self._commit, group)
            except Exception:
                self.stats.failures += 1
                self.stats.last_failure_at = time.monotonic()
                for pending in group:
                    if not pending.future.done():
                        pending.future.set_exception(StorageUnavailableError())
                continue
            finally:
                self._busy = False
                self.queued_events -= size
            self.stats.commits += 1
            self.stats.last_commit_ms = round((time.perf_counter() - started) * 1000, 3)
            self.stats.last_group_batches = len(group)
            self._answer(group, stored, refused)
            if self.checkpointer is not None:
                self.checkpointer.poke()
            if self.store.prune_due():
                loop.run_in_executor(self._executor, self._prune)

    def _commit(self, group: list[Pending]) -> tuple[set[tuple[int, str]], set[tuple[int, str]]]:
        """(stored keys, refused keys) of the group."""
        unavailable, refused_data = self.store.errors
        try:
            return self.store.commit(group), set()
        except unavailable:
            log.exception("ingest: the database refused a group of %d batches", len(group))
            raise
        except refused_data:
            if len(group) == 1:
                log.exception("ingest: the database refused batch %s", group[0].batch_id)
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
                self.stats.stored_events += len(pending.rows)
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


def _same(value: datetime) -> datetime:
    return value


def _sqlite_time(value: datetime) -> str:
    if value.tzinfo is not UTC:
        value = value.astimezone(UTC)
    return value.replace(tzinfo=None).isoformat(" ", "microseconds")
