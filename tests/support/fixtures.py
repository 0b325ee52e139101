"""Browser fixtures shared by the SDK and widget tests: the test process's Chromium with the SDK built,
a fresh context browsing as desktop Chrome, a watched tab, and a customer shop on its own origin.

A test package's conftest imports the ones it uses.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from tests.support.browser import DESKTOP_CHROME, ensure_built, kept_chromium, watched
from tests.support.shop import Shop


@pytest.fixture(scope="module")
def browser() -> Browser:
    ensure_built("sdk")
    return kept_chromium()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(user_agent=DESKTOP_CHROME)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    """A tab; the test fails if the page reported errors or unhandled rejections."""
    with watched(context.new_page()) as tab:
        yield tab


@pytest.fixture
def shop() -> Iterator[Shop]:
    server = Shop()
    yield server
    server.close()
