"""The rollup job as a background task of the server, and its health probe (``reports``).

After each fold the worker copies what was folded into the column store (``columns``), so
filtered reports follow the dashboard with the same delay.
"""

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
from sightline.reports.columns.store import OFF, ColumnStore
from sightline.reports.columns.sync import sync
from sightline.reports.rollup import JOB, RollupJob
from sightline.storage import Database
from sightline.storage.schema import events, report_state

log = logging.getLogger("sightline.reports")
BEHIND = 200_000  # more events than this waiting makes the reports "degraded"
COPY_BATCH = 50_000  # events copied into the column store per DuckDB transaction


class RollupWorker:
    """Folds new events into the rollups every ``interval`` seconds, in batches, until caught up."""

    def __init__(
        self, db: Database, interval: float, columns: ColumnStore | None = None, batch: int = 20000
    ) -> None:
        self.db = db
        self.interval = interval
        self.job = RollupJob(db, batch)
        self.columns = columns
        self.running_task: asyncio.Task[None] | None = None
        self.failures = 0
        self.last_failure_at: float | None = None
        self.last_fold_ms: float | None = None
        self._newest = 0

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        if self.columns is not None:
            await to_thread.run_sync(self.columns.open)
        self.running_task = asyncio.create_task(self._loop(), name="sightline-rollup")
        try:
            yield
        finally:
            self.running_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.running_task
            self.running_task = None
            if self.columns is not None:
                await to_thread.run_sync(self.columns.close)

    async def _loop(self) -> None:
        while True:
            try:
                started = time.perf_counter()
                folded = await to_thread.run_sync(self.job.fold)
                if folded:
                    self.last_fold_ms = round((time.perf_counter() - started) * 1000, 1)
                copied = await to_thread.run_sync(self._copy)
            except Exception:
                log.exception("the rollup job failed; it will try again")
                self.failures += 1
                self.last_failure_at = time.monotonic()
                folded = copied = 0
            if folded < self.job.batch and copied < COPY_BATCH:
                await asyncio.sleep(self.interval)
            else:
                await asyncio.sleep(0)

    def _copy(self) -> int:
        return 0 if self.columns is None else sync(self.db, self.columns, COPY_BATCH)

    def pending(self) -> tuple[int, int]:
        """(watermark, events stored after it) — the count is exact when ids have no gaps."""
        with self.db.read() as conn:
            mark = conn.execute(
                select(report_state.c.last_event_id).where(report_state.c.name == JOB)
            ).scalar()
            newest = conn.execute(select(func.max(events.c.id))).scalar()
        mark = int(mark or 0)
        self._newest = int(newest or 0)
        return mark, max(0, self._newest - mark)

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
                **self._column_figures(),
            },
        )

    def _column_figures(self) -> dict[str, object]:
        """The column store's state, and the events it has still to copy (filtered reports)."""
        store = self.columns
        if store is None:
            return {"columns": OFF, "columns_pending_events": None}
        pending = max(0, self._newest - store.watermark) if store.state != OFF else None
        return {"columns": store.state, "columns_pending_events": pending}
