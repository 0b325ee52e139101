"""The console application's shell at the recordings paths and the click heatmap's, with the
replay's Content-Security-Policy.

The player rebuilds a recorded page inside a sandboxed iframe (``sandbox="allow-same-origin"``,
never ``allow-scripts``). That iframe inherits this document's CSP, and a recorded page needs
inline styles (its ``<style>`` elements and ``style`` attributes) and its images, so these paths
allow exactly that: ``style-src 'unsafe-inline'`` and images over http(s). Scripts stay limited
to the console's own files (``script-src 'self'``), and the sandbox blocks them in the replay too.
The console reaches these paths by a full page load (its links to them target ``_top``).
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from sightline.web.pages import console_shell

router = APIRouter(include_in_schema=False)

PLAYER_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob: http: https:; media-src 'none'; connect-src 'self'; "
    "font-src 'self' data:; frame-src 'self'; child-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
# The recordings' pages, and a page's click heatmap (drawn over the page's recorded snapshot).
PLAYER_PATHS = ("/recordings", "/recordings/{rest:path}", "/sites/{site_id}/heatmap")


def player_shell() -> HTMLResponse:
    response = console_shell()
    response.headers["Content-Security-Policy"] = PLAYER_CSP
    return response


for _path in PLAYER_PATHS:
    router.add_api_route(_path, player_shell, methods=["GET"])
