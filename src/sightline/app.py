"""Builds the ASGI application: the SDK-facing ingest paths, the console API, pages and background jobs.

It walks the one list of features (``wiring.server``) to take in their health probes, jobs,
metrics and routes (``features``), and adds what belongs to no feature: the middleware, the error
handlers, ``/metrics``, ``/healthz`` and the static assets.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount
from starlette.types import Message, Receive, Scope, Send

from sightline import __version__, features, wiring
from sightline.accounts import passwords
from sightline.console import errors
from sightline.console.guard import MAX_BODY, ConsoleGuard, is_guarded
from sightline.console.security_doc import document_security
from sightline.context import Context, build_context
from sightline.database import Database, open_database
from sightline.ingest.service import Ingest, is_sdk_path
from sightline.metrics.collectors import build_registry
from sightline.metrics.endpoint import MetricsEndpoint
from sightline.metrics.http import Observed
from sightline.settings import Settings
from sightline.web import pages
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
        """The template of the route a request would have reached (one refused before routing): the
        first that matches path and method, else the first that matches the path (405), as routing."""
        partial: BaseRoute | None = None
        for route in _flat_routes(self.router.routes):
            match, _ = route.matches(scope)
            if match == Match.FULL:
                return _template(route)
            if match == Match.PARTIAL and partial is None:
                partial = route
        return _template(partial) if partial is not None else None


async def _on_http_error(request: Request, exc: Exception) -> Response:
    """An unknown address a browser asks for gets the console's not-found page, the rest the error shape."""
    if isinstance(exc, HTTPException) and exc.status_code == 404:
        page = pages.not_found_page(request)
        if page is not None:
            return page
    return await errors.on_http_error(request, exc)


def _template(route: BaseRoute) -> str:
    path = str(getattr(route, "path", ""))
    return path + "/{path}" if isinstance(route, Mount) else path


def _flat_routes(routes: Sequence[BaseRoute]) -> Iterator[BaseRoute]:
    """Every route with a path, looking inside included routers (FastAPI wraps each include)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _flat_routes(inner.routes)
        elif isinstance(getattr(route, "path", None), str):
            yield route


def create_app(settings: Settings, db: Database | None = None) -> FastAPI:
    """The application for ``settings``, with every feature of ``wiring.server`` plugged in; migrates
    the database when it opens it itself."""
    database = db or open_database(settings.effective_database_url)
    passwords.prepare()
    ctx = build_context(settings, database)
    server = wiring.server(ctx, lambda: app)
    features.register_probes(ctx.health, server.features)
    jobs = features.Jobs(server.features)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with jobs.running():
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
    app.state.features = server.features
    app.state.jobs = jobs
    app.ingest = server.ingest
    app.observed = Observed(app.dispatch, server.http_figures, app.route_template)
    registry = build_registry(features.collectors(server.features))
    app.add_route(
        "/metrics",
        MetricsEndpoint(
            registry, settings.metrics_token, settings.trusted_proxies, str(settings.client_address_header)
        ).handle,
        include_in_schema=False,
    )
    app.state.recordings = server.recordings
    errors.install(app)
    app.add_exception_handler(HTTPException, _on_http_error)
    features.add_routes(app, server.features)
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


def _context(app: FastAPI) -> Context:
    ctx: Context = app.state.ctx
    return ctx
