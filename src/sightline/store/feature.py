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
        # First: its process takes longest to be ready (its imports and the store's opening, 1 s
        # on 2 cores), and the first reports after a start wait for it.
        jobs=[Job("analytics store", client.running, first=True)],
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
