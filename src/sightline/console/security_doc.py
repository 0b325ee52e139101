"""How the OpenAPI document states authentication: the session cookie everywhere, and an API key
(``Authorization: Bearer``) as the alternative on the routes a key's scopes name (``teams.scopes``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from sightline.accounts.sessions import COOKIE_NAME
from sightline.console.roles import is_key_route

SCHEMES = {
    "session": {
        "type": "apiKey",
        "in": "cookie",
        "name": COOKIE_NAME,
        "description": "The console session set by POST /api/login.",
    },
    "apiKey": {
        "type": "http",
        "scheme": "bearer",
        "description": "An API key made in the console (Team, API keys); it calls the routes of "
        "its scopes (stats:read, sites:read, sites:write, events:write). See docs/stats-api.md.",
    },
}
OPEN = {"/api/login", "/api/invitations/lookup", "/api/invitations/accept", "/setup"}


def document_security(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """``app.openapi`` with the security schemes and each operation's requirement added."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = build()
        document.setdefault("components", {})["securitySchemes"] = SCHEMES
        for path, operations in document.get("paths", {}).items():
            for method, operation in operations.items():
                if path in OPEN:
                    operation["security"] = []
                elif is_key_route(method.upper(), path):
                    operation["security"] = [{"session": []}, {"apiKey": []}]
                    operation.setdefault("responses", {}).setdefault(
                        "429", {"description": "Over the API key's request limit; see Retry-After."}
                    )
                else:
                    operation["security"] = [{"session": []}]
        app.openapi_schema = document
        return document

    return openapi
