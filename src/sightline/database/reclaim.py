"""Giving a SQLite database's free pages back to the file system, a few at a time.

SQLite keeps the pages that deleted rows leave (its free list) and reuses them, but the file does
not shrink by itself. A database created with ``auto_vacuum=INCREMENTAL`` (every new one:
``database._sqlite_pragmas``; an older one after ``sightline compact``) keeps pointer maps, so
``PRAGMA incremental_vacuum(N)`` can move the last pages of the file into free ones and cut the
file's end. The store process runs it after each transaction of the log's trim and once per
maintenance round (``store.maintenance``), never on ingest's path.

Each step is a write transaction of its own, which ingest's commits wait for (``busy_timeout``),
so ``Reclaimer`` sizes its steps by time (``StepSize``, which the trim uses too): it halves the
pages of a step that took longer than ``STEP_MS`` and doubles them (up to ``MAX_PAGES``) after a
quick one. A step costs little while the
free list is short (freed by the trim's last 5,000 events: about 10 ms for 200 pages); with a long
one (hundreds of thousands of pages freed at once) finding a free page takes milliseconds, and
steps shrink to a few pages. Under WAL the cut reaches the file at the next checkpoint that copies
the whole WAL back; the store asks for one (passive) after a round that gave pages back.

``FreePages`` reads how much of the file is free, for health and ``sightline compact``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from sightline.database.engines import Database

log = logging.getLogger("sightline.database")

STEP_MS = 20.0  # a step that took longer gets fewer pages next time
MIN_PAGES, MAX_PAGES = 4, 4096
REST_MS = 30.0  # the write lock left free between two steps at least
INCREMENTAL = 2  # PRAGMA auto_vacuum's value for incremental
MIB = 1024 * 1024


class StepSize:
    """How much one write transaction may do, sized by how long the last one held the write lock:
    halved after a step longer than ``target_ms``, doubled after one under a quarter of it. The
    time is wall time, so a step that waited (for the lock, or for a core: the store process runs
    niced, and while it is descheduled holding the lock ingest's commits wait) shrinks the next.

    Between two steps ``rest`` leaves the lock free for ``REST_MS``, or as long as the step took
    if longer: SQLite's busy handler is no queue (a waiting commit sleeps 1, 2, 5, ... 25 ms and
    tries again), so back-to-back steps would starve ingest's writer (measured: p99 0.15-0.8 s)."""

    def __init__(self, start: int, low: int, high: int, target_ms: float) -> None:
        self.value, self.low, self.high, self.target_ms = start, low, high, target_ms
        self.longest_ms = self.last_ms = 0.0  # the longest step since start, and the last one
        self.steps = 0

    def rest(self) -> None:
        time.sleep(max(REST_MS, self.last_ms) / 1000)

    def took(self, ms: float) -> None:
        self.steps += 1
        self.last_ms = ms
        self.longest_ms = max(self.longest_ms, ms)
        if ms > self.target_ms:
            self.value = max(self.low, self.value // 2)
        elif ms < self.target_ms / 4:
            self.value = min(self.high, self.value * 2)


@dataclass(frozen=True)
class FreePages:
    """How much of a SQLite database file its free list takes."""

    page_size: int
    page_count: int
    free_count: int
    auto_vacuum: int  # 0 none, 1 full, 2 incremental

    @property
    def file_bytes(self) -> int:
        return self.page_size * self.page_count

    @property
    def free_bytes(self) -> int:
        return self.page_size * self.free_count

    @property
    def share(self) -> float:
        return self.free_count / self.page_count if self.page_count else 0.0

    @property
    def incremental(self) -> bool:
        return self.auto_vacuum == INCREMENTAL

    def as_dict(self) -> dict[str, Any]:
        return {
            "file_bytes": self.file_bytes,
            "free_bytes": self.free_bytes,
            "auto_vacuum": {0: "none", 1: "full", 2: "incremental"}.get(self.auto_vacuum, "unknown"),
        }


def free_pages(db: Database) -> FreePages | None:
    """The SQLite file's free list (None on PostgreSQL)."""
    if db.dialect != "sqlite":
        return None
    with db.read() as conn:
        values = [
            int(conn.exec_driver_sql(f"PRAGMA {name}").scalar_one())
            for name in ("page_size", "page_count", "freelist_count", "auto_vacuum")
        ]
        conn.rollback()
    return FreePages(*values)


class Reclaimer:
    """Bounded ``incremental_vacuum`` steps on one database (the store process's)."""

    def __init__(self, db: Database, step_ms: float = STEP_MS) -> None:
        self.db = db
        self.pages = StepSize(256, MIN_PAGES, MAX_PAGES, step_ms)  # pages per step
        self.given_back = 0  # pages since start
        self._enabled: bool | None = None

    @property
    def enabled(self) -> bool:
        """SQLite with incremental auto-vacuum (read once: only a VACUUM, server stopped, changes it)."""
        if self._enabled is None:
            found = free_pages(self.db)
            self._enabled = found is not None and found.incremental
        return self._enabled

    def run(self, budget_s: float) -> int:
        """Steps until the free list is empty or ``budget_s`` seconds passed; returns the pages
        given back (the file shrinks at the next checkpoint)."""
        if not self.enabled:
            return 0
        deadline = time.monotonic() + budget_s
        given = 0
        raw = self.db.engine.raw_connection()
        try:
            sqlite = raw.driver_connection
            while True:
                free = int(sqlite.execute("PRAGMA freelist_count").fetchone()[0])  # type: ignore[union-attr]
                if free == 0:
                    break
                pages = min(free, self.pages.value)
                started = time.perf_counter()
                # executescript steps the pragma to its end; execute() would move one page only.
                sqlite.executescript(f"PRAGMA incremental_vacuum({pages});")  # type: ignore[union-attr]
                self.pages.took((time.perf_counter() - started) * 1000)
                given += pages
                if time.monotonic() >= deadline:
                    break
                self.pages.rest()
        finally:
            raw.close()
        self.given_back += given
        return given

    def checkpoint(self) -> None:
        """A passive WAL checkpoint (it never waits for readers or writers): the cut reaches the
        file when the WAL is copied back in full."""
        with self.db.read() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            conn.rollback()


ADVISE_SHARE = 0.25  # a free share from which health and the log suggest `sightline compact`
ADVISE_BYTES = 64 * MIB


def advice(found: FreePages | None) -> str | None:
    """What to do about a file that is largely free pages it will not give back by itself."""
    if found is None or found.incremental or found.free_bytes < ADVISE_BYTES or found.share < ADVISE_SHARE:
        return None
    return (
        f"{found.free_bytes // MIB} MiB of the SQLite database ({found.share:.0%} of its file) are "
        "free pages, which it reuses but does not give back to the file system: it was created "
        "before Sightline did that by itself. Stop the server and run `sightline compact` once; "
        "from then on the space deleted events leave is given back automatically."
    )
