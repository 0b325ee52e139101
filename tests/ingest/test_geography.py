"""Geography end to end: the place of each event from the client address, which is never kept.

A real server on each engine, behind a "proxy" on loopback (``--trusted-proxies 127.0.0.1``) with
an operator's city database, and another that trusts no proxy.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sightline.database import Database, open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, owner_of, sign_in
from tests.ingest.helpers import Site, Visitor, batch, event, stored
from tests.support.geo import LONDON, PARIS, city_database
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer, create_owner

_ports = itertools.count(21300)
SECRET_ADDRESS = "81.2.69.160"  # == LONDON: grepped for on disk and in the logs


def _server(request: pytest.FixtureRequest, directory: Path, engine: str, env: dict[str, str]) -> LiveServer:
    if engine == "postgresql":
        pg: PostgresServer = request.getfixturevalue("postgres")
        url = pg.create_database()
    else:
        url = f"sqlite:///{directory / 'data' / 'sightline.db'}"
        (directory / "data").mkdir()
    server = LiveServer(directory / "data", url, env={"SIGHTLINE_LOG_LEVEL": "debug", **env})
    server.start()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    return server


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def proxied(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp(f"geo-{request.param}")
    database = city_database(directory / "city.mmdb")
    env = {"SIGHTLINE_TRUSTED_PROXIES": "127.0.0.1", "SIGHTLINE_GEOIP_DATABASE": str(database)}
    server = _server(request, directory, request.param, env)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def proxied_db(proxied: LiveServer) -> Iterator[Database]:
    assert proxied.database_url is not None
    database = open_database(proxied.database_url, migrate=False)
    yield database
    database.dispose()


@pytest.fixture(scope="module")
def owner(proxied: LiveServer) -> Iterator[httpx.Client]:
    yield from owner_of(proxied)


def _site(owner: httpx.Client) -> Site:
    return Site.create(owner, f"localhost:{next(_ports)}")


def _places(db: Database, site: Site) -> list[tuple[str | None, str | None, str | None]]:
    return [(row.country, row.region, row.city) for row in stored(db, site)]


def test_events_through_a_trusted_proxy_land_in_the_country_region_and_city_of_the_client(
    proxied: LiveServer, proxied_db: Database, owner: httpx.Client
) -> None:
    site = _site(owner)
    with Visitor(proxied.base_url, site) as visitor:
        # The right-most address that is not a trusted proxy is the client.
        for forwarded in (f"203.0.113.50, {LONDON}", f"{PARIS}, 127.0.0.1", "8.8.8.8"):
            response = visitor.send(batch(site, event(), event("signup")), **{"X-Forwarded-For": forwarded})
            assert response.status_code == 202, response.text
    assert _places(proxied_db, site) == [
        ("GB", "England", "London"),
        ("GB", "England", "London"),
        ("FR", "Île-de-France", "Paris"),
        ("FR", "Île-de-France", "Paris"),
        ("US", None, None),
        ("US", None, None),
    ]


def test_a_visitors_own_forwarded_header_is_ignored_behind_a_proxy_that_sets_x_forwarded_for(
    proxied: LiveServer, proxied_db: Database, owner: httpx.Client
) -> None:
    site = _site(owner)
    with Visitor(proxied.base_url, site) as visitor:
        headers = {"X-Forwarded-For": LONDON, "Forwarded": f'for="[{PARIS}]";proto=https'}
        assert visitor.send(batch(site), **headers).status_code == 202
    assert _places(proxied_db, site) == [("GB", "England", "London")]


def test_an_unreadable_hop_is_an_unknown_client_neither_placed_nor_excluded_as_the_proxy(
    proxied: LiveServer, proxied_db: Database, owner: httpx.Client
) -> None:
    site = _site(owner)
    site.change(excluded_addresses=["127.0.0.0/8"])  # the proxy's own address
    with Visitor(proxied.base_url, site) as visitor:
        for forwarded in (f"{LONDON}, unknown", "_hidden", f"{PARIS}, garbage"):
            assert visitor.send(batch(site), **{"X-Forwarded-For": forwarded}).status_code == 202
    assert _places(proxied_db, site) == [(None, None, None)] * 3


def test_a_private_client_address_has_no_place(
    proxied: LiveServer, proxied_db: Database, owner: httpx.Client
) -> None:
    site = _site(owner)
    with Visitor(proxied.base_url, site) as visitor:
        assert visitor.send(batch(site), **{"X-Forwarded-For": "10.0.0.8"}).status_code == 202
    assert _places(proxied_db, site) == [(None, None, None)]


def test_an_untrusted_peers_forwarding_headers_are_ignored(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    server = _server(request, tmp_path, "sqlite", {})
    try:
        client = sign_in(server)
        try:
            site = _site(client)
        finally:
            client.close()
        with Visitor(server.base_url, site) as visitor:
            response = visitor.send(batch(site), **{"X-Forwarded-For": LONDON, "Forwarded": f"for={LONDON}"})
            assert response.status_code == 202
        assert server.database_url is not None
        database = open_database(server.database_url, migrate=False)
        try:
            # The peer (loopback) is the client: no country, and nothing from the header.
            assert _places(database, site) == [(None, None, None)]
        finally:
            database.dispose()
    finally:
        server.stop()
    assert not _files_containing(server.data_dir, LONDON)


def test_the_client_address_appears_nowhere_in_the_data_directory_or_the_logs(
    proxied: LiveServer, proxied_db: Database, owner: httpx.Client
) -> None:
    site = _site(owner)
    with Visitor(proxied.base_url, site) as visitor:
        for _ in range(3):
            response = visitor.send(batch(site, event()), **{"X-Forwarded-For": SECRET_ADDRESS})
            assert response.status_code == 202
        # A refused batch is logged at most by its reason, never by its sender.
        refused = visitor.send(b"{not json", **{"X-Forwarded-For": SECRET_ADDRESS})
        assert refused.status_code == 400
    assert _places(proxied_db, site)[0] == ("GB", "England", "London")
    assert SECRET_ADDRESS not in owner.get("/api/health").text
    assert not _files_containing(proxied.data_dir, SECRET_ADDRESS)
    assert SECRET_ADDRESS not in "".join(proxied.output)
    with proxied_db.read() as conn:  # PostgreSQL keeps its files elsewhere: ask it too
        for table in ("events", "event_batches", "sites"):
            dump = conn.exec_driver_sql(f"SELECT * FROM {table}").fetchall()
            assert SECRET_ADDRESS not in repr(dump)


def _files_containing(directory: Path, text: str) -> list[Path]:
    needle = text.encode()
    return [p for p in directory.rglob("*") if p.is_file() and needle in p.read_bytes()]
