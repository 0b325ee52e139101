"""Retention of events and survey responses: a background job deletes what is older than each
site's ``retention_days`` (or the server's ``--event-retention-days``), in batches.

Per site and run: the log's events older than the cut (``DELETE`` of at most ``BATCH`` rows per
transaction, so ingest's writer never waits long), the site's survey responses submitted before
it, and one ``store_tasks`` row of kind ``prune_before`` so the analytics store drops its copy (an
unapplied task of the site is moved forward rather than doubled). The visitor salts of cookieless
counting are purged by the same job (``codes.purge``). Runs at start and every hour; health's
``retention`` service shows the last run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, insert, select, update

from sightline.database import Database
from sightline.database.tables.events import events
from sightline.database.tables.privacy import PRUNE_BEFORE, store_tasks
from sightline.database.tables.sites import sites
from sightline.database.tables.surveys import survey_responses, surveys
from sightline.health.registry import DEGRADED, OK, ServiceReport
from sightline.jobs import Periodic
from sightline.visitors.codes import purge

log = logging.getLogger("sightline.retention")

BATCH = 5000
INTERVAL_SECONDS = 3600.0


@dataclass
class RunReport:
    started_at: datetime
    finished_at: datetime | None = None
    events_removed: int = 0
    responses_removed: int = 0
    sites: int = 0
    error: str | None = None
    per_site: dict[int, int] = field(default_factory=dict)


class Retention:
    def __init__(
        self, db: Database, global_days: int | None, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self.db = db
        self.global_days = global_days
        self.clock = clock
        self.last: RunReport | None = None
        # At start and then every hour while the server runs; it also tells since when runs fail.
        self.periodic = Periodic(
            "the data retention",
            self.run,
            INTERVAL_SECONDS,
            logger=log,
            clock=clock,
            effect="Events and survey responses past their retention stay stored until a run succeeds.",
        )

    def policies(self) -> list[tuple[int, int]]:
        """(site id, days) of every site that keeps its data for a limited time."""
        with self.db.read() as conn:
            rows = conn.execute(select(sites.c.id, sites.c.retention_days)).all()
        found = []
        for site_id, days in rows:
            effective = days if days is not None else self.global_days
            if effective:
                found.append((int(site_id), int(effective)))
        return found

    def run(self) -> RunReport:
        """One run over every site with a retention period; a failure is recorded and raised."""
        now = self.clock()
        report = RunReport(started_at=now)
        try:
            purge(self.db, now)
            for site_id, days in self.policies():
                cut = now - timedelta(days=days)
                removed = self._events(site_id, cut)
                report.events_removed += removed
                report.per_site[site_id] = removed
                report.responses_removed += self._responses(site_id, cut)
                self._store_task(site_id, cut, now)
                report.sites += 1
        except Exception as exc:
            report.error = type(exc).__name__
            raise
        finally:
            report.finished_at = self.clock()
            self.last = report
        if report.events_removed or report.responses_removed:
            log.info(
                "retention: removed %d events and %d survey responses of %d sites",
                report.events_removed,
                report.responses_removed,
                report.sites,
            )
        return report

    def _events(self, site_id: int, cut: datetime) -> int:
        removed = 0
        while True:
            with self.db.begin() as conn:
                ids = select(events.c.id).where(events.c.site_id == site_id, events.c.time < cut).limit(BATCH)
                batch = [int(i) for i in conn.execute(ids).scalars()]
                if not batch:
                    return removed
                conn.execute(delete(events).where(events.c.id.in_(batch)))
            removed += len(batch)
            time.sleep(0)  # let the writer's transactions in between batches

    def _responses(self, site_id: int, cut: datetime) -> int:
        mine = select(surveys.c.id).where(surveys.c.site_id == site_id)
        with self.db.begin() as conn:
            result = conn.execute(
                delete(survey_responses).where(
                    survey_responses.c.survey_id.in_(mine), survey_responses.c.submitted_at < cut
                )
            )
        return int(result.rowcount or 0)

    def _store_task(self, site_id: int, cut: datetime, now: datetime) -> None:
        with self.db.begin() as conn:
            pending = conn.execute(
                select(store_tasks.c.id).where(
                    store_tasks.c.site_id == site_id,
                    store_tasks.c.kind == PRUNE_BEFORE,
                    store_tasks.c.done_at.is_(None),
                )
            ).scalar()
            if pending is not None:
                conn.execute(update(store_tasks).where(store_tasks.c.id == pending).values(before=cut))
            else:
                conn.execute(
                    insert(store_tasks).values(site_id=site_id, kind=PRUNE_BEFORE, before=cut, created_at=now)
                )

    def probe(self) -> ServiceReport:
        last = self.last
        figures: dict[str, Any] = {
            "global_days": self.global_days,
            **self.periodic.figures(),  # next run, failing since, a failure in plain words
            "last_run_at": last.started_at.isoformat() if last else None,
            "last_events_removed": last.events_removed if last else 0,
            "last_responses_removed": last.responses_removed if last else 0,
            "sites_with_retention": last.sites if last else None,
        }
        return ServiceReport(DEGRADED if self.periodic.failing_since else OK, figures)
