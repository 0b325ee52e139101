"""Upgrades: the database of every earlier release migrates to the current schema with its rows,
the migrations go back down and up again, and a schema newer than the code stops the server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import MetaData, create_engine, text

from sightline.database import Database, open_database
from tests.database.release_data import RELEASES, make_release, snapshot
from tests.support.postgres import PostgresServer

FIXTURES = Path(__file__).resolve().parent / "releases"
NAMES = [name for name, _ in RELEASES]


def columns_of(url: str) -> dict[str, set[str]]:
    engine = create_engine(url)
    try:
        meta = MetaData()
        with engine.connect() as conn:
            meta.reflect(conn)
        return {t.name: {c.name for c in t.columns} for t in meta.sorted_tables}
    finally:
        engine.dispose()


def assert_upgrade_keeps_rows(url: str, fresh_url: str) -> None:
    before = snapshot(url)
    assert before, "the release's database has no tables"
    open_database(url).dispose()  # what `serve` and `migrate` do at start
    after = snapshot(url)
    assert columns_of(url) == columns_of(fresh_url), "an upgraded database differs from a new one"
    kept = 0
    for table, rows in before.items():
        if table not in after:
            continue  # dropped on purpose by a later migration (derived data)
        assert len(after[table]) == len(rows), f"{table} lost rows"
        for old, new in zip(rows, after[table], strict=True):
            assert {k: v for k, v in new.items() if k in old} == {k: old[k] for k in old if k in new}, table
            kept += 1
    assert kept >= 2


@pytest.mark.parametrize("name", NAMES)
def test_each_earlier_releases_sqlite_database_upgrades_to_the_current_schema_keeping_its_rows(
    name: str, tmp_path: Path
) -> None:
    fixture = FIXTURES / f"{name}.sqlite"
    assert fixture.exists(), "run scripts/make_release_fixtures.py"
    copy = tmp_path / "sightline.db"
    shutil.copyfile(fixture, copy)
    fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
    open_database(fresh).dispose()
    assert_upgrade_keeps_rows(f"sqlite:///{copy}", fresh)


@pytest.mark.postgres
@pytest.mark.parametrize(("name", "heads"), RELEASES, ids=NAMES)
def test_each_earlier_releases_postgresql_database_upgrades_to_the_current_schema_keeping_its_rows(
    name: str, heads: tuple[str, ...], postgres: PostgresServer
) -> None:
    url = postgres.create_database()
    make_release(url, heads)
    fresh = postgres.create_database()
    open_database(fresh).dispose()
    assert_upgrade_keeps_rows(url, fresh)


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_every_migration_goes_back_down_and_up_again(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if engine == "postgresql":
        url = request.getfixturevalue("postgres").create_database()
    else:
        url = f"sqlite:///{tmp_path / 'x.db'}"
    db = open_database(url)
    try:
        tables = set(columns_of(url))
        with db.engine.begin() as conn:
            cfg = db.alembic_config()
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "base")
        assert set(columns_of(url)) <= {"alembic_version"}
        db.migrate()
        assert set(columns_of(url)) == tables
    finally:
        db.dispose()


def run_cli(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    command = [sys.executable, "-m", "sightline.cli", *args, "--data-dir", str(data_dir)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def test_the_server_refuses_to_start_on_a_schema_newer_than_it_knows(tmp_path: Path) -> None:
    data = tmp_path / "data"
    db: Database = open_database(f"sqlite:///{data / 'sightline.db'}")
    with db.begin() as conn:
        conn.execute(text("INSERT INTO alembic_version (version_num) VALUES ('0999_from_the_future')"))
    before: dict[str, Any] = snapshot(db.url)
    db.dispose()
    for args in (("migrate",), ("serve", "--port", "0")):
        done = run_cli(*args, data_dir=data)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "0999_from_the_future" in done.stderr
        assert "newer version migrated it" in done.stderr
        assert "Traceback" not in done.stderr
    assert snapshot(f"sqlite:///{data / 'sightline.db'}") == before
