"""Fixtures of the console browser tests: the test process's headless Chromium, pages signed in to the
module's live server, a customer site on loopback, and screenshots kept under test-artifacts/."""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from playwright._impl._api_structures import SetCookieParam
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD
from tests.support.browser import kept_chromium
from tests.support.origins import loopback_server
from tests.support.server import LiveServer

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "console"
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 375, "height": 780}


@pytest.fixture(scope="module")
def browser() -> Browser:
    return kept_chromium()


# The owner session of each server's earlier tabs, reused while valid (Argon2 sign-ins are costly).
_SESSIONS: dict[str, list[SetCookieParam]] = {}


def backend_of(server: LiveServer) -> str:
    return "postgresql" if (server.database_url or "").startswith("postgresql") else "sqlite"


class Console:
    """Opens browser tabs on the console of one live server and keeps their screenshots."""

    def __init__(self, browser: Browser, server: LiveServer) -> None:
        self.browser = browser
        self.server = server
        self.url = server.base_url
        self.contexts: list[BrowserContext] = []
        self.errors: list[str] = []

    def context(
        self,
        *,
        scheme: str = "light",
        viewport: dict[str, int] | None = None,
        clipboard: bool = False,
        locale: str | None = None,
    ) -> BrowserContext:
        ctx = self.browser.new_context(
            base_url=self.url,
            color_scheme=scheme,  # type: ignore[arg-type]
            viewport=viewport or DESKTOP,  # type: ignore[arg-type]
            reduced_motion="reduce",
            locale=locale,
        )
        if clipboard:
            ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=self.url)
        self.contexts.append(ctx)
        return ctx

    def page(self, ctx: BrowserContext | None = None, **options: object) -> Page:
        tab = (ctx or self.context(**options)).new_page()  # type: ignore[arg-type]
        tab.on("pageerror", lambda error: self.errors.append(str(error)))
        tab.on("console", self._on_console)
        return tab

    def _on_console(self, message: ConsoleMessage) -> None:
        # Anything the Content-Security-Policy blocked (an inline style or script) is a defect.
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            self.errors.append(message.text)

    def signed_in(self, **options: object) -> Page:
        """A tab whose context holds an owner session (signed in through the API, like the form
        does; an earlier tab's session is reused while it is valid)."""
        ctx = self.context(**options)  # type: ignore[arg-type]
        kept = _SESSIONS.get(self.url)
        if kept:
            ctx.add_cookies(kept)
            if ctx.request.get("/api/me").status == 200:
                return self.page(ctx)
            ctx.clear_cookies()
        response = ctx.request.post(
            "/api/login",
            data={"email": OWNER_EMAIL, "password": OWNER_PASSWORD},
            headers={"Origin": self.server.origin},
        )
        assert response.status == 200, response.text()
        _SESSIONS[self.url] = ctx.cookies()  # type: ignore[assignment]
        return self.page(ctx)

    def api(self, tab: Page, method: str, path: str, body: object | None = None) -> object:
        """A console API call with the tab's session, as the console itself makes it."""
        response = tab.context.request.fetch(
            path, method=method, data=body, headers={"Origin": self.server.origin}
        )
        assert response.ok, response.text()
        return response.json()

    def shoot(self, tab: Page, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{backend_of(self.server)}-{name}.png"
        tab.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        for ctx in self.contexts:
            ctx.close()


@pytest.fixture
def console(browser: Browser, console_server: LiveServer) -> Iterator[Console]:
    """Browser tabs on ``console_server``; the test fails if a page threw an uncaught error or the
    Content-Security-Policy blocked anything."""
    helper = Console(browser, console_server)
    yield helper
    helper.close()
    assert helper.errors == [], f"page errors: {helper.errors}"


class CustomerSite:
    """A customer's web site on loopback whose home page a test sets."""

    def __init__(self) -> None:
        self.home = b"<!doctype html><title>Shop</title><p>Welcome</p>"
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = site.home if self.path.split("?")[0] == "/" else b"not found"
                self.send_response(200 if self.path.split("?")[0] == "/" else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = loopback_server(Handler)
        self.domain = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def serve_snippet(self, snippet: str) -> None:
        self.home = f"<!doctype html><html><head>{snippet}</head><body>Shop</body></html>".encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def customer_site() -> Iterator[Callable[[], CustomerSite]]:
    started: list[CustomerSite] = []

    def start() -> CustomerSite:
        site = CustomerSite()
        started.append(site)
        return site

    yield start
    for site in started:
        site.close()


def show(page: Page, scheme: str, viewport: dict[str, int]) -> None:
    """Show ``page`` in a theme and at a size, as a browser does when the system's theme changes or
    the window is resized: the console's styles follow the media queries, and its charts redraw on
    the theme's change event and their resize observer, before the next frame (two are awaited).
    Checking one loaded page in several looks costs a fraction of a load and a tab per look."""
    page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    page.set_viewport_size(viewport)  # type: ignore[arg-type]
    shown = page.evaluate(
        "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done("
        "[matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light', innerWidth]))))"
    )
    assert shown == [scheme, viewport["width"]], f"the page did not switch to {scheme} at {viewport}"


def unique(prefix: str) -> str:
    """A name no other test of the module uses (the sites of one server share one owner)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


SITE_URL = re.compile(r".*/sites/(\d+)(\?.*)?$")


# The tabs of a tab group (``.segmented``) not shown whole: past its edges or with a cut label.
WHOLE_TABS = """(group) => {
  const edge = group.getBoundingClientRect();
  return [...group.querySelectorAll('button')].filter((b) => {
    const box = b.getBoundingClientRect();
    return box.left < edge.left - 1 || box.right > edge.right + 1 || b.scrollWidth > b.clientWidth + 1;
  }).map((b) => b.textContent);
}"""
