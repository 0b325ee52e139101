"""Fixtures of the browser SDK tests: one Sightline server per database engine for the whole package,
the test process's headless Chromium, a customer shop on its own origin per test, a site for that shop,
and a view of the stored events."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page

from sightline.database import Database, open_database
from tests.conftest import BACKENDS, OWNER_EMAIL, OWNER_PASSWORD, sign_in
from tests.sdk.helpers import Site, Store, Stored
from tests.support.fixtures import browser, context, page, shop
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer, create_owner
from tests.support.shop import Shop

__all__ = ["browser", "context", "page", "shop"]


@pytest.fixture(scope="package", params=BACKENDS)
def sdk_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """One server per engine for every SDK module (each test uses its own site, shop and browser context)."""
    directory = tmp_path_factory.mktemp(f"sdk-{request.param}")
    if request.param == "postgresql":
        postgres: PostgresServer = request.getfixturevalue("postgres")
        url = postgres.create_database()
    else:
        url = f"sqlite:///{directory / 'sightline.db'}"
    server = LiveServer(directory / "data", url)
    server.start()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    yield server
    server.stop()


@pytest.fixture(scope="package")
def store(sdk_server: LiveServer) -> Iterator[Store]:
    assert sdk_server.database_url is not None
    database: Database = open_database(sdk_server.database_url)
    yield Store(database)
    database.dispose()


@pytest.fixture
def site(owner_client: httpx.Client, shop: Shop, sdk_server: LiveServer) -> Site:
    """A site whose domain is the shop's origin; the shop page carries its snippet (SDK starts itself)."""
    response = owner_client.post("/api/sites", json={"name": "Shop", "domain": shop.domain})
    assert response.status_code == 201, response.text
    body = response.json()
    created = Site(id=body["id"], key=body["key"], base_url=sdk_server.base_url, owner=owner_client)
    shop.use(created.base_url, created.key)
    return created


@pytest.fixture(scope="package")
def owner_client(sdk_server: LiveServer) -> Iterator[httpx.Client]:
    """The signed-in owner (signing in once: it costs a password hash)."""
    client = sign_in(sdk_server)
    yield client
    client.close()


@pytest.fixture
def stored(store: Store, site: Site, page: Page) -> Stored:
    return Stored(store, site, page)
