"""Ingest as a feature: the SDK's paths, the writer's lifetime, its health probes and metrics."""

from __future__ import annotations

from sightline.features import Feature, HealthProbe, Job
from sightline.ingest.service import Ingest
from sightline.metrics.collectors import IngestCollector


def feature(ingest: Ingest) -> Feature:
    return Feature(
        "ingest",
        sdk_routes=ingest.routes(),
        probes=[HealthProbe("ingest", ingest.probe), HealthProbe("geography", ingest.geo_probe)],
        jobs=[Job("ingest writer", ingest.running)],
        collectors=[IngestCollector(ingest)],
        settings=[
            "ingest_queue_events",
            "ingest_accept_headless",
            "ingest_flood_batches_per_minute",
            "ingest_drop_floods",
            "referrer_spam_list",
            "sdk_dir",
            "geoip_database",
        ],
    )
