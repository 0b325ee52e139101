"""Console pages served as HTML: the console application's shell at its client-side routes,
``GET /setup`` (first-run owner creation), and the static assets they load.

The console is a single-page application built from ``ui/`` into ``static/console/``. The server
answers every path the application routes (``CONSOLE_PATHS``) with the same small shell; the
application then reads the path and calls the console API. Asset URLs carry a version token so a
rebuilt bundle is never mixed with a cached one.
"""

from __future__ import annotations

import hashlib
import json
import re
from html import escape
from pathlib import Path
from string import Template

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from sightline.accounts.setup import setup_token_valid
from sightline.context import Context
from sightline.teams.shares import find_share

router = APIRouter(include_in_schema=False)

TEMPLATES = Path(__file__).with_name("templates")
STATIC = Path(__file__).with_name("static")
CONSOLE = STATIC / "console"
ASSETS = ("app.js", "console.css", "theme.js", "setup.js", "manifest.json")
CHUNK = re.compile(r"chunk-[A-Za-z0-9]+\.js")

# Client-side routes of the console application; a new section adds its paths here and in
# ui/src/sections.ts. "{rest:path}" covers every page below a section.
CONSOLE_PATHS = (
    "/login",
    "/sites",
    "/overview",
    "/sites/{rest:path}",
    "/health",
    "/reports",
    "/surveys",
    "/surveys/{rest:path}",
    "/invite",
    "/team",
    "/team/{rest:path}",
)


def asset_version() -> str | None:
    """A token that changes whenever a built asset changes; None when the console is not built."""
    digest = hashlib.sha256()
    for name in ASSETS:
        try:
            stat = (CONSOLE / name).stat()
        except OSError:
            return None
        digest.update(f"{name}:{stat.st_mtime_ns}:{stat.st_size};".encode())
    return digest.hexdigest()[:12]


def preload_links() -> str:
    """``<link rel="modulepreload">`` for the chunks app.js imports statically (from the build's
    manifest), so the browser fetches them with app.js instead of after parsing it."""
    try:
        names = json.loads((CONSOLE / "manifest.json").read_text("utf-8")).get("preload", [])
    except (OSError, ValueError, AttributeError):
        return ""
    return "\n".join(
        f'<link rel="modulepreload" href="/static/console/{name}">'
        for name in names
        if isinstance(name, str) and CHUNK.fullmatch(name)
    )


def render(name: str, status: int = 200, *, needs_assets: bool = True, **fields: str) -> HTMLResponse:
    """The template ``name`` with its ``$fields`` (HTML-escaped here)."""
    version = asset_version()
    if version is None and needs_assets:
        return HTMLResponse((TEMPLATES / "not-built.html").read_text("utf-8"), status_code=503)
    html = Template((TEMPLATES / name).read_text("utf-8")).substitute(
        version=version or "unbuilt",
        preload=preload_links(),
        **{key: escape(value) for key, value in fields.items()},
    )
    # The shell is tiny and names versioned assets: revalidate it, cache the assets.
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-cache"})


@router.get("/")
def home() -> RedirectResponse:
    return RedirectResponse("/sites", status_code=302)


def console_shell() -> HTMLResponse:
    """The application shell; the application shows the page for the path, or the login screen."""
    return render("console.html")


for _path in CONSOLE_PATHS:
    router.add_api_route(_path, console_shell, methods=["GET"])


# Addresses whose unknown paths stay in the API's error shape, whoever asks.
NOT_PAGES = ("/api/", "/static/", "/share/", "/i/", "/mcp")


def not_found_page(request: Request) -> HTMLResponse | None:
    """A browser's page request for an unknown address: the console's own not-found page (the
    application shell, answered 404, shows it with a way back). None for anything else, which
    keeps the JSON error: API paths, assets, and clients that do not ask for HTML."""
    path = request.url.path
    if request.method not in ("GET", "HEAD") or path.startswith(NOT_PAGES) or path in ("/api", "/mcp"):
        return None
    if "text/html" not in request.headers.get("accept", ""):
        return None
    return render("console.html", status=404)


@router.get("/share/{token}")
def shared_dashboard(request: Request, token: str) -> HTMLResponse:
    """A shared dashboard: the console application in its read-only mode, or 404 for a deleted link."""
    ctx: Context = request.app.state.ctx
    with ctx.db.read() as conn:
        share = find_share(conn, token)
    if share is None:
        return render("share-gone.html", status=404, needs_assets=False)
    return render("console.html")


@router.get("/setup")
def setup_page(request: Request, token: str = Query("", max_length=200)) -> HTMLResponse:
    ctx: Context = request.app.state.ctx
    with ctx.db.read() as conn:
        valid = setup_token_valid(conn, token)
    # Served even without built assets: the form still posts, only unstyled.
    return render(
        "setup.html" if valid else "setup-used.html", status=200 if valid else 404, needs_assets=False
    )
