"""Work the store process does between two feeding steps, never during one:

- **tasks** from the SQL table ``store_tasks``: erasing one visitor of a site (``erase_visitor``:
  the visitor code is hashed as the store keys it, and cleared from the task once applied) and
  cutting a site's events before a date (``prune_before``); each is marked done when applied;
- **deleted sites** (``deleted_sites``): their events and visits leave the store;
- **the log's retention** (``--event-log-retention-days``): log events older than that which the
  store already holds are deleted from the log, in small transactions;
- **the SQLite file's free pages** (``database.reclaim``): after each of the trim's transactions,
  and at the end of each round, the pages deleted rows left (the trim's, a retention's, an
  erasure's) are given back to the file system in short steps.

The trim and the free pages take at most ``BUDGET_SECONDS`` between two feeding steps: a trim
with more to do (the first after turning retention on for a long log: millions of events) goes on
after the next step instead of holding the feed, so reports stay fresh while it runs.

Because it runs after a feeding step has written everything it read, an erasure applied here
also removes what that step fed from rows the erasure has since deleted from the log.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select, update

from sightline.database import Database
from sightline.database.reclaim import MIB, Reclaimer, StepSize, advice, free_pages
from sightline.database.schema import deleted_sites, events, store_tasks
from sightline.database.tables.privacy import ERASE_VISITOR, PRUNE_BEFORE
from sightline.database.types import utcnow
from sightline.store.changes import EVERYTHING, Spans, hours_of
from sightline.store.dialects import Params
from sightline.store.engines import Engine
from sightline.store.feed import Feeder, key_of, micros

log = logging.getLogger("sightline.store")
EVERY = 30.0  # seconds between two looks at deleted sites and the log's retention
CHUNK = 5000  # log events deleted per transaction at most; fewer when one takes over TRIM_MS
MIN_CHUNK, TRIM_MS = 100, 20.0  # ingest's commits wait for each transaction: they never wait long
BUDGET_SECONDS = 1.0  # the trim and the free pages, between two feeding steps at most


class Maintenance:
    def __init__(self, db: Database, engine: Engine, feeder: Feeder, log_retention_days: int | None) -> None:
        self.db = db
        self.engine = engine
        self.feeder = feeder
        self.days = log_retention_days
        self._next = 0.0
        self.trimmed = 0
        self.tasks_done = 0
        self._purged: set[int] = set()
        self.reclaimer = Reclaimer(db)
        self.chunk = StepSize(CHUNK, MIN_CHUNK, CHUNK, TRIM_MS)
        self._advised = False
        self.trimming = False  # the last trim stopped at its budget with more to delete
        self._trim_total = self._trim_given = 0  # this trim's, until it is done (then logged)

    def run(self) -> None:
        """Pending tasks now; deleted sites and the log's retention every ``EVERY`` seconds, and
        a trim that stopped at its budget again after every feeding step until it is done."""
        self.apply_tasks()
        due = time.monotonic() >= self._next
        if due:
            self._next = time.monotonic() + EVERY
            self.purge_deleted_sites()
        if due or self.trimming:
            before = self.reclaimer.given_back
            deadline = time.monotonic() + BUDGET_SECONDS
            self.trim(deadline)
            if not self.trimming:
                self.reclaim(deadline)
            if self.reclaimer.given_back > before:
                self.reclaimer.checkpoint()

    def _delete(self, table: str, condition: str, params: Params, changed: Spans) -> None:
        self.engine.execute(f"DELETE FROM {table} WHERE {condition}", params.values, changed)  # noqa: S608

    def apply_tasks(self) -> int:
        with self.db.read() as conn:
            pending = conn.execute(
                select(store_tasks.c.id, store_tasks.c.site_id, store_tasks.c.kind)
                .add_columns(store_tasks.c.visitor_id, store_tasks.c.before)
                .where(store_tasks.c.done_at.is_(None))
                .order_by(store_tasks.c.id)
                .limit(100)
            ).all()
        for task_id, site_id, kind, visitor_id, before in pending:
            self._apply(int(site_id), str(kind), visitor_id, before)
            with self.db.begin() as conn:
                conn.execute(
                    update(store_tasks)
                    .where(store_tasks.c.id == task_id)
                    .values(done_at=utcnow(), visitor_id=None)
                )
            self.tasks_done += 1
        return len(pending)

    def _apply(self, site_id: int, kind: str, visitor_id: str | None, before: Any) -> None:
        params = Params(self.engine.dialect)
        site = params.bind(site_id)
        if kind == ERASE_VISITOR and visitor_id is not None:
            visitor = params.bind(key_of(site_id, visitor_id))
            chosen = f"site_id = {site} AND visitor = {visitor}"
            hours = self.engine.query(  # where the visitor's rows count: its events, its visits' starts
                f"SELECT time FROM events WHERE {chosen} UNION ALL "  # noqa: S608
                f"SELECT start FROM {self.engine.dialect.visits} WHERE {chosen}",
                params.values,
            )
            changed = hours_of([site_id] * len(hours), [int(row[0]) for row in hours])
            for table in ("events", "visits"):
                self._delete(table, chosen, params, changed)
        elif kind == PRUNE_BEFORE and before is not None:
            cut = params.bind(micros(before))
            changed = {site_id: [(EVERYTHING[0], micros(before))]}  # a visit cut began before it
            self._delete("events", f"site_id = {site} AND time < {cut}", params, changed)
            self._delete("visits", f"site_id = {site} AND last < {cut}", params, changed)

    def purge_deleted_sites(self) -> int:
        with self.db.read() as conn:
            gone = {int(row[0]) for row in conn.execute(select(deleted_sites.c.id))} - self._purged
        for site_id in sorted(gone):
            params = Params(self.engine.dialect)
            site = params.bind(site_id)
            for table in ("events", "visits"):
                self._delete(table, f"site_id = {site}", params, {site_id: [EVERYTHING]})
            self._purged.add(site_id)
        return len(gone)

    def trim(self, deadline: float | None = None) -> int:
        """Deletes log events older than the retention that the store already holds, until none is
        left or ``deadline`` (``time.monotonic()``) passed; ``trimming`` says whether more is left."""
        if self.days is None:
            return 0
        cutoff = utcnow() - timedelta(days=self.days)
        fed = self.engine.watermark()
        removed = given = 0
        self.trimming = False
        while True:
            with self.db.begin() as conn:
                ids = select(events.c.id).where(events.c.id <= fed, events.c.time < cutoff)
                chosen = [row[0] for row in conn.execute(ids.limit(self.chunk.value))]
                if not chosen:
                    break
                started = time.perf_counter()  # the write lock is taken here, held to the commit
                conn.execute(delete(events).where(events.c.id.in_(chosen)))
            self.chunk.took((time.perf_counter() - started) * 1000)
            removed += len(chosen)
            self.chunk.rest()  # and the reclaimer rests after each of its steps
            left = BUDGET_SECONDS if deadline is None else deadline - time.monotonic()
            given += self.reclaimer.run(max(0.0, left))
            if deadline is not None and time.monotonic() >= deadline:
                self.trimming = True  # the rest after the next feeding step
                break
        self.trimmed += removed
        self._trim_total += removed
        self._trim_given += given
        if self._trim_total and not self.trimming:
            log.info(
                "trimmed %d log events older than %d days (the store holds them)%s",
                self._trim_total,
                self.days,
                self._given(self._trim_given),
            )
            self._trim_total = self._trim_given = 0
        return removed

    def reclaim(self, deadline: float | None = None) -> int:
        """Free pages left by other deletions, until ``deadline`` (at least one step); on a
        database that cannot give them back, a warning once when they are a large share of the file."""
        if self.reclaimer.enabled:
            left = BUDGET_SECONDS if deadline is None else deadline - time.monotonic()
            return self.reclaimer.run(max(0.0, left))
        if not self._advised and (text := advice(free_pages(self.db))) is not None:
            self._advised = True
            log.warning(text)
        return 0

    def _given(self, pages: int) -> str:
        found = free_pages(self.db) if pages else None
        if found is None:
            return ""
        steps = self.reclaimer.pages
        return (
            f"; {pages * found.page_size // MIB} MiB of the database file given back (since start: "
            f"{steps.steps} steps, the longest {steps.longest_ms:.0f} ms; {self.chunk.steps} "
            f"deletions, the longest {self.chunk.longest_ms:.0f} ms)"
        )
