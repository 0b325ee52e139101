"""Every HTTP request, timed and counted by route template, with its request id.

``Observed`` wraps the whole application (ingest's hot path included) as the outermost ASGI layer:
it gives the request its id (``sightline.logs``), echoes it in ``X-Request-ID``, and after the
answer adds one sample to the route's figures. A route is its template (``/api/sites/{site_id}``),
never the raw path, so a scan of random URLs cannot grow the figures; requests no route matched
share ``unmatched``. The figures are plain counters read at scrape time, no lock and no metrics
library call per request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sightline.logs import RequestIds
from sightline.metrics.buckets import HTTP_BOUNDS, LatencyBuckets

access_log = logging.getLogger("sightline.access")

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"

RouteOf = Callable[[Scope], str | None]


@dataclass(slots=True)
class RouteFigures:
    latency: LatencyBuckets = field(default_factory=lambda: LatencyBuckets(HTTP_BOUNDS))
    statuses: dict[int, int] = field(default_factory=dict)


class HttpFigures:
    """Requests per (route, method): latency buckets and a count per status."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], RouteFigures] = {}

    def record(self, route: str, method: str, status: int, seconds: float) -> None:
        key = (route, method if method in METHODS else "OTHER")
        figures = self.routes.get(key)
        if figures is None:
            figures = self.routes[key] = RouteFigures()
        figures.latency.observe(seconds)
        figures.statuses[status] = figures.statuses.get(status, 0) + 1


class Observed:
    """The outermost layer: request id, timing, route figures, and the debug access line."""

    def __init__(self, app: ASGIApp, figures: HttpFigures, route_of: RouteOf) -> None:
        self.app = app
        self.figures = figures
        self.route_of = route_of  # the template of a request the framework did not route itself
        self.ids = RequestIds()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = self.ids.assign(scope["headers"])
        root_path = scope.get("root_path", "")
        status = 0
        started = time.perf_counter()

        async def answered(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), (b"x-request-id", rid)]
            await send(message)

        try:
            await self.app(scope, receive, answered)
        finally:
            elapsed = time.perf_counter() - started
            route = scope.get("sightline.route")
            if route is None:
                found = scope.get("route")
                matched = getattr(found, "path", None)
                if not isinstance(matched, str):
                    matched = self.route_of({**scope, "root_path": root_path})  # as it arrived
                elif isinstance(found, Mount):
                    matched += "/{path}"
                route = matched or UNMATCHED
            # 0: the client left before any answer; 500: the application failed before one.
            self.figures.record(route, scope["method"], status, elapsed)
            if access_log.isEnabledFor(logging.DEBUG):
                access_log.debug(
                    "%s %s %d %.1f ms",
                    scope["method"],
                    route,
                    status,
                    elapsed * 1000,
                    extra={"method": scope["method"], "route": route, "status": status},
                )
