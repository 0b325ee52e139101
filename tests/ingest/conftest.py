"""Fixtures of the ingest tests: a live server per engine serving a test SDK directory, and sites."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sightline.database import Database, open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, served, sign_in
from tests.ingest.helpers import SCRIPT_TEXT, Site, Visitor
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer, create_owner

_ports = itertools.count(20000)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def ingest_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """One server per module and engine (shared by the modules listed in ``tests.support.sharing``);
    its SDK directory holds a known analytics.js."""

    def start() -> LiveServer:
        directory = tmp_path_factory.mktemp(f"ingest-{request.param}")
        sdk = directory / "sdk"
        sdk.mkdir()
        (sdk / "analytics.js").write_text(SCRIPT_TEXT, "utf-8")
        (sdk / "analytics-recording.js").write_text("/* recording */\n" * 50, "utf-8")
        if request.param == "postgresql":
            pg: PostgresServer = request.getfixturevalue("postgres")
            url = pg.create_database()
        else:
            url = f"sqlite:///{directory / 'sightline.db'}"
        env = {"SIGHTLINE_SDK_DIR": str(sdk), "SIGHTLINE_INGEST_QUEUE_EVENTS": "200"}
        server = LiveServer(directory / "data", url, env=env)
        server.start()
        create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
        return server

    yield from served(request, f"ingest-{request.param}", start)


@pytest.fixture(scope="module")
def ingest_owner(ingest_server: LiveServer) -> Iterator[httpx.Client]:
    client = sign_in(ingest_server)
    yield client
    client.close()


@pytest.fixture(scope="module")
def ingest_db(ingest_server: LiveServer) -> Iterator[Database]:
    assert ingest_server.database_url is not None
    database = open_database(ingest_server.database_url, migrate=False)
    yield database
    database.dispose()


@pytest.fixture
def site(ingest_owner: httpx.Client) -> Site:
    """A new site on its own development domain (localhost:PORT)."""
    return Site.create(ingest_owner, f"localhost:{next(_ports)}")


@pytest.fixture
def visitor(ingest_server: LiveServer, site: Site) -> Iterator[Visitor]:
    """A desktop browser on the site's own origin."""
    with Visitor(ingest_server.base_url, site) as browser:
        yield browser


def sdk_dir(server: LiveServer) -> Path:
    return Path(server.extra_env["SIGHTLINE_SDK_DIR"])
