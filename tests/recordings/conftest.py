"""Fixtures of the recording tests: a live server (SQLite) with an owner, headless Chromium, a site."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, owner_of
from tests.recordings.helpers import RecordingSite, recording_site
from tests.recordings.pages import recorded_shop
from tests.support.browser import DESKTOP_CHROME, ensure_built, kept_chromium
from tests.support.server import LiveServer, create_owner
from tests.support.shop import Shop


@pytest.fixture(scope="session")
def built() -> None:
    ensure_built("sdk")
    ensure_built("ui")


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server (SQLite) for the package's browser modules, with an owner; recorded chunks land in
    its data dir. Each test records on a site and shop of its own (a fresh loopback port) and changes
    only that site, so the modules share it as the SDK modules share theirs: they go to xdist as one
    unit (``PACKAGE_UNITS`` in tests/support/sharing.py), and pytest keeps the server while the next
    test is of this package.

    It accepts headless browsers: the tests' pages send a desktop Chrome user agent, but Chromium
    sends the beacons of a page being left with its own headless one.
    """
    directory = tmp_path_factory.mktemp("recording-server")
    env = {"SIGHTLINE_ALLOW_PRIVATE_ADDRESSES": "true", "SIGHTLINE_INGEST_ACCEPT_HEADLESS": "true"}
    live = LiveServer(directory / "data", None, env=env)
    live.start()
    create_owner(live, OWNER_EMAIL, OWNER_PASSWORD)
    yield live
    live.stop()


@pytest.fixture(scope="module")
def owner_client(server: LiveServer) -> Iterator[httpx.Client]:
    yield from owner_of(server)


@pytest.fixture(scope="module")
def browser(built: None) -> Browser:
    return kept_chromium()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(user_agent=DESKTOP_CHROME, viewport={"width": 1000, "height": 700})
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    """A tab; the test fails if the page had errors (the SDK must never break a site)."""
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    assert errors == [], f"page errors: {errors}"


@pytest.fixture
def pages() -> Iterator[Shop]:
    site_pages = recorded_shop()
    yield site_pages
    site_pages.close()


@pytest.fixture
def site(owner_client: httpx.Client, pages: Shop, server: LiveServer) -> RecordingSite:
    """A site for the pages' origin that records every visit; its snippet is on every page."""
    created = recording_site(owner_client, pages.domain)
    pages.use(server.base_url, created.key)
    return created
