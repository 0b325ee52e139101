"""The store as users run it: a feeder killed with SIGKILL at any moment loses and doubles
nothing; the server starts its store process again when it dies; ``sightline rebuild-store``."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from sightline.database import open_database
from sightline.store.engines import Embedded, open_engine
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.ingest.helpers import Site, Visitor, batch, event
from tests.reports import helpers
from tests.store.test_feed import NOW, _expected_visits, _visits
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer, create_owner

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("engine_name", ["duckdb", "clickhouse"])
def test_a_feeder_killed_at_any_moment_leaves_every_event_in_the_store_exactly_once(
    tmp_path: Path, engine_name: str
) -> None:
    url = f"sqlite:///{tmp_path / 'log.db'}"
    db = open_database(url)
    _, site = helpers.create_site(db, "kill.example.com")
    rows = helpers.generate(site, NOW, visits=4000, days=3, seed=11)
    rows.sort(key=lambda e: e.time)
    helpers.insert_events(db, rows)
    events_url = f"chdb://{tmp_path / 'clickhouse'}" if engine_name == "clickhouse" else ""
    command = [sys.executable, "-m", "tests.store.feed_forever", url, events_url, str(tmp_path / "data")]
    rng = random.Random(5)
    for _ in range(5):
        feeder = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert feeder.stdout is not None
        assert feeder.stdout.readline().strip() == "feeding"
        time.sleep(rng.uniform(0.05, 0.8))
        os.kill(feeder.pid, signal.SIGKILL)
        feeder.wait(timeout=30)
        feeder.stdout.close()
    subprocess.run([*command, "--until-caught-up"], cwd=ROOT, check=True, timeout=300, capture_output=True)
    engine = open_engine(events_url or None, tmp_path / "data", 256)
    try:
        assert engine.query("SELECT count(*), count(DISTINCT id) FROM events", {})[0] == (
            len(rows),
            len(rows),
        )
        assert _visits(engine, site) == _expected_visits(site, rows)
    finally:
        engine.close()
        db.dispose()


def test_the_server_starts_its_store_process_again_when_it_dies(start_server: StartServer) -> None:
    server = start_server()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    site = owner.post("/api/sites", json={"name": "Shop", "domain": "shop.example.com"}).json()["id"]
    helpers.wait_caught_up(owner)
    first = owner.get("/api/health").json()["services"]["store"]
    assert first["engine"] == "duckdb"
    assert first["restarts"] == 0
    os.kill(first["pid"], signal.SIGKILL)
    deadline = time.monotonic() + 60
    store = first
    while time.monotonic() < deadline:
        store = owner.get("/api/health").json()["services"]["store"]
        if store["restarts"] == 1 and store["status"] == "ok":
            break
        time.sleep(0.2)
    assert store["restarts"] == 1, store
    assert store["pid"] not in (None, first["pid"])
    summary = owner.get(f"/api/sites/{site}/reports/summary")
    assert summary.status_code == 200, summary.text
    owner.close()


def test_rebuild_store_feeds_the_whole_log_again(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = open_database(f"sqlite:///{data / 'sightline.db'}")
    _, site = helpers.create_site(db, "rebuild.example.com")
    rows = helpers.generate(site, NOW, visits=300, days=2, seed=2)
    helpers.insert_events(db, rows)
    db.dispose()
    command = [sys.executable, "-m", "sightline.cli", "rebuild-store", "--data-dir", str(data)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert f"holds the log's {len(rows)} events" in done.stdout
    store = Embedded(data, 256)
    assert store.query("SELECT count(*) FROM events", {})[0][0] == len(rows)
    store.close()
    again = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0  # rebuilding twice gives the same store, not twice the events
    store = Embedded(data, 256)
    assert store.query("SELECT count(*) FROM events", {})[0][0] == len(rows)
    store.close()


def test_rebuild_store_refuses_while_a_server_holds_the_store(start_server: StartServer) -> None:
    server = start_server()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    helpers.wait_caught_up(owner)
    command = [sys.executable, "-m", "sightline.cli", "rebuild-store", "--data-dir", str(server.data_dir)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1
    assert "in use by a running server" in done.stderr
    owner.close()


@pytest.mark.postgres
def test_of_two_nodes_on_one_postgresql_one_feeds_and_the_other_takes_over_when_it_is_killed(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.create_database()
    first = LiveServer(tmp_path / "node-a", url).start()
    second: LiveServer | None = None
    try:
        create_owner(first, OWNER_EMAIL, OWNER_PASSWORD)
        on_first = sign_in(first)
        helpers.wait_caught_up(on_first)
        assert on_first.get("/api/health").json()["services"]["store"]["role"] == "feeder"
        second = LiveServer(tmp_path / "node-b", url).start()
        on_second = sign_in(second)
        store = _store_when(on_second, lambda s: s["role"] == "standby" and s["problem"] is not None)
        assert store["status"] == "degraded"
        assert "another node feeds" in store["problem"]
        assert "--events-url clickhouse://" in store["fix"]

        # Events spread over both nodes, then the feeding node is killed halfway.
        site = Site.create(on_first, "localhost:38300")
        acknowledged = 0
        with Visitor(first.base_url, site) as to_first, Visitor(second.base_url, site) as to_second:
            for i in range(40):
                if i == 20:
                    first.kill()
                node = to_second if i % 2 or i >= 20 else to_first
                response = node.send(batch(site, event(visitor_id=f"v-{i:020d}", session_id=f"s-{i:020d}")))
                assert response.status_code == 202, response.text
                acknowledged += 1

        taken = _store_when(on_second, lambda s: s["role"] == "feeder" and s["problem"] is None)
        assert taken["status"] == "ok", taken
        helpers.wait_caught_up(on_second)
        summary = on_second.get(f"/api/sites/{site.id}/reports/summary", params={"range": "today"})
        assert summary.status_code == 200, summary.text
        assert summary.json()["current"]["pageviews"] == acknowledged  # none lost, none twice
        on_first.close()
        on_second.close()
    finally:
        first.stop()
        if second is not None:
            second.stop()


def _store_when(owner: httpx.Client, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    store: dict[str, Any] = {}
    while time.monotonic() < deadline:
        store = owner.get("/api/health").json()["services"]["store"]
        if wanted(store):
            return store
        time.sleep(0.2)
    raise AssertionError(f"the store never reached the state: {store}")


def test_a_server_stopped_and_started_again_finds_the_overviews_days_its_store_kept_in_its_file(
    start_server: StartServer,
) -> None:
    server = start_server()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    site = owner.post("/api/sites", json={"name": "Shop", "domain": "shop.example.com"}).json()["id"]
    db = open_database(f"sqlite:///{server.data_dir / 'sightline.db'}", migrate=False)
    helpers.insert_events(db, helpers.generate(site, NOW, visits=300, days=10, seed=3))
    db.dispose()
    helpers.wait_caught_up(owner)
    before = owner.get("/api/overview", params={"range": "7d"}).json()
    owner.close()
    server.stop()  # SIGTERM: the server stops its store process, which closes the store cleanly
    store = Embedded(server.data_dir, 256)
    try:
        kept = store.query("SELECT count(DISTINCT low) FROM kept_days WHERE site_id = $s", {"s": site})
    finally:
        store.close()
    assert kept[0][0] >= 12  # the whole ended days of 7 days and of the 7 before them
    server.start()
    owner = sign_in(server)
    assert owner.get("/api/overview", params={"range": "7d"}).json() == before
    owner.close()
