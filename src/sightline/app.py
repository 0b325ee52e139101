"""Builds the ASGI application: the SDK-facing ingest paths, the console API, pages and background jobs.

This is the only module that wires every surface together.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, nullcontext
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from sqlalchemy.engine import make_url
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.types import Message, Receive, Scope, Send

from sightline import __version__
from sightline.accounts import passwords
from sightline.assistants.endpoint import PATH as MCP_PATH
from sightline.assistants.endpoint import McpEndpoint
from sightline.console import annotations as console_annotations
from sightline.console import (
    auth,
    conversions,
    errors,
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
from sightline.console.guard import MAX_BODY, ConsoleGuard, is_guarded
from sightline.console.security_doc import document_security
from sightline.context import Context, build_context
from sightline.database import Database, open_database
from sightline.health.disk import MIB, DiskGuard
from sightline.health.registry import database_probe
from sightline.imports import jobs as import_jobs
from sightline.ingest import feedback as ingest_feedback
from sightline.ingest import recordings as ingest_recordings
from sightline.ingest.service import Ingest, is_sdk_path
from sightline.mail import job as mail_job
from sightline.mail.job import MailJob
from sightline.metrics.collectors import (
    CONNECTIONS_SPEC,
    DECODER_SPEC,
    DISK_SPEC,
    RECORDINGS_SPEC,
    STORE_SPEC,
    SURVEYS_SPEC,
    FiguresCollector,
    HttpCollector,
    IngestCollector,
    build_registry,
    store_figures,
)
from sightline.metrics.endpoint import MetricsEndpoint
from sightline.metrics.http import HttpFigures, Observed
from sightline.recordings import feature as recordings_feature
from sightline.recordings import retention
from sightline.recordings.decoder import ChunkDecoder
from sightline.recordings.service import Recordings
from sightline.recordings.store import FileChunkStore
from sightline.serving import SlowClientLimits
from sightline.settings import Settings
from sightline.visitors import retention as data_retention
from sightline.web import pages, player, unsubscribe
from sightline.web.assets import StaticAssets
from sightline.web.bodies import BodyLimit
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
    ingest before the console's middleware stack, which those paths do not use. Every HTTP request
    first passes ``observed`` (request id, route figures for ``/metrics``)."""

    ingest: Ingest | None = None
    observed: Observed | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.observed is not None and scope["type"] == "http":
            await self.observed(scope, receive, send)
        else:
            await self.dispatch(scope, receive, send)

    async def dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.ingest is not None:
            path = scope["path"]
            endpoint = self.ingest.endpoint(path)
            if endpoint is not None:
                scope["sightline.route"] = self.ingest.template(path)
                await endpoint(scope, receive, send)
                return
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        started = False

        async def sent(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await super().__call__(scope, receive, sent)
        except Exception:
            # Starlette answers an unexpected error with its handler's 500 (logged there) and then
            # raises it again, which makes uvicorn close the connection: a keep-alive client's next
            # request would find it reset. Once the answer has gone out, the error ends here.
            if not started:
                raise

    def route_template(self, scope: Scope) -> str | None:
        """The template of the route a request would have reached (one refused before routing)."""
        for route in _flat_routes(self.router.routes):
            match, _ = route.matches(scope)
            if match != Match.NONE:
                path = str(getattr(route, "path", ""))
                return path + "/{path}" if isinstance(route, Mount) else path
        return None


async def _on_http_error(request: Request, exc: Exception) -> Response:
    """An unknown address a browser asks for gets the console's not-found page, the rest the error shape."""
    if isinstance(exc, HTTPException) and exc.status_code == 404:
        page = pages.not_found_page(request)
        if page is not None:
            return page
    return await errors.on_http_error(request, exc)


def _flat_routes(routes: Sequence[BaseRoute]) -> Iterator[BaseRoute]:
    """Every route with a path, looking inside included routers (FastAPI wraps each include)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _flat_routes(inner.routes)
        elif isinstance(getattr(route, "path", None), str):
            yield route


def create_app(settings: Settings, db: Database | None = None) -> FastAPI:
    """The application for ``settings``; migrates the database when it opens it itself."""
    database = db or open_database(settings.effective_database_url)
    passwords.prepare()
    ctx = build_context(settings, database)
    ctx.health.register("database", database_probe(database), critical=True)
    recordings = recordings_feature.build(settings, database)
    chunk_files = recordings.store
    disk = DiskGuard(
        settings.data_path,
        sqlite_file(database),
        warn_bytes=int(settings.disk_warn_free_mb) * MIB,
        refuse_bytes=int(settings.disk_refuse_free_mb) * MIB,
        recordings_dir=chunk_files.root if isinstance(chunk_files, FileChunkStore) else None,
    )
    ctx.health.register("disk", disk.probe)
    ingest = Ingest(settings, database, ctx.health, disk)
    store = ctx.store
    ctx.health.register("store", store.probe)
    decoder = ChunkDecoder()
    recordings_feature.register_health(recordings, ctx.health, decoder)
    recording_cleanup = retention.Cleanup(recordings, settings.recording_retention_days)
    recording_cleanup.register_health(ctx.health)
    event_retention = data_retention.Retention(database, settings.event_retention_days)
    ctx.health.register("retention", event_retention.probe)

    assistants = McpEndpoint(lambda: database, lambda: app)
    mailer = MailJob(database, store, ctx.mailer, ctx.origin) if ctx.mailer is not None else None
    mails = mail_job.periodic(mailer, float(settings.mail_check_seconds)) if mailer is not None else None
    mail_job.register_health(ctx.health, mailer, mails)
    importer = ctx.importer

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with (
            decoder.running(),  # spawned first: it starts while the writer does
            ingest.running(),
            recording_cleanup.periodic.running(),
            event_retention.periodic.running(),
            store.running(),
            mails.running() if mails is not None else nullcontext(),
            import_jobs.running(importer),
            assistants.running(),
        ):
            await decoder.ready()
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
    http_figures = HttpFigures()
    app.observed = Observed(app.dispatch, http_figures, app.route_template)
    survey_counts: Counter[str] = Counter()
    registry = build_registry(
        [
            HttpCollector(http_figures),
            IngestCollector(ingest),
            FiguresCollector(lambda: _recording_figures(recordings), RECORDINGS_SPEC),
            FiguresCollector(lambda: _survey_figures(survey_counts), SURVEYS_SPEC),
            FiguresCollector(store_figures(ctx.health), STORE_SPEC),
            FiguresCollector(disk.figures, DISK_SPEC),
            FiguresCollector(decoder.figures, DECODER_SPEC),
            FiguresCollector(lambda: {"closed": dict(SlowClientLimits.closed)}, CONNECTIONS_SPEC),
        ]
    )
    app.add_route(
        "/metrics",
        MetricsEndpoint(
            registry, settings.metrics_token, settings.trusted_proxies, str(settings.client_address_header)
        ).handle,
        include_in_schema=False,
    )
    app.state.recordings = recordings
    errors.install(app)
    app.add_exception_handler(HTTPException, _on_http_error)
    app.router.routes[0:0] = ingest.routes()  # SDK paths first: the hot path matches at once
    app.router.routes[0:0] = ingest_feedback.routes(ingest.pipeline, database, survey_counts)
    app.router.routes[0:0] = ingest_recordings.routes(
        ingest.pipeline, recordings, decoder, accept_headless=bool(settings.ingest_accept_headless)
    )
    # The player's paths first: /sites/{id}/heatmap lies under the console's /sites/{rest:path}.
    for router in (auth.router, sites.router, health.router, setup.router, player.router, pages.router):
        app.include_router(router)
    app.include_router(console_surveys.router)
    app.include_router(console_reports.router)
    app.include_router(console_overview.router)
    app.include_router(goals.router)
    app.include_router(console_annotations.router)
    app.include_router(conversions.router)
    app.include_router(conversions.reports)
    app.include_router(console_recordings.router)
    app.include_router(team.router)
    app.include_router(shared.router)
    app.include_router(exports.router)
    app.include_router(console_mail.router)
    app.include_router(console_imports.router)
    app.include_router(shared.public)
    app.router.routes.extend(shared.public_routes())
    app.router.routes.append(Route(MCP_PATH, assistants, methods=["GET", "POST", "DELETE"]))
    app.include_router(console_visitors.router)
    app.include_router(unsubscribe.router)
    # Built assets (ui/, sdk/) are not in git; a server without them still starts.
    app.mount("/static", StaticAssets(directory=pages.STATIC, check_dir=False), name="static")

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        """Liveness for load balancers and orchestrators: the process answers."""
        return {"status": "ok"}

    app.openapi = document_security(app)  # type: ignore[method-assign]
    # Innermost: every body the guard (console API) and ingest (SDK paths) do not read themselves.
    app.add_middleware(BodyLimit, limit=MAX_BODY, skip=lambda path: is_guarded(path) or is_sdk_path(path))
    app.add_middleware(ConsoleGuard, context=lambda: _context(app), routes=lambda: app.router.routes)
    app.add_middleware(SecurityHeaders, skip=is_sdk_path)
    return app


def sqlite_file(database: Database) -> Path | None:
    """The SQLite database's file, whose file system the disk guard watches too."""
    if database.dialect != "sqlite":
        return None
    name = make_url(database.url).database
    return Path(name).resolve() if name and name != ":memory:" else None


def _recording_figures(recordings: Recordings) -> dict[str, Any]:
    count, size = recordings.totals()
    return {
        "stored_chunks": recordings.stored_counts["chunks"],
        "stored_bytes": recordings.stored_counts["bytes"],
        "refused": dict(recordings.drop_counts),
        "recordings": count,
        "used_bytes": size,
    }


def _survey_figures(counts: Counter[str]) -> dict[str, Any]:
    refused = {k.partition(":")[2]: v for k, v in counts.items() if k.startswith("refused:")}
    return {"stored": counts["stored"], "duplicate": counts["duplicate"], "refused": refused}


def _context(app: FastAPI) -> Context:
    ctx: Context = app.state.ctx
    return ctx
