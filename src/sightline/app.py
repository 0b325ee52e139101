"""Builds the ASGI application: the SDK-facing ingest paths, the console API, pages and background jobs.

This is the only module that wires every surface together.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from sightline import __version__
from sightline.console import auth, errors, health, setup, sites
from sightline.console import recordings as console_recordings
from sightline.console import reports as console_reports
from sightline.console import surveys as console_surveys
from sightline.console.guard import ConsoleGuard
from sightline.context import Context, build_context
from sightline.health.registry import database_probe, disk_probe
from sightline.ingest import feedback as ingest_feedback
from sightline.ingest import recordings as ingest_recordings
from sightline.ingest.service import Ingest, is_sdk_path
from sightline.recordings import feature as recordings_feature
from sightline.recordings import retention
from sightline.settings import Settings
from sightline.storage import Database, open_database
from sightline.store.client import Store
from sightline.web import pages, player
from sightline.web.assets import StaticAssets
from sightline.web.headers import SecurityHeaders

log = logging.getLogger("sightline")

API_DESCRIPTION = """The Sightline owner console API.

Every endpoint except `POST /api/login` needs the session cookie set by login. State-changing
requests must carry an `Origin` header equal to the console's origin; JSON methods need
`Content-Type: application/json`; bodies are limited to 8 KiB. Errors have the shape
`{"error": {"code": "...", "message": "..."}}`.
"""


class SightlineApp(FastAPI):
    """FastAPI that hands ingest's hot path (``/i/events``, ``/i/config``, ``/analytics*.js``) to
    ingest before the console's middleware stack, which those paths do not use."""

    ingest: Ingest | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.ingest is not None:
            endpoint = self.ingest.endpoint(scope["path"])
            if endpoint is not None:
                await endpoint(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


def create_app(settings: Settings, db: Database | None = None) -> FastAPI:
    """The application for ``settings``; migrates the database when it opens it itself."""
    database = db or open_database(settings.effective_database_url)
    ctx = build_context(settings, database)
    ctx.health.register("database", database_probe(database), critical=True)
    ctx.health.register("disk", disk_probe(settings.data_path))
    ingest = Ingest(settings, database, ctx.health)
    store = ctx.store = Store(settings, database)
    ctx.health.register("store", store.probe)
    recordings = recordings_feature.build(settings, database)
    recordings_feature.register_health(recordings, ctx.health)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with (
            ingest.running(),
            retention.running(recordings, settings.recording_retention_days),
            store.running(),
        ):
            yield
        if db is None:
            database.dispose()

    app = SightlineApp(
        title="Sightline console API",
        version=__version__,
        description=API_DESCRIPTION,
        openapi_url=None,  # served to signed-in owners at /api/openapi.json
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        default_response_class=JSONResponse,
    )
    app.state.ctx = ctx
    app.ingest = ingest
    app.state.recordings = recordings
    errors.install(app)
    app.router.routes[0:0] = ingest.routes()  # SDK paths first: the hot path matches at once
    app.router.routes[0:0] = ingest_feedback.routes(ingest.pipeline, database)
    app.router.routes[0:0] = ingest_recordings.routes(
        ingest.pipeline, recordings, accept_headless=bool(settings.ingest_accept_headless)
    )
    for router in (auth.router, sites.router, health.router, setup.router, pages.router):
        app.include_router(router)
    app.include_router(console_surveys.router)
    app.include_router(console_reports.router)
    app.include_router(console_recordings.router)
    app.include_router(player.router)
    # Built assets (ui/, sdk/) are not in git; a server without them still starts.
    app.mount("/static", StaticAssets(directory=pages.STATIC, check_dir=False), name="static")

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict[str, str]:
        """Liveness for load balancers and orchestrators: the process answers."""
        return {"status": "ok"}

    app.add_middleware(ConsoleGuard, context=lambda: _context(app))
    app.add_middleware(SecurityHeaders, skip=is_sdk_path)
    return app


def _context(app: FastAPI) -> Context:
    ctx: Context = app.state.ctx
    return ctx
