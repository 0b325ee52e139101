"""The recordings feature for one running server: its store, service, health probe, jobs and metrics."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from sightline.database import Database, open_database
from sightline.features import Feature, HealthProbe, Job
from sightline.health.registry import DEGRADED, DOWN, OK, Probe, ServiceReport
from sightline.metrics.collectors import DECODER_SPEC, RECORDINGS_SPEC, FiguresCollector
from sightline.recordings import retention
from sightline.recordings.decoder import ChunkDecoder
from sightline.recordings.service import Recordings
from sightline.recordings.store import StorageUnavailableError, open_store
from sightline.settings import Settings

MIB = 1024 * 1024
LOW_DISK = 1 << 30
RECENT_FAILURE_SECONDS = 300.0  # a failed write this recent keeps the service degraded


def build(settings: Settings, db: Database) -> Recordings:
    """Chunks in the store of ``--recordings-url`` (default ``DATA_DIR/recordings``), indexed in ``db``."""
    store = open_store(settings.recordings_url, settings.data_path)
    return Recordings(db, store, int(settings.recording_max_mb) * MIB)


def open_service(settings: Settings) -> tuple[Recordings, Database]:
    db = open_database(settings.effective_database_url)
    return build(settings, db), db


def feature(settings: Settings, service: Recordings, decoder: ChunkDecoder) -> Feature:
    """The decoder process (started first, so it starts while ingest's writer does), retention,
    the health services ``recordings`` and ``recording_retention``, and the recordings' and
    decoder's metrics."""
    cleanup = retention.Cleanup(service, settings.recording_retention_days)
    return Feature(
        "recordings",
        probes=[
            HealthProbe("recordings", probe(service, decoder)),
            HealthProbe("recording_retention", cleanup.probe),
        ],
        jobs=[
            Job("recordings decoder", decoder.running, ready=decoder.ready),
            Job.periodic(cleanup.periodic),
        ],
        collectors=[
            FiguresCollector(lambda: metric_figures(service), RECORDINGS_SPEC),
            FiguresCollector(decoder.figures, DECODER_SPEC),
        ],
        settings=["recordings_url", "recording_max_mb", "recording_retention_days"],
    )


def metric_figures(service: Recordings) -> dict[str, Any]:
    """What the recordings' metrics read at each scrape."""
    count, size = service.totals()
    return {
        "stored_chunks": service.stored_counts["chunks"],
        "stored_bytes": service.stored_counts["bytes"],
        "refused": dict(service.drop_counts),
        "recordings": count,
        "used_bytes": size,
    }


def probe(service: Recordings, decoder: ChunkDecoder) -> Probe:
    """Health service ``recordings``: how many there are, the bytes they use, where they are stored
    and whether that storage answers (down, with the problem and what to do, when it does not)."""

    def check() -> ServiceReport:
        store = service.store
        count, size = service.totals()
        figures: dict[str, object] = {
            "storage": store.kind,
            "location": store.location,
            "recordings": count,
            "used_bytes": size,
            "dropped_chunks": dict(service.drop_counts),
            "decoder": decoder.figures(),
            "problem": None,
            "fix": None,
            "failing_since": None,
        }
        try:
            figures.update(store.check())
        except StorageUnavailableError as exc:
            since = service.failures.since or time.time()
            figures.update(
                error=exc.kind,
                problem=exc.problem + " New recording chunks are refused (503) and sent again later.",
                fix=exc.fix,
                failing_since=datetime.fromtimestamp(since, UTC).isoformat(),
            )
            return ServiceReport(DOWN, figures)
        failure = service.failures.recent(RECENT_FAILURE_SECONDS)
        if failure is not None:
            figures.update(
                error=failure.kind,
                problem=f"Storing a chunk failed {int(time.time() - failure.at)} s ago: {failure.problem}",
                fix=failure.fix,
                failing_since=datetime.fromtimestamp(failure.at, UTC).isoformat(),
            )
            return ServiceReport(DEGRADED, figures)
        free = figures.get("free_bytes")
        if isinstance(free, int) and free < LOW_DISK:
            figures.update(
                problem=f"Only {free // MIB} MiB are free where recordings are stored ({store.location}).",
                fix="Free space or grow that disk, or shorten --recording-retention-days.",
            )
            return ServiceReport(DEGRADED, figures)
        return ServiceReport(OK, figures)

    return check
