"""What the writer process logs while the database cannot store anything: once, then a count.

A full disk, a read-only or locked database file or a stopped PostgreSQL fail every group the
writer tries to commit (the server answers each batch 503 and the SDKs send it again later).
Logging a traceback per group buried the cause under thousands of lines; ``WriterOutage`` logs the
cause and the fix once (``database.outage``'s plain words), a reminder with the count at most every
``REMIND_SECONDS``, and one line with the total when storing works again. A failure that is not
an outage (a bug) is still logged with its traceback, each time.
"""

from __future__ import annotations

import logging
import time

from sightline.database import Database
from sightline.database.outage import Cause, cause_of

log = logging.getLogger("sightline.ingest")

REMIND_SECONDS = 600.0


class WriterOutage:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.cause: Cause | None = None
        self.since = 0.0
        self.groups = 0  # groups not stored since the outage began
        self.batches = 0
        self._reminded = 0.0

    def failed(self, exc: BaseException, batches: int, what: str = "a group was not stored") -> None:
        """``batches`` were not stored because of ``exc`` (``what`` names the step for a bug)."""
        cause = cause_of(exc)
        if cause is None:
            log.error("ingest writer: %s (%d batches)", what, batches, exc_info=exc)
            return
        self.db.outages.note(cause)  # for the writer's own health figures, if ever asked
        now = time.monotonic()
        if cause != self.cause:
            self.cause, self.since, self.groups, self.batches = cause, now, 0, 0
            self._reminded = now
            log.error(
                "ingest writer: %s New events are answered 503 and the SDKs send them again later. "
                "%s (logged once; a count follows)",
                cause.problem,
                cause.fix,
            )
        self.groups += 1
        self.batches += batches
        if now - self._reminded >= REMIND_SECONDS:
            self._reminded = now
            log.error(
                "ingest writer: still nothing stored (%s) for %.0f s: %d batches in %d groups answered 503",
                cause.kind,
                now - self.since,
                self.batches,
                self.groups,
            )

    def stored(self) -> None:
        """A group was stored: an outage, if there was one, is over."""
        if self.cause is None:
            return
        log.warning(
            "ingest writer: storing again after %.0f s (%s): %d batches in %d groups were answered 503",
            time.monotonic() - self.since,
            self.cause.kind,
            self.batches,
            self.groups,
        )
        self.cause = None
