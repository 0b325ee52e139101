"""The operator's commands on a store shared by several nodes (PostgreSQL and ClickHouse over
HTTP): ``rebuild-store`` and ``restore`` refuse while a server is live on the same database and
name it; a server does not start while such a command runs; ``chdb://`` is refused outside tests."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sightline.database import open_database
from sightline.database.presence import Presence
from sightline.store.engines import ClickHouse
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, sign_in
from tests.reports import helpers
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer, create_owner

pytestmark = pytest.mark.postgres


def _sightline(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "sightline.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False, env=env)


def test_chdb_is_refused_as_a_store_outside_the_tests(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SIGHTLINE_TEST_CHDB"}
    url = f"sqlite:///{tmp_path / 'sightline.db'}"
    done = _sightline("rebuild-store", "--database-url", url, "--events-url", f"chdb://{tmp_path}", env=env)
    assert done.returncode == 2
    assert "chdb:// is the embedded ClickHouse of Sightline's own tests" in done.stderr
    assert "clickhouse://USER:PASS@HOST:8123/DB" in done.stderr


def test_rebuild_store_and_restore_refuse_while_a_node_is_live_and_name_it(
    tmp_path: Path, postgres: PostgresServer, clickhouse: Any
) -> None:
    database = postgres.create_migrated_database()
    events_url = clickhouse.url(f"ops_{uuid.uuid4().hex[:8]}")
    server = LiveServer(tmp_path / "node", database, env={"SIGHTLINE_EVENTS_URL": events_url}).start()
    try:
        create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
        owner = sign_in(server)
        site = owner.post("/api/sites", json={"name": "Ops", "domain": "ops.example.com"}).json()["id"]
        db = open_database(database, migrate=False)
        rows = helpers.generate(site, datetime.now(UTC), visits=50, days=2, seed=3)
        helpers.insert_events(db, rows)
        db.dispose()
        helpers.wait_caught_up(owner)
        owner.close()
        other = ["--database-url", database, "--events-url", events_url, "--data-dir", str(tmp_path / "ops")]
        done = _sightline("rebuild-store", *other)
        assert done.returncode == 1, done.stdout
        assert "rebuild-store refused: 1 other Sightline process(es) are live" in done.stderr
        assert f"sightline serve 127.0.0.1:{server.port} on " in done.stderr
        assert "Stop them" in done.stderr
        store = ClickHouse(events_url)
        assert store.query("SELECT count() FROM events", {})[0][0] == len(rows)  # not emptied
        restored = _sightline("restore", "--database-url", database, str(tmp_path / "no-backup"))
        assert restored.returncode == 1
        assert "restore refused: 1 other Sightline process(es) are live" in restored.stderr
    finally:
        server.stop()
    done = _sightline("rebuild-store", *other)  # no node live: it runs
    assert done.returncode == 0, done.stderr
    assert store.query("SELECT count() FROM events", {})[0][0] == len(rows)
    store.close()


def test_a_server_does_not_start_while_an_operators_command_holds_the_database(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    database = postgres.create_migrated_database()
    db = open_database(database, migrate=False)
    command = Presence(db, "sightline rebuild-store on a test")
    assert command.alone() == []
    try:
        server = LiveServer(tmp_path / "node", database)
        with pytest.raises(RuntimeError) as refused:
            server.start()
        assert "an operator's command (rebuild-store or restore) is running" in str(refused.value)
        assert "sightline rebuild-store on a test" in str(refused.value)
    finally:
        command.release()
        db.dispose()
