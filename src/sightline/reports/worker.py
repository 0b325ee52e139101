"""The rollup job as a background task of the server, and its health probe (``reports``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from anyio import to_thread
from sqlalchemy import func, select

from sightline.health.registry import DEGRADED, DOWN, OK, ServiceReport
from sightline.reports.rollup import JOB, RollupJob
from sightline.storage import Database
from sightline.storage.schema import events, report_state

log = logging.getLogger("sightline.reports")
BEHIND = 200_000  # more events than this waiting makes the reports "degraded"


class RollupWorker:
    """Folds new events into the rollups every ``interval`` seconds, in batches, until caught up."""

    def __init__(self, db: Database, interval: float, batch: int = 20000) -> None:
        self.db = db
        self.interval = interval
        self.job = RollupJob(db, batch)
        self.running_task: asyncio.Task[None] | None = None
        self.failures = 0
        self.last_failure_at: float | None = None
        self.last_fold_ms: float | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        self.running_task = asyncio.create_task(self._loop(), name="sightline-rollup")
        try:
            yield
        finally:
            self.running_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.running_task
            self.running_task = None

    async def _loop(self) -> None:
        while True:
            try:
                started = time.perf_counter()
                folded = await to_thread.run_sync(self.job.fold)
                if folded:
                    self.last_fold_ms = round((time.perf_counter() - started) * 1000, 1)
            except Exception:
                log.exception("the rollup job failed; it will try again")
                self.failures += 1
                self.last_failure_at = time.monotonic()
                folded = 0
            if folded < self.job.batch:
                await asyncio.sleep(self.interval)
            else:
                await asyncio.sleep(0)

    def pending(self) -> tuple[int, int]:
        """(watermark, events stored after it) — the count is exact when ids have no gaps."""
        with self.db.read() as conn:
            mark = conn.execute(
                select(report_state.c.last_event_id).where(report_state.c.name == JOB)
            ).scalar()
            newest = conn.execute(select(func.max(events.c.id))).scalar()
        mark = int(mark or 0)
        return mark, max(0, int(newest or 0) - mark)

    def probe(self) -> ServiceReport:
        mark, pending = self.pending()
        recent_failure = self.last_failure_at is not None and time.monotonic() - self.last_failure_at < 60
        if self.running_task is None:
            status = DOWN
        elif recent_failure or pending > BEHIND:
            status = DEGRADED
        else:
            status = OK
        return ServiceReport(
            status,
            {
                "watermark": mark,
                "pending_events": pending,
                "folded_events": self.job.folded_events,
                "last_fold_ms": self.last_fold_ms,
                "failures": self.failures,
            },
        )
