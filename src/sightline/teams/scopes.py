"""What an API key may do: its scopes, and the one table of which route needs which scope.

A key carries one or more scopes. Each route an API key may call is in ``ROUTE_SCOPES`` (or, for
a family of routes, ``PREFIX_SCOPES``) with the scope it needs; a route in neither is not for
keys at all (the console's guard answers it 401, as if no credential had been sent). A key
calling a route whose scope it lacks gets 403 ``forbidden``. The console's guard
(``console/roles.py``) and ingest's events endpoint (``ingest/server_events.py``) both read this
table, so a new key route is one line here. Imports nothing from the rest of Sightline but
``errors``.
"""

from __future__ import annotations

from sightline.errors import ApiError

STATS_READ = "stats:read"
SITES_READ = "sites:read"
SITES_WRITE = "sites:write"
EVENTS_WRITE = "events:write"

# Every scope with what it allows, in the order keys list them (the console shows these sentences).
SCOPES: dict[str, str] = {
    STATS_READ: "Read the reports of its sites (GET /api/sites/{id}/reports/..., GET /api/overview).",
    SITES_READ: "List its sites and read each one and its goals (GET /api/sites, GET /api/sites/{id}).",
    SITES_WRITE: "Create, change and delete sites and their goals (a provisioning API).",
    EVENTS_WRITE: "Send events from a backend (POST /api/events); needs a key made for one site.",
}
DEFAULT = (STATS_READ,)
# What keys made before scopes existed could do: the reports and the list of their sites.
LEGACY = (STATS_READ, SITES_READ)

EVENTS_ROUTE = ("POST", "/api/events")
# (method, route template) -> the scope a key needs to call it.
ROUTE_SCOPES: dict[tuple[str, str], str] = {
    ("GET", "/api/sites"): SITES_READ,  # lists only the key's sites
    ("GET", "/api/sites/{site_id}"): SITES_READ,
    ("GET", "/api/sites/{site_id}/goals"): SITES_READ,
    ("POST", "/api/sites"): SITES_WRITE,  # not for a key made for one site
    ("PATCH", "/api/sites/{site_id}"): SITES_WRITE,
    ("DELETE", "/api/sites/{site_id}"): SITES_WRITE,
    ("POST", "/api/sites/{site_id}/retry"): SITES_WRITE,
    ("POST", "/api/sites/{site_id}/goals"): SITES_WRITE,
    ("PATCH", "/api/goals/{goal_id}"): SITES_WRITE,
    ("DELETE", "/api/goals/{goal_id}"): SITES_WRITE,
    ("GET", "/api/overview"): STATS_READ,  # every site at a glance: only the key's sites
    EVENTS_ROUTE: EVENTS_WRITE,
}
# (method, template prefix) -> the scope of every route under it (reports added later included).
PREFIX_SCOPES: dict[tuple[str, str], str] = {
    ("GET", "/api/sites/{site_id}/reports/"): STATS_READ,
}


def scope_for(method: str, template: str) -> str | None:
    """The scope a key needs for this route, or None when keys may not call it at all."""
    found = ROUTE_SCOPES.get((method, template))
    if found is not None:
        return found
    for (prefix_method, prefix), scope in PREFIX_SCOPES.items():
        if method == prefix_method and template.startswith(prefix):
            return scope
    return None


def check_scopes(value: object) -> tuple[str, ...]:
    """A key's scopes as asked for at creation (None: the default), in ``SCOPES`` order; 422
    naming ``scopes`` for anything but a non-empty list of known scope names."""
    if value is None:
        return DEFAULT
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ApiError(
            422,
            "invalid_scopes",
            f"scopes is a non-empty list of: {', '.join(SCOPES)}.",
            field="scopes",
        )
    unknown = [v for v in value if v not in SCOPES]
    if unknown:
        raise ApiError(
            422,
            "invalid_scopes",
            f"Unknown scope {unknown[0][:40]!r}; the scopes are {', '.join(SCOPES)}.",
            field="scopes",
        )
    return tuple(scope for scope in SCOPES if scope in value)


def stored_scopes(value: object) -> tuple[str, ...]:
    """The scopes of a stored key (a JSON list), known ones only, in ``SCOPES`` order."""
    if not isinstance(value, list):
        return ()
    return tuple(scope for scope in SCOPES if scope in value)


def lacking(scope: str) -> ApiError:
    """403 ``forbidden`` for a key without ``scope``."""
    return ApiError(
        403,
        "forbidden",
        f"This API key does not have the {scope} scope this call needs; "
        "create a key with it under Team, API keys.",
    )
