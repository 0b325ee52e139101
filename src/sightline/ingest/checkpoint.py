"""SQLite WAL checkpoints off the group commit's path.

By default SQLite copies the write-ahead log into the database file inside the commit that makes
the log pass 1,000 pages, so every few dozen group commits one of them (and every request waiting
on it) takes several times longer. The ingest writer's own connection (in the writer process)
raises that threshold to ``WRITER_AUTOCHECKPOINT`` pages, and this checkpointer runs
``PRAGMA wal_checkpoint(PASSIVE)`` on a thread and connection of the server's process, at most
every ``INTERVAL`` seconds while groups are committed: the copying is a system call per page,
and the writer's core is the busier one. A passive
checkpoint never blocks the writer; when the writer does reach the threshold, the log is already
copied, so its own checkpoint only has to reset it. Durability is unchanged: a commit is on disk
in the log (synchronous=FULL) before it is acknowledged.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor

from sightline.database import Database

log = logging.getLogger("sightline.ingest")

INTERVAL = 0.5
WRITER_AUTOCHECKPOINT = 10_000  # pages (40 MiB of log with 4 KiB pages)


class WalCheckpointer:
    def __init__(self, db: Database, interval: float = INTERVAL) -> None:
        self.db = db
        self.interval = interval
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-checkpoint")
        self._running: Future[None] | None = None
        self._last = 0.0

    def poke(self) -> None:
        """After a commit: start a passive checkpoint unless one runs or one ran a moment ago."""
        if self._running is not None and not self._running.done():
            return
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        self._running = self._executor.submit(self._checkpoint)

    def _checkpoint(self) -> None:
        try:
            with self.db.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                conn.rollback()
        except Exception:
            log.exception("ingest: a background WAL checkpoint failed")

    def close(self) -> None:
        self._executor.shutdown(wait=True)
