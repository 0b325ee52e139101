"""The class "the database cannot be reached or written right now", and what health says about it.

A stopped or unreachable PostgreSQL, a SQLite file locked by another writer past the busy timeout,
a full disk or a read-only file all surface as driver errors deep inside a request. Every surface
asks ``is_unavailable`` and answers **503** ``database_unavailable`` with ``Retry-After`` instead
of a 500 (the console's exception handlers and session guard, ingest's outer guard), and notes the
failure in the database's ``OutageLog`` so ``/api/health`` can name the cause and the fix in plain
words. Imports nothing from the rest of Sightline.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass

from sqlalchemy import exc as sa_exc

RECENT_SECONDS = 60.0  # a failure this recent still shows in health

# SQLite reports schema and programming mistakes as OperationalError too; those are bugs (500).
# Not outages but bugs or bad data (an overflowing SUM, a value of the wrong type): a 500, never
# a 503 that sends clients to retry while health says all is well.
_SQLITE_BUGS = (
    "no such table",
    "no such column",
    "syntax error",
    "has no column",
    "integer overflow",
    "datatype mismatch",
    "too big",
    "out of range",
)


@dataclass(frozen=True)
class Cause:
    kind: str  # unreachable | locked | disk_full | read_only
    problem: str
    fix: str


CAUSES = {
    "unreachable": Cause(
        "unreachable",
        "Sightline cannot connect to the database.",
        "Start the database server (or fix --database-url); Sightline reconnects by itself.",
    ),
    "locked": Cause(
        "locked",
        "The database file is locked by another program, so nothing can be saved.",
        "Stop the other program or process that has the SQLite file open for writing "
        "(a second Sightline, a backup tool or a sqlite3 shell in a transaction).",
    ),
    "disk_full": Cause(
        "disk_full",
        "The disk holding the database is full, so nothing can be saved.",
        "Free space on the disk of the data directory, or move it to a larger disk.",
    ),
    "read_only": Cause(
        "read_only",
        "The database is read-only, so nothing can be saved.",
        "Give the user running Sightline write access to the database file and its directory.",
    ),
}


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 10:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def cause_of(exc: BaseException) -> Cause | None:
    """The outage ``exc`` shows, or ``None`` when it is not an outage (a bug, bad data)."""
    for item in _chain(exc):
        text = str(item).lower()
        if isinstance(item, sa_exc.TimeoutError | sa_exc.DisconnectionError):
            return CAUSES["unreachable"]
        if isinstance(item, sa_exc.OperationalError | sa_exc.InterfaceError | sqlite3.OperationalError):
            if "locked" in text or "busy" in text:
                return CAUSES["locked"]
            if "full" in text or "no space" in text:
                return CAUSES["disk_full"]
            if "readonly" in text or "read-only" in text or "read only" in text:
                return CAUSES["read_only"]
            if any(bug in text for bug in _SQLITE_BUGS):
                return None
            return CAUSES["unreachable"]
    return None


def is_unavailable(exc: BaseException) -> bool:
    return cause_of(exc) is not None


class OutageLog:
    """The latest outage seen by any request, for health; thread-safe, constant memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cause: Cause | None = None
        self._since: float | None = None
        self._last: float = 0.0
        self.count = 0

    def note(self, cause: Cause) -> bool:
        """Record one failure; ``True`` when it starts a new outage (worth one log line)."""
        now = time.time()
        with self._lock:
            self.count += 1
            fresh = self._cause is None or now - self._last > RECENT_SECONDS or self._cause != cause
            if fresh:
                self._since = now
            self._cause, self._last = cause, now
            return fresh

    def recent(self) -> tuple[Cause, float] | None:
        """The cause and start (epoch seconds) of an outage seen within ``RECENT_SECONDS``."""
        with self._lock:
            if self._cause is None or self._since is None or time.time() - self._last > RECENT_SECONDS:
                return None
            return self._cause, self._since

    def clear(self) -> None:
        with self._lock:
            self._cause = self._since = None
