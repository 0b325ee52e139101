"""Work the store process does beside feeding: trimming the durable log once its events are in
the store, when ``--event-log-retention-days`` says so."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from sqlalchemy import delete, func, select

from sightline.storage import Database
from sightline.storage.schema import events
from sightline.storage.types import utcnow
from sightline.store.engines import Engine

log = logging.getLogger("sightline.store")
EVERY = 60.0  # seconds between two trims
CHUNK = 5000  # events deleted per transaction (ingest's commits never wait long)


class Upkeep:
    def __init__(self, db: Database, engine: Engine, log_retention_days: int | None) -> None:
        self.db = db
        self.engine = engine
        self.days = log_retention_days
        self._next = 0.0
        self.trimmed = 0

    def maybe_run(self) -> None:
        if self.days is None or time.monotonic() < self._next:
            return
        self._next = time.monotonic() + EVERY
        self.trim()

    def trim(self) -> int:
        """Deletes log events older than the retention that the store already holds."""
        if self.days is None:
            return 0
        cutoff = utcnow() - timedelta(days=self.days)
        fed = self.engine.watermark()
        removed = 0
        while True:
            with self.db.begin() as conn:
                ids = select(events.c.id).where(events.c.id <= fed, events.c.time < cutoff).limit(CHUNK)
                chosen = [row[0] for row in conn.execute(ids)]
                if not chosen:
                    break
                conn.execute(delete(events).where(events.c.id.in_(chosen)))
            removed += len(chosen)
        if removed:
            self.trimmed += removed
            log.info(
                "trimmed %d events older than %d days from the log (they are in the store)",
                removed,
                self.days,
            )
        return removed


def log_size(db: Database) -> int:
    with db.read() as conn:
        return int(conn.execute(select(func.count()).select_from(events)).scalar_one())
