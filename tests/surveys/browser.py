"""Browser fixtures of the widget tests: headless Chromium, a customer shop on its own loopback
origin (every path serves one page carrying the snippet), and that shop's site on the live server."""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from tests.conftest import sign_in
from tests.sdk.build import ensure_built
from tests.support.server import LiveServer

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"]
# Ingest drops headless browsers as bots; the tests browse as the desktop Chrome a visitor runs.
USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)


class Shop:
    """A customer's site: every GET answers one HTML page with ``snippet`` in its head."""

    def __init__(self) -> None:
        self.snippet = ""
        shop = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.startswith("/favicon"):
                    self.send_error(404)
                    return
                body = (
                    "<!doctype html><html><head><meta charset='utf-8'><title>Shop</title>"
                    f"{shop.snippet}</head><body><h1>Shop</h1><a href='/next'>next</a></body></html>"
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.domain = f"127.0.0.1:{self.port}"
        self.origin = f"http://{self.domain}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def use(self, base_url: str, key: str, **attrs: str) -> None:
        extra = "".join(f' data-{name}="{html.escape(value)}"' for name, value in attrs.items())
        self.snippet = (
            f'<script defer src="{base_url}/analytics.js" data-site="{html.escape(key)}"{extra}></script>'
        )

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@dataclass
class Site:
    id: int
    key: str
    base_url: str
    owner: httpx.Client


def open_page(page: Page, url: str, ready: bool = True) -> None:
    """Load ``url`` and wait for ``window.analytics`` (with ``ready``, for its events connection)."""
    page.goto(url)
    page.wait_for_function("() => window.analytics !== undefined")
    if ready:
        page.wait_for_function("() => analytics.status().events === 'ready'", timeout=15000)


def wait_until(page: Page, condition: Callable[[], bool], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        page.wait_for_timeout(100)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    ensure_built()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(user_agent=USER_AGENT)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    """A tab; the test fails if the page reported errors or unhandled rejections."""
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.add_init_script(
        "window.__rejections = [];"
        "addEventListener('unhandledrejection', e => window.__rejections.push(String(e.reason)));"
    )
    yield tab
    rejections = tab.evaluate("window.__rejections || []") if not tab.is_closed() else []
    assert errors == [], f"page errors: {errors}"
    assert rejections == [], f"unhandled rejections: {rejections}"


@pytest.fixture
def shop() -> Iterator[Shop]:
    server = Shop()
    yield server
    server.close()


@pytest.fixture(scope="module")
def owner_client(console_server: LiveServer) -> Iterator[httpx.Client]:
    client = sign_in(console_server)
    yield client
    client.close()


@pytest.fixture
def site(owner_client: httpx.Client, shop: Shop, console_server: LiveServer) -> Site:
    """A site for the shop's origin; the shop's pages carry its snippet, so the SDK starts itself."""
    response = owner_client.post("/api/sites", json={"name": "Shop", "domain": shop.domain})
    assert response.status_code == 201, response.text
    body = response.json()
    created = Site(id=body["id"], key=body["key"], base_url=console_server.base_url, owner=owner_client)
    shop.use(created.base_url, created.key)
    return created
