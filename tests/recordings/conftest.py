"""Fixtures of the recording tests: a live server (SQLite) with an owner, headless Chromium, a site."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, sign_in
from tests.recordings.helpers import DESKTOP_CHROME, RecordingSite, recording_site
from tests.recordings.pages import SitePages
from tests.support.server import LiveServer, create_owner

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "src" / "sightline" / "web" / "static"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"]


def _newest(directory: Path) -> float:
    files = [p for p in directory.rglob("*") if p.is_file() and "node_modules" not in p.parts]
    return max(p.stat().st_mtime for p in files)


def build(package: str, output: Path) -> None:
    """``npm run build`` in ``package`` when its output is missing or older than a source."""
    source = ROOT / package
    if output.exists() and output.stat().st_mtime >= _newest(source / "src"):
        return
    if not (source / "node_modules").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=source, check=True)
    subprocess.run(["npm", "run", "--silent", "build"], cwd=source, check=True)


@pytest.fixture(scope="session")
def built() -> None:
    build("sdk", STATIC / "sdk" / "analytics-recording.js")
    build("ui", STATIC / "console" / "app.js")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server per module (SQLite), with an owner; recorded chunks land in its data dir.

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
    client = sign_in(server)
    yield client
    client.close()


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="module")
def browser(playwright: Playwright, built: None) -> Iterator[Browser]:
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()


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
def pages() -> Iterator[SitePages]:
    site_pages = SitePages()
    yield site_pages
    site_pages.close()


@pytest.fixture
def site(owner_client: httpx.Client, pages: SitePages, server: LiveServer) -> RecordingSite:
    """A site for the pages' origin that records every visit; its snippet is on every page."""
    created = recording_site(owner_client, pages.domain)
    pages.use(server.base_url, created.key)
    return created
