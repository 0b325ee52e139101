"""Several nodes, one store: three ``sightline serve`` processes on one PostgreSQL and one
ClickHouse over HTTP (the stand-in, or the server ``SIGHTLINE_TEST_CLICKHOUSE_URL`` names).
Exactly one feeds; when it dies (SIGKILL, with its store process) in the middle of a backlog,
another takes over within seconds; no event is written twice or lost; every node's reports agree."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from sightline.database import open_database
from sightline.store.engines import ClickHouse
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, sign_in
from tests.ingest.helpers import Site, Visitor, batch, event
from tests.reports import helpers
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer, create_owner

pytestmark = pytest.mark.postgres
TAKE_OVER = 15.0  # seconds: a standby asks for the lease every 2 s


def _store(owner: httpx.Client) -> dict[str, Any]:
    store: dict[str, Any] = owner.get("/api/health").json()["services"]["store"]
    return store


def _until(ask: Callable[[], Any], timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = ask()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("the nodes never reached the state asked for")


def test_of_three_nodes_one_feeds_another_takes_over_when_it_dies_and_their_reports_agree(
    tmp_path: Path, postgres: PostgresServer, clickhouse: Any
) -> None:
    database = postgres.create_database()
    events_url = clickhouse.url(f"nodes_{uuid.uuid4().hex[:8]}")
    env = {"SIGHTLINE_EVENTS_URL": events_url}
    nodes = [LiveServer(tmp_path / "node-a", database, env=env).start()]
    try:
        create_owner(nodes[0], OWNER_EMAIL, OWNER_PASSWORD)
        for n in "bc":  # each in the list before it starts: stopped whatever happens
            nodes.append(LiveServer(tmp_path / f"node-{n}", database, env=env))
            nodes[-1].start()
        owners = [sign_in(node) for node in nodes]
        roles = _until(
            lambda: sorted(s["role"] for s in map(_store, owners)) == ["feeder", "standby", "standby"]
        )
        assert roles
        assert all(_store(o)["status"] == "ok" for o in owners)  # a shared store: standing by is right
        feeding = next(i for i, o in enumerate(owners) if _store(o)["role"] == "feeder")
        site = Site.create(owners[0], "localhost:38301")

        # A backlog straight into the log, then live events to every node; the feeder dies halfway.
        db = open_database(database, migrate=False)
        backlog = helpers.generate(site.id, datetime.now(UTC), visits=16_000, days=1, seed=4)
        helpers.insert_events(db, backlog)
        feeder = _store(owners[feeding])
        _until(lambda: 0 < _store(owners[feeding])["fed_events"] < len(backlog) or None, timeout=60)
        nodes[feeding].kill()
        os.kill(feeder["pid"], signal.SIGKILL)  # the node's store process dies with it
        died = time.monotonic()
        alive = [o for i, o in enumerate(owners) if i != feeding]
        _until(lambda: any(_store(o)["role"] == "feeder" for o in alive), timeout=TAKE_OVER + 30)
        took = time.monotonic() - died
        assert took < TAKE_OVER, f"another node fed only after {took:.1f} s"
        print(f"another node fed {took:.1f} s after the feeder was killed")
        assert sorted(_store(o)["role"] for o in alive) == ["feeder", "standby"]

        acknowledged = 0
        live = [n for i, n in enumerate(nodes) if i != feeding]
        with Visitor(live[0].base_url, site) as one, Visitor(live[1].base_url, site) as other:
            for i in range(30):
                sent = (one if i % 2 else other).send(batch(site, event(session_id=f"live-{i}")))
                assert sent.status_code == 202, sent.text
                acknowledged += 1
        for owner in alive:
            helpers.wait_caught_up(owner)

        store = ClickHouse(events_url)
        try:
            total, distinct = store.query("SELECT count(), uniqExact(id) FROM events", {})[0]
            assert (total, distinct) == (len(backlog) + acknowledged,) * 2  # none lost, none twice
            visits = store.query("SELECT count(), uniqExact(session) FROM visits FINAL", {})[0]
            assert visits[0] == visits[1]
        finally:
            store.close()
        asked = [("summary", {"range": "today"}), ("timeseries", {"range": "7d"})] + [
            ("breakdown", {"range": "7d", "dimension": d}) for d in ("pages", "sources", "browsers")
        ]
        for name, params in asked:
            answers = [o.get(f"/api/sites/{site.id}/reports/{name}", params=params) for o in alive]
            assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
            assert answers[0].json() == answers[1].json(), name
        db.dispose()
        for owner in owners:
            owner.close()
    finally:
        for node in nodes:
            node.stop()
