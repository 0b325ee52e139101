"""Every event answered 202 reaches the reports within 5 s, whatever was deleted from the log
before it (an erasure of the newest visitor, a site's deletion, the log's trim), on SQLite and
PostgreSQL: the log never gives an id twice."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import delete, func, select

from sightline.storage import Database, open_database
from sightline.storage.schema import events
from tests.conftest import BACKENDS, OWNER_EMAIL, OWNER_PASSWORD, StartServer, database_url_for, sign_in
from tests.ingest.helpers import Site, Visitor, batch, event
from tests.reports import helpers
from tests.support.server import LiveServer, create_owner

WITHIN = 5.0  # seconds from a 202 to the reports
NEW = "0018_ingest"  # the migration that makes SQLite's log positions grow only


@contextmanager
def _owner(server: LiveServer) -> Iterator[httpx.Client]:
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    client = sign_in(server)
    try:
        yield client
    finally:
        client.close()


def pageviews(owner: httpx.Client, site_id: int) -> int:
    response = owner.get(f"/api/sites/{site_id}/reports/summary", params={"range": "7d"})
    assert response.status_code == 200, response.text
    return int(response.json()["current"]["pageviews"])


def shows(owner: httpx.Client, site_id: int, expected: int, within: float) -> None:
    deadline = time.monotonic() + within
    seen = pageviews(owner, site_id)
    while seen != expected and time.monotonic() < deadline:
        time.sleep(0.2)
        seen = pageviews(owner, site_id)
    assert seen == expected, f"the dashboard shows {seen} pageviews {within} s on, not {expected}"


def send(server: LiveServer, site: Site, visitor: str, count: int) -> None:
    now = int(time.time() * 1000)
    sent = [
        event(
            visitor_id=visitor, session_id=f"s-{visitor}", path=f"/{visitor}/{i}", ts=now - 1000 * (count - i)
        )
        for i in range(count)
    ]
    with Visitor(server.base_url, site) as browser:
        response = browser.send(batch(site, *sent))
    assert response.status_code == 202, response.text


def erase(owner: httpx.Client, site: Site, visitor: str) -> None:
    response = owner.delete(f"/api/sites/{site.id}/visitors/{visitor}")
    assert response.status_code == 202, response.text


@pytest.mark.parametrize("backend", BACKENDS)
def test_pageviews_sent_after_the_newest_visitor_was_erased_reach_the_dashboard_within_5_s(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, start_server: StartServer
) -> None:
    server = start_server(database_url_for(request, backend, tmp_path))
    with _owner(server) as owner:
        site = Site.create(owner, "erased.example.com")
        send(server, site, "visitor-a", 3)
        send(server, site, "visitor-b", 5)
        shows(owner, site.id, 8, 30)
        erase(owner, site, "visitor-b")
        shows(owner, site.id, 3, 30)
        send(server, site, "visitor-c", 4)
        shows(owner, site.id, 7, WITHIN)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pageviews_sent_after_the_newest_sites_deletion_reach_the_dashboard_within_5_s(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, start_server: StartServer
) -> None:
    server = start_server(database_url_for(request, backend, tmp_path))
    with _owner(server) as owner:
        kept = Site.create(owner, "kept.example.com")
        gone = Site.create(owner, "gone.example.com")
        send(server, kept, "visitor-a", 3)
        send(server, gone, "visitor-b", 5)
        shows(owner, gone.id, 5, 30)
        assert owner.delete(f"/api/sites/{gone.id}").status_code == 204
        send(server, kept, "visitor-c", 4)
        shows(owner, kept.id, 7, WITHIN)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pageviews_sent_after_the_log_trim_emptied_the_log_reach_the_dashboard_within_5_s(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, start_server: StartServer
) -> None:
    url = database_url_for(request, backend, tmp_path)
    server = start_server(url, env={"SIGHTLINE_EVENT_LOG_RETENTION_DAYS": "1"})
    with _owner(server) as owner:
        site = Site.create(owner, "quiet.example.com")
        db = open_database(url, migrate=False)
        try:
            old = datetime.now(UTC) - timedelta(days=3)  # a site quiet for longer than the retention
            helpers.insert_events(
                db, [helpers.pageview(site.id, old + timedelta(minutes=i), "a", "/") for i in range(5)]
            )
            deadline = time.monotonic() + 90  # the trim looks every 30 s, after the store took them
            while _logged(db) and time.monotonic() < deadline:
                time.sleep(0.5)
            assert _logged(db) == 0, "the trim did not empty the log"
        finally:
            db.dispose()
        send(server, site, "visitor-c", 4)
        shows(owner, site.id, 9, WITHIN)


def _logged(db: Database) -> int:
    with db.read() as conn:
        return int(conn.execute(select(func.count()).select_from(events)).scalar_one())


def test_the_log_never_gives_the_id_of_a_deleted_newest_event_again(db: Database) -> None:
    _, site = helpers.create_site(db, "ids.example.com")
    now = datetime.now(UTC)
    helpers.insert_events(db, [helpers.pageview(site, now, f"v{i}", "/") for i in range(5)])
    with db.begin() as conn:
        conn.execute(delete(events))
    helpers.insert_events(db, [helpers.pageview(site, now, "later", "/")])
    with db.read() as conn:
        assert list(conn.execute(select(events.c.id)).scalars()) == [6]
