"""What ``GET /metrics`` shows: every figure read at scrape time from what the parts already keep.

One ``CollectorRegistry`` per application (tests run several in one process). Each collector
reads plain counters its part keeps anyway (ingest's drop reasons and commit stats, the route
figures of ``http.py``, the recordings' and surveys' counts, the health registry), so nothing on
the request path calls the metrics library.

The analytics store (``sightline.store``) reports through the health registry's ``store``
service; ``StoreCollector`` turns it into metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, PlatformCollector, ProcessCollector
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from sightline.metrics.buckets import LatencyBuckets
from sightline.metrics.http import HttpFigures

Figures = Callable[[], Mapping[str, Any] | None]


def histogram(
    name: str, documentation: str, labels: list[str], series: Iterable[tuple[list[str], LatencyBuckets]]
) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, documentation, labels=labels)
    for values, buckets in series:
        family.add_metric(values, list(buckets.cumulative()), buckets.total)
    return family


class HttpCollector(Collector):
    def __init__(self, figures: HttpFigures) -> None:
        self.figures = figures

    def collect(self) -> Iterator[Metric]:
        requests = CounterMetricFamily(
            "sightline_http_requests",
            "HTTP requests answered, by route template, method and status (0: client left first).",
            labels=["route", "method", "status"],
        )
        routes = list(self.figures.routes.items())
        for (route, method), figures in routes:
            for status, count in list(figures.statuses.items()):
                requests.add_metric([route, method, str(status)], count)
        yield requests
        yield histogram(
            "sightline_http_request_duration_seconds",
            "Time from a request's arrival to the end of its answer, by route template and method.",
            ["route", "method"],
            (([route, method], figures.latency) for (route, method), figures in routes),
        )


class IngestSource(Protocol):
    """What the ingest collector reads (``sightline.ingest.service.Ingest``)."""

    def metrics(self) -> Mapping[str, Any]: ...


class IngestCollector(Collector):
    def __init__(self, ingest: IngestSource) -> None:
        self.ingest = ingest

    def collect(self) -> Iterator[Metric]:
        figures = self.ingest.metrics()
        yield CounterMetricFamily(
            "sightline_ingest_accepted_events",
            "Events stored and acknowledged.",
            value=figures["stored_events"],
        )
        yield CounterMetricFamily(
            "sightline_ingest_accepted_batches",
            "Batches stored and acknowledged.",
            value=figures["stored_batches"],
        )
        yield CounterMetricFamily(
            "sightline_ingest_duplicate_batches",
            "Batches sent again after they were stored (acknowledged, stored once).",
            value=figures["duplicate_batches"],
        )
        dropped = CounterMetricFamily(
            "sightline_ingest_dropped_batches",
            "Batches not stored, by reason (bot: answered 202 like everyone, nothing stored).",
            labels=["reason"],
        )
        for reason, count in sorted(figures["dropped"].items()):
            dropped.add_metric([reason], count)
        yield dropped
        yield GaugeMetricFamily(
            "sightline_ingest_queue_events",
            "Events waiting for the database now.",
            value=figures["queue_depth"],
        )
        yield GaugeMetricFamily(
            "sightline_ingest_queue_capacity_events",
            "Events that may wait at once (--ingest-queue-events); beyond it ingest answers 429.",
            value=figures["queue_capacity"],
        )
        yield CounterMetricFamily("sightline_ingest_commits", "Group commits.", value=figures["commits"])
        yield CounterMetricFamily(
            "sightline_ingest_failed_commits",
            "Group commits (or writer deaths) whose batches were answered 503.",
            value=figures["failed_commits"],
        )
        yield histogram(
            "sightline_ingest_commit_duration_seconds",
            "Time of one group commit in the writer process (rows built, stored, committed).",
            [],
            [([], figures["commit_latency"])],
        )
        yield GaugeMetricFamily(
            "sightline_ingest_writer_up",
            "1 while the writer process takes batches.",
            value=figures["writer_up"],
        )
        yield CounterMetricFamily(
            "sightline_ingest_writer_starts",
            "Writer processes started (1 plus restarts).",
            value=figures["writer_starts"],
        )


class FiguresCollector(Collector):
    """Counters and gauges from a function returning ``{name: value}`` or ``{name: {label: value}}``."""

    def __init__(self, figures: Figures, spec: Mapping[str, tuple[str, str, str | None]]) -> None:
        self.figures = figures
        self.spec = spec  # figure -> (metric name, "counter" | "gauge", label name or None)

    def collect(self) -> Iterator[Metric]:
        values = self.figures()
        if values is None:
            return
        for figure, (name, kind, label) in self.spec.items():
            value = values.get(figure)
            if value is None:
                continue
            doc = _DOCS.get(name, name)
            family: Metric
            if label is None:
                family = (
                    CounterMetricFamily(name, doc, value=value)
                    if kind == "counter"
                    else GaugeMetricFamily(name, doc, value=value)
                )
            else:
                family = (
                    CounterMetricFamily(name, doc, labels=[label])
                    if kind == "counter"
                    else GaugeMetricFamily(name, doc, labels=[label])
                )
                for key, count in sorted(value.items()):
                    family.add_metric([str(key)], count)
            yield family


_DOCS = {
    "sightline_recordings_stored_chunks": "Recording chunks stored.",
    "sightline_recordings_stored_bytes": "Bytes of recording chunks stored (compressed).",
    "sightline_recordings_refused_chunks": "Recording chunks not stored, by reason.",
    "sightline_recordings": "Recordings kept now.",
    "sightline_recordings_used_bytes": "Bytes the kept recordings use.",
    "sightline_survey_responses_stored": "Survey responses stored.",
    "sightline_survey_responses_duplicate": "Survey responses sent again after they were stored.",
    "sightline_survey_responses_refused": "Survey responses not stored, by reason.",
    "sightline_store_lag_events": "Events in the database the analytics store has not taken in yet.",
    "sightline_store_lag_seconds": "Age of the oldest event the analytics store has not taken in.",
    "sightline_store_fed_events": "Events the analytics store has taken in (its feed; rate() of it).",
    "sightline_store_up": "1 while the analytics store answers (health status not down).",
    "sightline_store_check_repaired_ranges": "Site-days the store's self-check found wrong and fed again.",
    "sightline_store_check_fed_events": "Events the store's self-check fed (missing or held twice).",
    "sightline_store_check_unrepaired": "Differences the store's self-check could not repair (see health).",
    "sightline_store_check_passes": "Whole passes of the store's self-check over the log.",
    "sightline_store_checkpoints": "Times the embedded store wrote its WAL into its file.",
    "sightline_disk_free_bytes": "Free bytes on each file system Sightline writes to.",
    "sightline_disk_total_bytes": "Size of each file system Sightline writes to.",
    "sightline_connections_closed": "Client connections the server closed: too slow (header_timeout, "
    "body_timeout), headers_too_large, or evicted to make room under --max-connections.",
    "sightline_recordings_decoder_busy": "Recording chunks answered 503 because too many waited for "
    "the decoder process.",
    "sightline_recordings_decoder_restarts": "Times the recordings decoder process was replaced.",
    "sightline_disk_low": "1 while a file system is below --disk-refuse-free-mb (ingest answers 507).",
}


class HealthSource(Protocol):
    def service(self, name: str) -> Mapping[str, Any] | None: ...


def store_figures(health: HealthSource) -> Figures:
    """The analytics store's lag and feed, from health's ``store`` service (its one source):
    the feed rate is ``rate(sightline_store_fed_events_total[5m])``."""

    def figures() -> Mapping[str, Any] | None:
        store = health.service("store")
        if store is not None:
            check = store.get("check")
            return {
                "lag_events": store.get("lag_events"),
                "lag_seconds": store.get("lag_seconds"),
                "fed_events": store.get("fed_events"),
                "up": 0 if store.get("status") == "down" else 1,
                "check_repaired_ranges": check.get("ranges_repaired") if check else None,
                "check_fed_events": check.get("events_fed") if check else None,
                "check_unrepaired": len(check.get("unrepaired") or ()) if check else None,
                "check_passes": check.get("passes") if check else None,
                "checkpoints": store.get("checkpoints"),
            }
        return None

    return figures


STORE_SPEC = {
    "lag_events": ("sightline_store_lag_events", "gauge", None),
    "lag_seconds": ("sightline_store_lag_seconds", "gauge", None),
    "fed_events": ("sightline_store_fed_events", "counter", None),
    "up": ("sightline_store_up", "gauge", None),
    "check_repaired_ranges": ("sightline_store_check_repaired_ranges", "counter", None),
    "check_fed_events": ("sightline_store_check_fed_events", "counter", None),
    "check_unrepaired": ("sightline_store_check_unrepaired", "gauge", None),
    "check_passes": ("sightline_store_check_passes", "counter", None),
    "checkpoints": ("sightline_store_checkpoints", "counter", None),
}
RECORDINGS_SPEC = {
    "stored_chunks": ("sightline_recordings_stored_chunks", "counter", None),
    "stored_bytes": ("sightline_recordings_stored_bytes", "counter", None),
    "refused": ("sightline_recordings_refused_chunks", "counter", "reason"),
    "recordings": ("sightline_recordings", "gauge", None),
    "used_bytes": ("sightline_recordings_used_bytes", "gauge", None),
}
SURVEYS_SPEC = {
    "stored": ("sightline_survey_responses_stored", "counter", None),
    "duplicate": ("sightline_survey_responses_duplicate", "counter", None),
    "refused": ("sightline_survey_responses_refused", "counter", "reason"),
}
CONNECTIONS_SPEC = {
    "closed": ("sightline_connections_closed", "counter", "reason"),
}
DECODER_SPEC = {
    "busy": ("sightline_recordings_decoder_busy", "counter", None),
    "restarts": ("sightline_recordings_decoder_restarts", "counter", None),
}
DISK_SPEC = {
    "free_bytes": ("sightline_disk_free_bytes", "gauge", "volume"),
    "total_bytes": ("sightline_disk_total_bytes", "gauge", "volume"),
    "low": ("sightline_disk_low", "gauge", "volume"),
}


def build_registry(collectors: Iterable[Collector]) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    for collector in collectors:
        registry.register(collector)
    return registry
