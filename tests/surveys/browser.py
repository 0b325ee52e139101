"""Browser fixtures of the widget tests: headless Chromium, a customer shop on its own loopback
origin (every path serves one page carrying the snippet), and that shop's site on the live server.

The shop, the page watch and the page helpers are those of the SDK tests (tests/support, tests/sdk)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import sign_in
from tests.sdk.helpers import Site, open_page, wait_until
from tests.support.browser import DESKTOP_CHROME
from tests.support.fixtures import browser, context, page, shop
from tests.support.server import LiveServer
from tests.support.shop import Shop

__all__ = ["DESKTOP_CHROME", "Shop", "Site", "browser", "context", "open_page", "page", "shop", "wait_until"]


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
