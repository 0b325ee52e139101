"""Who may call which console route: roles, viewers' sites and API keys, decided before a handler.

- The owner and admins may call every route (the rules inside, such as "the owner cannot be
  removed", live in ``sightline.teams``).
- A viewer reads: every ``GET`` except the team's management lists (``ADMIN_READS``), and of the
  sites they are given only; their state-changing calls are 403 ``forbidden`` (signing out aside).
  A site outside their sites is 404, as if it did not exist.
- An API key (``Authorization: Bearer``) calls the routes of its scopes, by the one table in
  ``teams/scopes.py`` (a route no scope names answers 401, one of a scope the key lacks 403
  ``forbidden``), and only its own site when it is made for one: such a key may not create sites.

A new route needs no entry here: a ``GET`` is a read (scoped by the site it names) and anything
else changes state. ``tests/console/test_route_matrix.py`` proves the outcome for every route.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi.routing import APIRoute
from sqlalchemy import Connection, Table, select
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

from sightline.console.ids import Named
from sightline.database.metadata import metadata
from sightline.errors import ApiError
from sightline.teams.principal import Principal
from sightline.teams.scopes import lacking, scope_for

# Reads only the owner and admins may make: the team's people, keys and links, a visitor's data.
ADMIN_READS = frozenset(
    {
        ("GET", "/api/members"),
        ("GET", "/api/invitations"),
        ("GET", "/api/keys"),
        ("GET", "/api/sites/{site_id}/shares"),
        # Everything stored about one person (an access request) is for those who may erase it.
        ("GET", "/api/sites/{site_id}/visitors/{visitor_id}/export"),
    }
)
# State-changing calls every signed-in member may make.
EVERYONE_MAY = frozenset(
    {
        ("POST", "/api/logout"),
        # Each member's own choice of e-mails (the handler checks the member may read the site).
        ("PUT", "/api/sites/{site_id}/email-reports/subscription"),
    }
)
_CONVERTER = re.compile(r"\{(\w+):\w+\}")
# Path parameters naming an object that belongs to a site: the table that says which.
SITE_OF = {
    "recording_id": "recordings",
    "survey_id": "surveys",
    "goal_id": "goals",
    "import_id": "imports",
    "annotation_id": "annotations",
    "share_id": "shares",
}


def api_routes(routes: Sequence[BaseRoute]) -> list[APIRoute]:
    """Every ``APIRoute`` of the application, looking inside included routers."""
    found: list[APIRoute] = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append(route)
            continue
        inner = getattr(route, "original_router", None) or getattr(route, "routes", None)
        if inner is not None:
            found.extend(api_routes(inner.routes if hasattr(inner, "routes") else inner))
    return found


def template_of(path: str) -> str:
    """A route's template as the rules (and the API's documentation) name it: converters left out,
    so ``/visitors/{visitor_id:path}/export`` is ``/visitors/{visitor_id}/export``."""
    return _CONVERTER.sub(r"{\1}", path)


def match_route(routes: Sequence[APIRoute], scope: Scope) -> tuple[str, Mapping[str, Any]] | None:
    """The template and path parameters of the console route that will answer ``scope``, if any."""
    for route in routes:
        matched, child = route.matches(scope)
        if matched == Match.FULL:
            return template_of(route.path), child.get("path_params", {})
    return None


KEYS_ONLY = "API keys work only on the routes of their scopes (docs/stats-api.md); sign in for the rest."


def forbidden(message: str) -> ApiError:
    return ApiError(403, "forbidden", message)


def is_key_route(method: str, template: str) -> bool:
    """Whether an API key may call this route at all (with the scope ``teams.scopes`` names)."""
    return scope_for(method, template) is not None


def authorise(conn: Connection, who: Principal, method: str, template: str, named: Named) -> None:
    """Raise 403 ``forbidden`` or 404 when ``who`` may not make this request.

    ``named`` is what the request names, read once by ``ids.named_ids``: its path parameters
    and ``?site_id=`` (the very values the handler will receive)."""
    if who.role == "api_key":
        scope = scope_for(method, template)
        if scope is None:
            raise ApiError(401, "not_signed_in", KEYS_ONLY)
        if scope not in who.scopes:
            raise lacking(scope)
    elif who.is_admin:
        return
    elif method != "GET":
        if (method, template) not in EVERYONE_MAY:
            raise forbidden("Your role (viewer) may read reports but not change anything.")
        return
    elif (method, template) in ADMIN_READS:
        raise forbidden("Only the owner and admins see this.")
    if who.site_ids is None:
        return
    site_ids = _sites_named(conn, named)
    if site_ids is None:
        if any(name.endswith("_id") for name in named.path):
            raise forbidden("You may read only the sites you were given.")
        if who.role == "api_key" and method != "GET":  # POST /api/sites: a new site
            raise forbidden("This API key is made for one site: it may not create sites.")
        return
    for site_id in site_ids:
        if site_id is not None and not who.may_read_site(site_id):
            if who.role == "api_key":
                raise forbidden("This API key works only on the site it was created for.")
            raise ApiError(404, "not_found", "No site with that id exists.")


def _sites_named(conn: Connection, named: Named) -> list[int | None] | None:
    """The sites a request names (by site id, an object of a site, or ``?site_id=``); None: none."""
    found: list[int | None] = [*named.query.values()]
    for name, value in named.path.items():
        if name == "site_id":
            found.append(int(value))
        elif name in SITE_OF and isinstance(metadata.tables.get(SITE_OF[name]), Table):
            table = metadata.tables[SITE_OF[name]]
            found.append(conn.execute(select(table.c.site_id).where(table.c.id == value)).scalar())
    return found or None
