"""Deleting a site: `DELETE /api/sites/{id}` removes it with everything stored about it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import httpx
from sqlalchemy import func, insert, select

from sightline.database import open_database
from sightline.database.schema import events, recordings, surveys
from tests.conftest import StartServer
from tests.reports.helpers import Event, insert_events
from tests.support.http import TLS
from tests.support.server import LiveServer, create_owner


def _create(owner: httpx.Client, name: str = "Shop") -> dict[str, object]:
    domain = f"d{uuid.uuid4().hex[:12]}.example.com"
    response = owner.post("/api/sites", json={"name": name, "domain": domain})
    assert response.status_code == 201, response.text
    site: dict[str, object] = response.json()
    return site


def _count(server: LiveServer, table: object, site_id: int) -> int:
    assert server.database_url is not None
    db = open_database(server.database_url, migrate=False)
    try:
        with db.read() as conn:
            return int(conn.execute(select(func.count()).where(table.c.site_id == site_id)).scalar_one())  # type: ignore[attr-defined]
    finally:
        db.dispose()


def _seed(server: LiveServer, site_id: int) -> None:
    assert server.database_url is not None
    db = open_database(server.database_url, migrate=False)
    now = datetime.now(UTC)
    try:
        insert_events(
            db,
            [
                Event(
                    site_id,
                    now,
                    "v1",
                    "s1",
                    "pageview",
                    "/",
                    None,
                    None,
                    None,
                    None,
                    "Chrome",
                    "Linux",
                    "desktop",
                )
            ],
        )
        with db.begin() as conn:
            conn.execute(
                insert(recordings).values(
                    id=f"rec{uuid.uuid4().hex}",
                    site_id=site_id,
                    session_id="s1",
                    visitor_id="v1",
                    started_at=now,
                    updated_at=now,
                    pages=1,
                    chunks=0,
                    size_bytes=0,
                    has_snapshot=True,
                )
            )
    finally:
        db.dispose()


def test_a_deleted_site_is_gone_with_its_events_recordings_and_surveys(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    site = _create(owner)
    site_id = int(str(site["id"]))
    _seed(console_server, site_id)
    survey = owner.post(
        "/api/feedback/surveys",
        json={
            "site_id": site_id,
            "name": "Was this useful?",
            "questions": [{"type": "rating", "title": "Rate us", "required": True, "scale": "1-5"}],
            "targeting": {"include": [], "exclude": []},
        },
    )
    assert survey.status_code == 201, survey.text
    assert _count(console_server, events, site_id) == 1
    assert _count(console_server, recordings, site_id) == 1

    response = owner.delete(f"/api/sites/{site_id}")
    assert response.status_code == 204
    assert response.content == b""
    assert site_id not in [s["id"] for s in owner.get("/api/sites").json()["sites"]]
    assert owner.patch(f"/api/sites/{site_id}", json={"name": "Back"}).status_code == 404
    assert owner.get(f"/api/sites/{site_id}/recordings").status_code == 404
    assert owner.get(f"/api/feedback/surveys/{survey.json()['id']}").status_code == 404
    assert owner.delete(f"/api/sites/{site_id}").json()["error"]["code"] == "not_found"
    for table in (events, recordings, surveys):
        assert _count(console_server, table, site_id) == 0


def test_a_deleted_sites_key_no_longer_accepts_events(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    site = _create(owner)
    origin = f"https://{site['domain']}"
    visitor = {"Origin": origin, "Content-Type": "text/plain;charset=UTF-8"}
    assert owner.delete(f"/api/sites/{site['id']}").status_code == 204
    with httpx.Client(verify=TLS, base_url=console_server.base_url, timeout=30) as client:
        config = client.get("/i/config", params={"key": str(site["key"])}, headers={"Origin": origin})
        assert config.status_code in (403, 404)
        sent = client.post(
            "/i/events",
            content=b'{"key": "%s", "batch_id": "b1", "events": []}' % str(site["key"]).encode(),
            headers=visitor,
        )
        assert sent.status_code in (403, 404, 422)


def test_a_new_site_never_gets_the_id_of_a_deleted_one(owner: httpx.Client) -> None:
    last = _create(owner)
    assert owner.delete(f"/api/sites/{last['id']}").status_code == 204
    following = _create(owner)
    assert int(str(following["id"])) > int(str(last["id"]))


def test_another_owner_cannot_delete_a_site(start_server: StartServer) -> None:
    server = start_server()
    create_owner(server, "a@example.com", "password-of-a-1")
    create_owner(server, "b@example.com", "password-of-b-1")
    with server.client() as a, server.client() as b:
        a.post("/api/login", json={"email": "a@example.com", "password": "password-of-a-1"})
        b.post("/api/login", json={"email": "b@example.com", "password": "password-of-b-1"})
        site = a.post("/api/sites", json={"name": "A", "domain": "a.example.com"}).json()
        response = b.delete(f"/api/sites/{site['id']}")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
        assert [s["id"] for s in a.get("/api/sites").json()["sites"]] == [site["id"]]


def test_deleting_needs_the_console_origin(owner: httpx.Client) -> None:
    site = _create(owner)
    response = owner.delete(f"/api/sites/{site['id']}", headers={"Origin": "https://evil.example"})
    assert response.status_code == 403
    assert owner.get("/api/sites").json()["sites"][-1]["id"] == site["id"]
