"""The analytics store as a feature: its process beside the server, its health probe and metrics."""

from __future__ import annotations

from sightline.features import Feature, HealthProbe, Job
from sightline.metrics.collectors import STORE_SPEC, FiguresCollector, HealthSource, store_figures
from sightline.store.client import StoreClient


def feature(client: StoreClient, health: HealthSource) -> Feature:
    """The store's metrics read its health service (``store``), their one source."""
    return Feature(
        "store",
        probes=[HealthProbe("store", client.probe)],
        jobs=[Job("analytics store", client.running)],
        collectors=[FiguresCollector(store_figures(health), STORE_SPEC)],
        settings=[
            "events_url",
            "event_log_retention_days",
            "store_memory_mb",
            "store_feed_seconds",
            "store_niceness",
            "reports_exact_below",
            "reports_kept_mb",
        ],
    )
