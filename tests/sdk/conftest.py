"""Fixtures of the browser SDK tests: one headless Chromium per module, a customer shop on its own
origin per test, a site for that shop on the live Sightline server, and a view of the stored events."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from sightline.storage import Database, open_database
from tests.conftest import sign_in
from tests.sdk.build import ensure_built
from tests.sdk.helpers import Site, Store, Stored
from tests.sdk.shop import Shop
from tests.support.server import LiveServer

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"]
# The server drops headless browsers as bots; the tests browse as the desktop Chrome a visitor runs.
USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)


@pytest.fixture(scope="session")
def sdk_built() -> None:
    ensure_built()


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="module")
def browser(playwright: Playwright, sdk_built: None) -> Iterator[Browser]:
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
    """A tab that records page errors and unhandled rejections; the test fails if the SDK caused any."""
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
def store(console_server: LiveServer) -> Iterator[Store]:
    assert console_server.database_url is not None
    database: Database = open_database(console_server.database_url)
    yield Store(database)
    database.dispose()


@pytest.fixture
def site(owner_client: httpx.Client, shop: Shop, console_server: LiveServer) -> Site:
    """A site whose domain is the shop's origin; the shop page carries its snippet (SDK starts itself)."""
    response = owner_client.post("/api/sites", json={"name": "Shop", "domain": shop.domain})
    assert response.status_code == 201, response.text
    body = response.json()
    created = Site(id=body["id"], key=body["key"], base_url=console_server.base_url, owner=owner_client)
    shop.use(created.base_url, created.key)
    return created


@pytest.fixture(scope="module")
def owner_client(console_server: LiveServer) -> Iterator[httpx.Client]:
    """The signed-in owner, once per module (signing in costs a password hash)."""
    client = sign_in(console_server)
    yield client
    client.close()


@pytest.fixture
def stored(store: Store, site: Site, page: Page) -> Stored:
    return Stored(store, site, page)
