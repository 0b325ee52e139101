"""A database that cannot be reached or written: 503 with Retry-After, never a 500, and health
says "down" in plain words. With a real PostgreSQL stopped and a real SQLite write lock."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer, create_owner


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL of this test alone: it is stopped in the middle of the test."""
    server = PostgresServer()
    server.start()
    yield server
    server.stop()


def _unavailable(response: httpx.Response, what: str) -> None:
    assert response.status_code == 503, f"{what}: {response.status_code} {response.text}"
    assert response.json()["error"]["code"] == "database_unavailable", what
    assert int(response.headers["Retry-After"]) > 0, what


def _database(owner: httpx.Client) -> dict[str, object]:
    response = owner.get("/api/health")
    assert response.status_code == 200, response.text
    service: dict[str, object] = response.json()["services"]["database"]
    return service


def _no_traceback(server: LiveServer) -> None:
    output = "".join(server.output)
    lines = output.splitlines()
    heads = [lines[i - 1] for i, line in enumerate(lines) if line.startswith("Traceback") and i]
    assert "Traceback" not in output, "\n".join(heads)


def test_with_postgresql_stopped_the_console_answers_503_and_health_says_the_database_is_down(
    own_postgres: PostgresServer, start_server: StartServer
) -> None:
    server = start_server(own_postgres.create_database())
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    site = owner.post("/api/sites", json={"name": "Shop", "domain": "shop.example"}).json()
    assert _database(owner)["status"] == "ok"

    own_postgres.halt()
    try:
        me = owner.get("/api/me")
        assert me.status_code == 200, me.text  # a session checked lately still counts
        database = _database(owner)
        assert database["status"] == "down"
        assert database["reachable"] is False
        assert database["problem"] == "Sightline cannot connect to the database."
        assert "Start the database server" in str(database["fix"])
        assert owner.get("/api/health").json()["status"] == "down"
        _unavailable(owner.get("/api/sites"), "list sites")
        _unavailable(owner.post("/api/sites", json={"name": "B", "domain": "b.example"}), "create site")
        _unavailable(owner.patch(f"/api/sites/{site['id']}", json={"name": "C"}), "edit site")
        _unavailable(owner.get(f"/api/sites/{site['id']}/reports/summary"), "report")
        with server.client() as stranger:
            _unavailable(stranger.post("/api/login", json={"email": OWNER_EMAIL, "password": "x"}), "login")
            stranger.cookies.set("sightline_session", "never-seen-before")
            _unavailable(stranger.get("/api/me"), "unknown session")
        time.sleep(5.5)  # past the ingest key cache
        config = httpx.get(
            f"{server.base_url}/i/config?key={site['key']}", headers={"Origin": "https://shop.example"}
        )
        _unavailable(config, "ingest config")
    finally:
        own_postgres.launch()
    deadline = time.monotonic() + 20
    while _database(owner)["status"] != "ok" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _database(owner)["status"] == "ok"
    assert owner.get("/api/sites").status_code == 200
    owner.close()
    _no_traceback(server)


def test_while_another_process_holds_the_sqlite_write_lock_writes_answer_503_and_health_shows_it(
    start_server: StartServer,
) -> None:
    server = start_server()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    assert owner.post("/api/sites", json={"name": "A", "domain": "a.example"}).status_code == 201
    locker = sqlite3.connect(server.data_dir / "sightline.db", isolation_level=None, timeout=30)
    locker.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        database = _database(owner)
        assert time.monotonic() - started < 5
        assert database["status"] == "down"
        assert database["writable"] is False
        assert database["reachable"] is True
        assert "locked" in str(database["problem"])
        assert "second Sightline" in str(database["fix"])
        assert owner.get("/api/sites").status_code == 200  # reading still works
        _unavailable(owner.post("/api/sites", json={"name": "B", "domain": "b.example"}), "create site")
        with server.client() as other:
            _unavailable(
                other.post("/api/login", json={"email": OWNER_EMAIL, "password": OWNER_PASSWORD}), "login"
            )
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert owner.post("/api/sites", json={"name": "B", "domain": "b.example"}).status_code == 201
    assert _database(owner)["status"] == "ok"
    owner.close()
    _no_traceback(server)
