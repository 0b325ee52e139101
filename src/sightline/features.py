"""Features plug in: what one feature brings to a running server, and how the server takes it.

A ``Feature`` names a feature's parts: its routes (console API routers, pages, other paths), its
SDK-facing paths (placed before every other route), its health probes, its background jobs, its
metrics collectors and the settings it owns. A feature package builds the parts it runs itself in
its ``feature.py`` (probes, jobs, metrics); the surfaces that answer for it (``console``, ``ingest``,
``web``) import the package, never the other way, so ``sightline.wiring`` adds their routes and
lists every feature of a server once. ``app.create_app`` walks that list: ``register_probes``,
``add_routes``, ``collectors`` and ``Jobs`` are the only places a feature's parts are taken in.

May import: ``sightline.health`` (the probe type), ``sightline.jobs`` (``Periodic``). Imports no
feature.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace

from fastapi import APIRouter, FastAPI
from prometheus_client.registry import Collector
from starlette.routing import BaseRoute

from sightline.health.registry import HealthRegistry, Probe
from sightline.jobs import Periodic

log = logging.getLogger("sightline.features")


@dataclass(frozen=True)
class HealthProbe:
    """A service of ``GET /api/health``; a critical one that is down makes the whole service down."""

    name: str
    probe: Probe
    critical: bool = False


@dataclass(frozen=True)
class Job:
    """Something that runs in the background while the server does: entered at start (in the
    list's order, those ``first`` before the others), left at stop (in reverse). ``ready`` is
    awaited once every job has started."""

    name: str
    running: Callable[[], AbstractAsyncContextManager[object]]
    ready: Callable[[], Awaitable[object]] | None = None
    first: bool = False  # started before the others: what takes longest to be ready

    @classmethod
    def periodic(cls, periodic: Periodic) -> Job:
        """A ``jobs.Periodic``: the one runner of every job run now and then."""
        return cls(periodic.name, periodic.running)


@dataclass(frozen=True)
class Feature:
    """One feature's parts. Every field but ``name`` may stay empty."""

    name: str
    routes: Sequence[APIRouter | BaseRoute] = ()  # in order: a router is included, a route added
    sdk_routes: Sequence[BaseRoute] = ()  # ingest's paths, before every other route
    probes: Sequence[HealthProbe] = ()
    jobs: Sequence[Job] = ()
    collectors: Sequence[Collector] = ()  # read at each scrape of /metrics
    settings: Sequence[str] = ()  # names in the settings registry that only this feature reads

    def with_routes(self, *routes: APIRouter | BaseRoute, sdk_routes: Sequence[BaseRoute] = ()) -> Feature:
        """The feature with the routes of the surfaces that answer for it added."""
        return replace(self, routes=(*self.routes, *routes), sdk_routes=(*self.sdk_routes, *sdk_routes))


def register_probes(health: HealthRegistry, features: Sequence[Feature]) -> None:
    for feature in features:
        for probe in feature.probes:
            health.register(probe.name, probe.probe, critical=probe.critical)


def add_routes(app: FastAPI, features: Sequence[Feature]) -> None:
    """Every feature's SDK paths first (the hot path matches at once), then its other routes."""
    app.router.routes[0:0] = [route for feature in features for route in feature.sdk_routes]
    for feature in features:
        for route in feature.routes:
            if isinstance(route, APIRouter):
                app.include_router(route)
            else:
                app.router.routes.append(route)


def collectors(features: Sequence[Feature]) -> list[Collector]:
    return [collector for feature in features for collector in feature.collectors]


@dataclass
class Jobs:
    """Every feature's jobs, for the application's lifespan; ``now`` names those running."""

    features: Sequence[Feature]
    now: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[Job]:
        every = [job for feature in self.features for job in feature.jobs]
        return iter(sorted(every, key=lambda job: not job.first))  # stable: else in the list's order

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for job in self:
                await stack.enter_async_context(job.running())
                self.now.append(job.name)
                stack.callback(self.now.remove, job.name)
            for job in self:
                if job.ready is not None:
                    await job.ready()
            log.debug("jobs running: %s", ", ".join(self.now))
            yield
