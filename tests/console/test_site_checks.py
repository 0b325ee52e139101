"""A failed connection check of a site whose events keep arriving leaves it connected."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import update

from sightline.database import open_database
from sightline.database.schema import sites
from sightline.database.types import utcnow
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer
from tests.support.server import LiveServer, create_owner


def _last_event(server: LiveServer, site_id: int, ago: timedelta) -> None:
    assert server.database_url is not None
    db = open_database(server.database_url, migrate=False)
    with db.begin() as conn:
        conn.execute(
            update(sites)
            .where(sites.c.id == site_id)
            .values(last_event_at=utcnow() - ago, first_event_at=utcnow() - ago)
        )
    db.dispose()


def test_a_failed_check_keeps_a_working_site_connected(start_server: StartServer, tmp_path: Path) -> None:
    # Private addresses refused (the default): a local site's check fails.
    server = start_server(database_url=f"sqlite:///{tmp_path / 'checks.db'}")
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    with server.client() as owner:
        owner.post("/api/login", json={"email": OWNER_EMAIL, "password": OWNER_PASSWORD})
        working = owner.post("/api/sites", json={"name": "Local", "domain": "localhost:8732"}).json()
        idle = owner.post("/api/sites", json={"name": "Idle", "domain": "127.0.0.1:8733"}).json()
        _last_event(server, working["id"], timedelta(minutes=3))
        _last_event(server, idle["id"], timedelta(days=3))
        headers = {"Content-Type": "application/json"}
        checked = owner.post(f"/api/sites/{working['id']}/retry", headers=headers).json()
        assert checked["connection"]["state"] == "connected"
        assert checked["connection"]["last_check_error"] == "blocked_address"
        stale = owner.post(f"/api/sites/{idle['id']}/retry", headers=headers).json()
        assert stale["connection"]["state"] == "error"
        assert stale["connection"]["last_check_error"] == "blocked_address"


def test_the_state_ages_once_a_working_site_with_a_failed_check_falls_silent(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server(database_url=f"sqlite:///{tmp_path / 'ageing.db'}")
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    with server.client() as owner:
        owner.post("/api/login", json={"email": OWNER_EMAIL, "password": OWNER_PASSWORD})
        site = owner.post("/api/sites", json={"name": "Local", "domain": "localhost:8734"}).json()
        _last_event(server, site["id"], timedelta(hours=23))
        headers = {"Content-Type": "application/json"}
        checked = owner.post(f"/api/sites/{site['id']}/retry", headers=headers).json()
        assert checked["connection"]["state"] == "connected"
        # A day and more later, with no event since the failed check, the check's verdict stands.
        _last_event(server, site["id"], timedelta(hours=25))
        _checked(server, site["id"], timedelta(hours=23))
        listed = {s["id"]: s for s in owner.get("/api/sites").json()["sites"]}
        assert listed[site["id"]]["connection"]["state"] == "error"
        # An event after the failed check makes it connected again, as accepted traffic always does.
        _last_event(server, site["id"], timedelta(minutes=1))
        listed = {s["id"]: s for s in owner.get("/api/sites").json()["sites"]}
        assert listed[site["id"]]["connection"]["state"] == "connected"
        assert listed[site["id"]]["connection"]["last_check_error"] == "blocked_address"


def _checked(server: LiveServer, site_id: int, ago: timedelta) -> None:
    assert server.database_url is not None
    db = open_database(server.database_url, migrate=False)
    with db.begin() as conn:
        conn.execute(update(sites).where(sites.c.id == site_id).values(last_check_at=utcnow() - ago))
    db.dispose()
