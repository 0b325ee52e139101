"""Every route the application registers, read from a real app instance, for route-matrix tests."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from sightline.app import create_app
from sightline.console.roles import template_of
from sightline.database import open_database
from sightline.settings import load

_PARAM = re.compile(r"\{[^}]+\}")


@dataclass(frozen=True)
class Route:
    method: str
    template: str

    @property
    def path(self) -> str:
        """The template with every path parameter filled with an id that may or may not exist."""
        return _PARAM.sub("1", self.template)

    def __str__(self) -> str:
        return f"{self.method} {self.template}"


def document_app(prefix: str = "sightline-routes-") -> FastAPI:
    """A new application to read its routes and its OpenAPI document from, not to serve: its SQLite
    database is left empty, since building the app reads none of it (the same document, and a
    database at the newest schema cost 0.75 s of CPU, in each xdist worker's collection too)."""
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    database = open_database(f"sqlite:///{directory / 'sightline.db'}", migrate=False)
    return create_app(load({"data_dir": str(directory)}, environ={}), database)


def _walk(routes: Sequence[BaseRoute]) -> Iterator[APIRoute]:
    """Every APIRoute, looking inside included routers (FastAPI wraps each include)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        inner = getattr(route, "original_router", None) or getattr(route, "routes", None)
        if inner is not None:
            yield from _walk(inner.routes if hasattr(inner, "routes") else inner)


def console_routes() -> list[Route]:
    """Every (method, path) under /api plus the setup endpoint, as the application registers them."""
    app = document_app()
    found: set[Route] = set()
    for route in _walk(app.router.routes):
        if not (route.path.startswith("/api/") or route.path == "/setup"):
            continue
        for method in route.methods or ():
            if method != "HEAD":
                found.add(Route(method, template_of(route.path)))  # as the OpenAPI document names it
    # The OpenAPI document sees prefixes given at include time, which the walk above may not.
    for path, operations in app.openapi()["paths"].items():
        for method in operations:
            if path.startswith("/api/") or path == "/setup":
                found.add(Route(method.upper(), path))
    return sorted(found, key=str)
