"""Retention: recordings that started more than ``recording_retention_days`` ago are deleted.

``cleanup`` deletes them (index rows, then files) in batches and also removes chunk folders that
no index row names (left by a crash between writing a file and committing its row). The server
runs it at start and every hour (``Cleanup``, shown in health as ``recording_retention``);
operators can run it by hand:

    python -m sightline.recordings.retention --data-dir DIR [--database-url URL]
        [--recordings-url URL] [--recording-retention-days N]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import select

from sightline.database.tables.recordings import recordings
from sightline.database.types import utcnow
from sightline.health.registry import DEGRADED, OK, ServiceReport
from sightline.jobs import Periodic
from sightline.recordings.service import Recordings
from sightline.settings import BY_NAME, Settings, SettingsError, load

log = logging.getLogger("sightline.recordings")

BATCH = 500
INTERVAL_SECONDS = 3600.0
ORPHAN_GRACE_SECONDS = 3600.0  # a folder this fresh may be a chunk whose row is being committed


def cleanup(service: Recordings, days: int, now: datetime | None = None) -> int:
    """Delete every recording started before ``now - days``; returns how many were deleted."""
    cutoff = (now or utcnow()) - timedelta(days=days)
    deleted = 0
    while True:
        with service.db.read() as conn:
            query = select(recordings.c.id).where(recordings.c.started_at < cutoff).limit(BATCH)
            ids = list(conn.execute(query).scalars())
        if not ids:
            break
        service.delete(ids)
        deleted += len(ids)
    deleted_orphans = sweep_orphans(service)
    if deleted or deleted_orphans:
        log.info("retention: deleted %d recordings and %d orphaned folders", deleted, deleted_orphans)
    return deleted


def sweep_orphans(service: Recordings) -> int:
    """Remove chunk folders with no index row (never acknowledged, so no data anyone was promised)."""
    removed = 0
    pending: list[str] = []

    def flush() -> int:
        with service.db.read() as conn:
            known = set(conn.execute(select(recordings.c.id).where(recordings.c.id.in_(pending))).scalars())
        gone = 0
        for recording_id in pending:
            if recording_id in known:
                continue
            modified = service.store.modified(recording_id)
            if modified is not None and modified < time.time() - ORPHAN_GRACE_SECONDS:
                service.store.delete_recording(recording_id)
                gone += 1
        pending.clear()
        return gone

    for recording_id in service.store.recording_ids():
        pending.append(recording_id)
        if len(pending) >= BATCH:
            removed += flush()
    if pending:
        removed += flush()
    return removed


class Cleanup:
    """``cleanup`` at start and then every ``interval`` seconds while the server runs (``periodic``),
    shown in health as the service ``recording_retention`` (``probe``)."""

    def __init__(self, service: Recordings, days: int, interval: float = INTERVAL_SECONDS) -> None:
        self.service = service
        self.days = days
        self.last_deleted: int | None = None
        self.periodic = Periodic(
            "the recordings' retention",
            self.run,
            interval,
            logger=log,
            effect="Recordings past the retention period stay stored until a run succeeds.",
        )

    def run(self) -> None:
        self.last_deleted = cleanup(self.service, self.days)

    def probe(self) -> ServiceReport:
        """Last and next run, recordings deleted by the last run, and a failure in plain words
        (``degraded`` while runs fail)."""
        figures = {
            "retention_days": self.days,
            **self.periodic.figures(),
            "last_recordings_deleted": self.last_deleted,
        }
        return ServiceReport(DEGRADED if self.periodic.failing_since else OK, figures)


def main(argv: Sequence[str] | None = None) -> int:
    """The command-line entry: one cleanup with the server's settings (flags or SIGHTLINE_*)."""
    from sightline.recordings.feature import open_service

    parser = argparse.ArgumentParser(
        prog="python -m sightline.recordings.retention",
        description="Delete session recordings older than the retention period.",
    )
    for name in ("data_dir", "database_url", "recordings_url", "recording_retention_days"):
        setting = BY_NAME[name]
        parser.add_argument(setting.flag, dest=name, default=None, help=setting.help)
    args = parser.parse_args(argv)
    try:
        settings: Settings = load({k: v for k, v in vars(args).items() if v is not None})
    except SettingsError as exc:
        print(f"sightline: {exc}", file=sys.stderr)
        return 2
    service, db = open_service(settings)
    try:
        deleted = cleanup(service, int(settings.recording_retention_days))
    finally:
        db.dispose()
    print(f"deleted {deleted} recordings older than {settings.recording_retention_days} days")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
