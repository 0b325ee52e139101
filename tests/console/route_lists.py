"""The console's routes as the application registers them, for the route matrix's tests
(``test_route_matrix.py``, ``test_route_roles.py``): read once per test process."""

from __future__ import annotations

from sightline.console.guard import JSON_METHODS, OPEN_ROUTES, STATE_CHANGING, UPLOAD_ROUTES
from tests.support.routes import Route, console_routes

ROUTES = console_routes()
SIGNED = [r for r in ROUTES if (r.method, r.template) not in OPEN_ROUTES]
CHANGING = [r for r in ROUTES if r.method in STATE_CHANGING]
JSON = [r for r in ROUTES if r.method in JSON_METHODS and (r.method, r.template) not in UPLOAD_ROUTES]
UPLOADS = [r for r in ROUTES if (r.method, r.template) in UPLOAD_ROUTES]
BIG = b'{"x": "' + b"a" * (8 * 1024) + b'"}'  # a body just over the console's 8 KiB


def ids(routes: list[Route]) -> list[str]:
    return [str(r) for r in routes]
