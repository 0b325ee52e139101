"""The features of one running server, each listed once: ``features`` is the list ``app.create_app`` walks.

A feature package brings what it runs (``PKG/feature.py``: probes, jobs, metrics, the settings
it owns); this module adds the routes of the surfaces that answer for it (``console``, ``ingest``,
``web``), which import the package and never the other way. The list's order is the order of the
routes (the player's paths before the console pages' ``/sites/{rest:path}``) and of the jobs' start
(the recordings decoder first: its process starts while ingest's writer does); jobs stop in reverse.

May import anything but ``app`` and ``cli``: it sits just below them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from starlette.types import ASGIApp

from sightline.assistants import feature as assistants_feature
from sightline.assistants.endpoint import McpEndpoint
from sightline.console import annotations as console_annotations
from sightline.console import (
    auth,
    conversions,
    exports,
    goals,
    health,
    setup,
    shared,
    sites,
    team,
)
from sightline.console import imports as console_imports
from sightline.console import mail as console_mail
from sightline.console import overview as console_overview
from sightline.console import recordings as console_recordings
from sightline.console import reports as console_reports
from sightline.console import surveys as console_surveys
from sightline.console import visitors as console_visitors
from sightline.context import Context
from sightline.features import Feature, HealthProbe
from sightline.health.disk import MIB, DiskGuard, sqlite_file
from sightline.health.registry import database_probe
from sightline.imports import feature as imports_feature
from sightline.ingest import feature as ingest_feature
from sightline.ingest import feedback as ingest_feedback
from sightline.ingest import recordings as ingest_recordings
from sightline.ingest.service import Ingest
from sightline.mail import feature as mail_feature
from sightline.metrics.collectors import CONNECTIONS_SPEC, DISK_SPEC, FiguresCollector, HttpCollector
from sightline.metrics.http import HttpFigures
from sightline.recordings import feature as recordings_feature
from sightline.recordings.decoder import ChunkDecoder
from sightline.recordings.service import Recordings
from sightline.recordings.store import FileChunkStore
from sightline.reports import feature as reports_feature
from sightline.serving import SlowClientLimits
from sightline.store import feature as store_feature
from sightline.surveys import feature as surveys_feature
from sightline.visitors import feature as visitors_feature
from sightline.visitors.retention import Retention
from sightline.web import pages, player, unsubscribe


@dataclass
class Server:
    """The features, and the parts ``create_app`` hands to the application itself."""

    features: list[Feature]
    ingest: Ingest  # its hot path runs before the middleware
    recordings: Recordings  # the console's recordings handlers read it from ``app.state``
    http_figures: HttpFigures  # kept by the outermost layer, read by ``/metrics``


def server(ctx: Context, app: Callable[[], ASGIApp]) -> Server:
    """Every feature of the server of ``ctx``; ``app`` is the application, once built."""
    settings, database = ctx.settings, ctx.db
    recordings = recordings_feature.build(settings, database)
    chunk_files = recordings.store
    disk = DiskGuard(
        settings.data_path,
        sqlite_file(database),
        warn_bytes=int(settings.disk_warn_free_mb) * MIB,
        refuse_bytes=int(settings.disk_refuse_free_mb) * MIB,
        recordings_dir=chunk_files.root if isinstance(chunk_files, FileChunkStore) else None,
    )
    ingest = Ingest(settings, database, disk)
    decoder = ChunkDecoder()
    survey_counts: Counter[str] = Counter()
    http_figures = HttpFigures()
    accept_headless = bool(settings.ingest_accept_headless)
    features = [
        Feature(
            "server",
            # The player's paths first: /sites/{id}/heatmap lies under the console's /sites/{rest:path}.
            routes=[auth.router, sites.router, health.router, setup.router, player.router, pages.router],
            probes=[
                HealthProbe("database", database_probe(database), critical=True),
                HealthProbe("disk", disk.probe),
            ],
            collectors=[
                HttpCollector(http_figures),
                FiguresCollector(disk.figures, DISK_SPEC),
                FiguresCollector(lambda: {"closed": dict(SlowClientLimits.closed)}, CONNECTIONS_SPEC),
            ],
            settings=["disk_warn_free_mb", "disk_refuse_free_mb", "metrics_token"],
        ),
        recordings_feature.feature(settings, recordings, decoder).with_routes(
            console_recordings.router,
            sdk_routes=ingest_recordings.routes(
                ingest.pipeline, recordings, decoder, accept_headless=accept_headless
            ),
        ),
        ingest_feature.feature(ingest),
        visitors_feature.feature(Retention(database, settings.event_retention_days)).with_routes(
            console_visitors.router
        ),
        store_feature.feature(ctx.store, ctx.health),
        surveys_feature.feature(survey_counts).with_routes(
            console_surveys.router,
            sdk_routes=ingest_feedback.routes(ingest.pipeline, database, survey_counts),
        ),
        reports_feature.feature(ctx.store, database).with_routes(
            console_reports.router, console_overview.router, conversions.router, conversions.reports
        ),
        Feature("goals", routes=[goals.router]),
        Feature("annotations", routes=[console_annotations.router]),
        Feature(
            "teams",
            routes=[team.router, shared.router, shared.public, *shared.public_routes()],
            settings=["api_key_requests_per_minute", "share_requests_per_minute", "invitation_days"],
        ),
        Feature("exports", routes=[exports.router]),
        mail_feature.feature(settings, database, ctx.store, ctx.mailer).with_routes(
            console_mail.router, unsubscribe.router
        ),
        imports_feature.feature(ctx.importer).with_routes(console_imports.router),
        assistants_feature.feature(McpEndpoint(lambda: database, app)),
    ]
    return Server(features, ingest, recordings, http_figures)
