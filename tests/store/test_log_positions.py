"""Every event answered 202 reaches the reports within 5 s, whatever was deleted from the log
before it (an erasure of the newest visitor, a site's deletion, the log's trim), on SQLite and
PostgreSQL: the log never gives an id twice; an install whose SQLite log already gave ids again
is repaired by the upgrade; a store damaged by hand is put right by its self-check, which health
names."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import MetaData, Table, delete, func, insert, select

from sightline.database import Database, open_database
from sightline.database.engines import MIGRATIONS
from sightline.database.schema import events, sites, users
from sightline.store.engines import Embedded
from sightline.store.feed import Feeder
from tests.conftest import BACKENDS, OWNER_EMAIL, OWNER_PASSWORD, StartServer, database_url_for, sign_in
from tests.database.release_data import migrate_to
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


@pytest.fixture(scope="module", params=BACKENDS)
def deleting(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, httpx.Client]]:
    """One server per engine for the tests that delete the log's newest events (each sends them on
    sites of its own just before, so they are the newest of the whole log), and its owner."""
    directory = tmp_path_factory.mktemp("deleting")
    server = LiveServer(directory / "data", database_url_for(request, request.param, directory)).start()
    try:
        with _owner(server) as owner:
            yield server, owner
    finally:
        server.stop()


def test_pageviews_sent_after_the_newest_visitor_was_erased_reach_the_dashboard_within_5_s(
    deleting: tuple[LiveServer, httpx.Client],
) -> None:
    server, owner = deleting
    site = Site.create(owner, "erased.example.com")
    send(server, site, "visitor-a", 3)
    send(server, site, "visitor-b", 5)
    shows(owner, site.id, 8, 30)
    erase(owner, site, "visitor-b")
    shows(owner, site.id, 3, 30)
    send(server, site, "visitor-c", 4)
    shows(owner, site.id, 7, WITHIN)


def test_pageviews_sent_after_the_newest_sites_deletion_reach_the_dashboard_within_5_s(
    deleting: tuple[LiveServer, httpx.Client],
) -> None:
    server, owner = deleting
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
    """The quiet site's events are in the log when the server starts: the store process's first
    round feeds them and its first look at the log's retention trims them (a look comes every
    30 s after that, so events logged later would wait for the next)."""
    url = database_url_for(request, backend, tmp_path)
    db = open_database(url, migrate=False)
    try:
        _, site_id = helpers.create_site(db, "quiet.example.com")
        old = datetime.now(UTC) - timedelta(days=3)  # a site quiet for longer than the retention
        helpers.insert_events(
            db, [helpers.pageview(site_id, old + timedelta(minutes=i), "a", "/") for i in range(5)]
        )
        server = start_server(url, env={"SIGHTLINE_EVENT_LOG_RETENTION_DAYS": "1"})
        with _owner(server) as owner:
            _adopt(db, site_id)
            shows(owner, site_id, 5, 30)
            deadline = time.monotonic() + 30
            while _logged(db) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert _logged(db) == 0, "the trim did not empty the log"
            site = Site(site_id, _key(owner, site_id), "quiet.example.com", owner)
            send(server, site, "visitor-c", 4)
            shows(owner, site_id, 9, WITHIN)
    finally:
        db.dispose()


def _adopt(db: Database, site_id: int) -> None:
    """The site made in the database before the server started becomes its owner's."""
    with db.begin() as conn:
        mine = conn.execute(select(users.c.id).where(users.c.email == OWNER_EMAIL)).scalar_one()
        conn.execute(sites.update().where(sites.c.id == site_id).values(owner_id=mine))


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


def _previous_heads() -> tuple[str, ...]:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    script = ScriptDirectory.from_config(cfg)
    before = script.get_revision(NEW).down_revision
    assert isinstance(before, str)

    def descends_from_new(head: str) -> bool:
        return any(rev.revision == NEW for rev in script.iterate_revisions(head, "base"))

    return tuple(before if descends_from_new(head) else head for head in script.get_heads())


def _insert_into_previous_log(db: Database, rows: list[helpers.Event]) -> None:
    """Events written into the log as the previous schema has it (columns added since are left out)."""
    table = Table("events", MetaData(), autoload_with=db.engine)
    with db.begin() as conn:
        conn.execute(insert(table), [{k: v for k, v in e.row().items() if k in table.c} for e in rows])


def test_an_install_whose_log_gave_ids_again_is_repaired_by_the_upgrade(
    tmp_path: Path, start_server: StartServer
) -> None:
    """The broken state made with the previous schema: erase the newest visitor, new events get
    their ids, the store (watermark above them) never feeds them. The upgrade feeds them, and
    the next events get ids past the watermark."""
    url = f"sqlite:///{tmp_path / 'sightline.db'}"
    db = Database(url)
    migrate_to(db, _previous_heads())
    _, site = helpers.create_site(db, "broken.example.com")
    now = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    visit = [helpers.pageview(site, now + timedelta(seconds=i), "visitor-a", f"/a/{i}") for i in range(3)]
    erased = [
        helpers.pageview(site, now + timedelta(seconds=10 + i), "visitor-b", f"/b/{i}") for i in range(5)
    ]
    late = [helpers.pageview(site, now + timedelta(seconds=20 + i), "visitor-c", f"/c/{i}") for i in range(4)]
    _insert_into_previous_log(db, visit + erased)
    data = tmp_path / "data0"  # the first server's data directory (start_server)
    engine = Embedded(data, 256)
    with db.begin() as conn:  # for this feeder, which reads columns added since; dropped again below
        conn.exec_driver_sql("ALTER TABLE events ADD COLUMN language VARCHAR(8)")
    feeder = Feeder(db, engine)
    try:
        assert feeder.catch_up() == 8
        with db.begin() as conn:  # the erasure, in the log and (its task applied) in the store
            conn.execute(delete(events).where(events.c.visitor_id == "visitor-b"))
        engine.execute("DELETE FROM events WHERE id > 3")
        engine.execute("DELETE FROM visits WHERE pageviews = 5")
        _insert_into_previous_log(db, late)
        with db.read() as conn:
            ids = sorted(conn.execute(select(events.c.id)).scalars())
        assert ids == [1, 2, 3, 4, 5, 6, 7], "the previous schema gives the erased ids again"
        assert feeder.step() == 0  # skipped: at or below the watermark (8)
    finally:
        feeder.close()
        engine.close()
    with db.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE events DROP COLUMN language")
    db.dispose()
    server = start_server(url)
    with _owner(server) as owner:
        _adopt(db, site)
        shows(owner, site, 7, 30)
        store = _store(owner)
        assert store["check"]["events_fed"] == 4, store
        assert any(f"site {site}, " in line for line in store["check"]["repaired"]), store
        assert "watermark 8" in (store["check"]["sequence_moved"] or ""), store
        record = Site(site, _key(owner, site), "broken.example.com", owner)
        send(server, record, "visitor-d", 2)
        shows(owner, site, 9, WITHIN)
        with db.read() as conn:
            assert max(conn.execute(select(events.c.id)).scalars()) == 10
        db.dispose()


def _key(owner: httpx.Client, site_id: int) -> str:
    found = next(s for s in owner.get("/api/sites").json()["sites"] if s["id"] == site_id)
    return str(found["key"])


def _store(owner: httpx.Client) -> dict[str, Any]:
    found: dict[str, Any] = owner.get("/api/health").json()["services"]["store"]
    return found


@pytest.mark.parametrize("store", ["duckdb", "chdb"])
def test_a_store_damaged_by_hand_is_repaired_by_its_self_check_at_start_and_health_names_it(
    store: str, tmp_path: Path, start_server: StartServer
) -> None:
    env = {"SIGHTLINE_EVENTS_URL": f"chdb://{tmp_path / 'chdb'}"} if store == "chdb" else {}
    server = start_server(None, env)
    with _owner(server) as owner:
        site = Site.create(owner, "damaged.example.com")
        for visitor in ("visitor-a", "visitor-b", "visitor-c"):
            send(server, site, visitor, 3)
        shows(owner, site.id, 9, 30)
        server.stop()
        damage = "DELETE FROM events WHERE id IN (4, 5, 6)"  # visitor B's events lost
        if store == "chdb":  # in a process of its own: chDB opens one path per process
            code = (
                "import sys; from sightline.store.engines import ClickHouse; "
                "e = ClickHouse(sys.argv[1]); e.execute(sys.argv[2]); e.close()"
            )
            subprocess.run([sys.executable, "-c", code, env["SIGHTLINE_EVENTS_URL"], damage], check=True)
        else:
            damaged = Embedded(server.data_dir, 256)
            try:
                damaged.execute(damage)
            finally:
                damaged.close()
        server.start()
        shows(owner, site.id, 9, 30)
        visitors = owner.get(f"/api/sites/{site.id}/reports/summary", params={"range": "7d"}).json()
        assert visitors["current"]["visits"] == 3
        health = owner.get("/api/health").json()["services"]["store"]
        today = datetime.now(UTC).date().isoformat()
        assert health["check"]["ranges_repaired"] == 1, health
        assert health["check"]["repaired"] == [
            f"site {site.id}, {today}: 3 events the store lacked (or held twice) were fed from the log"
        ]
        assert health["check"]["unrepaired"] == []
        assert health["check"]["last_check"] is not None
        assert health["status"] == "ok"
        metrics = owner.get("/metrics").text
        assert "sightline_store_check_repaired_ranges_total 1.0" in metrics
