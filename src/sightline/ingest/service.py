"""Ingest as one object (``feature.py`` plugs it in): its routes, its writer's lifetime, its health probes."""

from __future__ import annotations

import contextlib
import gc
import logging
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from anyio import to_thread
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from sightline.clientaddr import client_address
from sightline.database import Database
from sightline.errors import UNAVAILABLE_CODE, UNAVAILABLE_MESSAGE, UNAVAILABLE_RETRY_AFTER
from sightline.geo import Locator
from sightline.health.disk import DiskGuard
from sightline.health.registry import DEGRADED, DOWN, OK, ServiceReport
from sightline.ingest import agents
from sightline.ingest.checkpoint import WalCheckpointer
from sightline.ingest.floods import FloodWatch
from sightline.ingest.http import ConfigEndpoint, EventsEndpoint, answer, error_payload
from sightline.ingest.pipeline import DROP_REASONS, Pipeline
from sightline.ingest.pixel import PixelEndpoint
from sightline.ingest.script import ScriptEndpoint, ScriptFiles, is_script_path
from sightline.ingest.server_events import PATH as SERVER_EVENTS_PATH
from sightline.ingest.server_events import ServerEventsEndpoint
from sightline.ingest.writer import GroupCommitter
from sightline.settings import Settings
from sightline.sites import referrers
from sightline.sites.lookup import SiteDirectory
from sightline.surveys.auto_open import AutoOpen

log = logging.getLogger("sightline.ingest")

BUILT_SDK = Path(__file__).resolve().parent.parent / "web" / "static" / "sdk"
FAILURE_WINDOW = 60.0  # a failed commit this recent makes ingest "degraded"
SWITCH_INTERVAL = 0.0001  # seconds; Python's default is 0.005
# Net new container objects between two young collections (Python's default is 700): at 700 the
# collector ran every few dozen requests, 8-11 µs of the server's CPU per request; at 20,000 once
# in 10 s of load (docs/performance.md). Each run walks only the young objects still alive.
GC_YOUNG_THRESHOLD = 10_000


PIXEL_PATH = "/i/pixel.gif"


def is_sdk_path(path: str) -> bool:
    """Paths the SDK talks to; they set their own headers (CORS, caching), not the console's."""
    return path.startswith("/i/") or is_script_path(path)


class Ingest:
    def __init__(self, settings: Settings, db: Database, disk: DiskGuard | None = None) -> None:
        self.directory = SiteDirectory(db)
        geoip_database = settings.values.get("geoip_database")
        # Opened here once so that a bad file stops the start with a clear message (the writer
        # process opens its own copy); health shows what it holds.
        self.geo = Locator(str(geoip_database) if geoip_database else None).info()
        self.writer = GroupCommitter(
            db.url,
            capacity=int(settings.ingest_queue_events),
            log_level=str(settings.log_level),
            geoip_database=str(geoip_database) if geoip_database else None,
            log_format=str(settings.log_format),
            checkpointer=WalCheckpointer(db) if db.dialect == "sqlite" else None,
        )
        spam_file = settings.values.get("referrer_spam_list")
        self.pipeline = Pipeline(
            self.directory,
            self.writer,
            accept_headless=bool(settings.ingest_accept_headless),
            disk=disk,
            spam=referrers.spam_list(str(spam_file) if spam_file else None),
            floods=FloodWatch(
                int(settings.ingest_flood_batches_per_minute), bool(settings.ingest_drop_floods)
            ),
        )
        sdk_dir = settings.values.get("sdk_dir")
        self.scripts = ScriptFiles(Path(sdk_dir).resolve() if sdk_dir else BUILT_SDK)
        trusted = settings.values.get("trusted_proxies")
        header = str(settings.client_address_header)

        def client_of(scope: Scope) -> str | None:
            return client_address(scope, trusted, header)

        self._script = Guarded(ScriptEndpoint(self.scripts), db)
        self._exact: dict[str, ASGIApp] = {
            "/i/events": Guarded(EventsEndpoint(self.pipeline, client_of), db),
            "/i/config": Guarded(ConfigEndpoint(self.pipeline, AutoOpen(db)), db),
            PIXEL_PATH: PixelEndpoint(self.pipeline, client_of),
            SERVER_EVENTS_PATH: Guarded(ServerEventsEndpoint(self.pipeline, db), db),
        }

    def endpoint(self, path: str) -> ASGIApp | None:
        """The ingest endpoint for ``path``, or None when another part of Sightline answers it.

        The application calls this before its middleware stack: the hot path pays for no
        framework layer it does not need (no session, no console headers, no routing table).
        """
        found = self._exact.get(path)
        if found is None and path.startswith("/analytics") and is_script_path(path):
            return self._script
        return found

    def template(self, path: str) -> str:
        """The route template of a path ``endpoint`` answers (the metrics' route label)."""
        if path in self._exact:
            return path
        return "/analytics.js" if path == "/analytics.js" else "/analytics-{name}.js"

    def routes(self) -> list[BaseRoute]:
        """The same endpoints as routes, for an application that does not call ``endpoint`` first."""
        return [
            Route("/i/events", self._exact["/i/events"]),
            Route("/i/config", self._exact["/i/config"]),
            Route(PIXEL_PATH, self._exact[PIXEL_PATH]),
            Route(SERVER_EVENTS_PATH, self._exact[SERVER_EVENTS_PATH]),
            Route("/analytics.js", self._script),
            Route("/analytics-{name}.js", self._script),
        ]

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The writer runs while the server does; at shutdown it commits what is waiting."""
        await to_thread.run_sync(agents.warm_up)
        # Background threads (site lookups, health probes) and the event loop hand the
        # interpreter lock to each other; with Python's default 5 ms switch interval each handoff
        # can stall the loop that long under load. A short interval keeps requests flowing.
        previous = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)
        # Everything built so far (application, ua-parser's rules, SQLAlchemy's caches) lives as
        # long as the process: take it out of the cyclic collector's full passes, which otherwise
        # walk it all and stalled requests by tens of milliseconds (p99 57-107 ms -> 19 ms).
        gc.collect()
        gc.freeze()
        thresholds = gc.get_threshold()
        gc.set_threshold(GC_YOUNG_THRESHOLD, *thresholds[1:])
        await self.writer.start()
        try:
            yield
        finally:
            await self.writer.stop()
            self.directory.close()
            sys.setswitchinterval(previous)
            gc.set_threshold(*thresholds)

    def metrics(self) -> dict[str, Any]:
        """Figures for ``/metrics``, read at scrape time from what the pipeline and writer count."""
        stats = self.writer.stats
        return {
            "stored_events": stats.stored_events,
            "stored_batches": stats.stored_batches,
            "duplicate_batches": stats.duplicate_batches,
            "dropped": {reason: self.pipeline.dropped.get(reason, 0) for reason in DROP_REASONS},
            "queue_depth": self.writer.queued_events,
            "queue_capacity": self.writer.capacity,
            "commits": stats.commits,
            "failed_commits": stats.failures,
            "commit_latency": stats.latency,
            "writer_up": 1 if self.writer.running else 0,
            "writer_starts": stats.writer_starts,
        }

    def probe(self) -> ServiceReport:
        stats = self.writer.stats
        depth = self.writer.queued_events
        recent_failure = (
            stats.last_failure_at is not None and time.monotonic() - stats.last_failure_at < FAILURE_WINDOW
        )
        if not self.writer.running:
            status = DOWN
        elif recent_failure or depth > 0.8 * self.writer.capacity:
            status = DEGRADED
        else:
            status = OK
        return ServiceReport(
            status,
            {
                "queue_depth": depth,
                "queue_capacity": self.writer.capacity,
                "accepted_events": stats.stored_events,
                "accepted_batches": stats.stored_batches,
                "duplicate_batches": stats.duplicate_batches,
                "dropped": dict(self.pipeline.dropped),
                "commits": stats.commits,
                "failed_commits": stats.failures,
                "last_commit_ms": stats.last_commit_ms,
                "last_group_batches": stats.last_group_batches,
                "writer_pid": stats.writer_pid,
                "writer_starts": stats.writer_starts,
                "floods": self.pipeline.floods.report(),
                **({"advice": advice} if (advice := self.pipeline.floods.advice()) else {}),
            },
        )

    def geo_probe(self) -> ServiceReport:
        """Where countries, regions and cities come from, and how old that data is."""
        info = self.geo
        return ServiceReport(
            OK,
            {
                "country_source": info.country_source,
                "country_data_version": info.country_data_version,
                "city_database": info.city_database,
                "city_database_type": info.city_database_type,
                "city_database_built_at": info.city_database_built_at,
            },
        )


class Guarded:
    """Outside the framework's error middleware: an unexpected failure still answers in the error shape.

    A database that cannot be reached or written (a site lookup during an outage) answers 503
    ``database_unavailable`` with Retry-After, logged once per outage, never a 500.
    """

    def __init__(self, app: ASGIApp, db: Database | None = None) -> None:
        self.app = app
        self.db = db

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except Exception as exc:
            if self.db is not None and self.db.note_outage(exc) is not None:
                status, code, message = 503, UNAVAILABLE_CODE, UNAVAILABLE_MESSAGE
                headers = [(b"retry-after", str(UNAVAILABLE_RETRY_AFTER).encode())]
            else:
                log.exception("ingest: %s %s failed", scope.get("method"), scope.get("path"))
                status, code, message = 500, "internal_error", "Something went wrong; try again."
                headers = []
            # When the answer had already begun the server refuses a second one: nothing to add.
            with contextlib.suppress(Exception):
                await answer(send, status, error_payload(code, message), headers)
