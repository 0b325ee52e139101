"""The SQLite log gives deleted events' pages back to the file system by itself: new databases
are made with incremental auto-vacuum, and the store's trim returns the pages it frees in short
steps, without a manual VACUUM and without losing an event the store does not hold yet. Real
SQLite files and a real DuckDB store."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select

from sightline.database import Database, open_database
from sightline.database.reclaim import Reclaimer, advice, free_pages
from sightline.database.schema import events
from sightline.database.types import utcnow
from sightline.health.registry import database_probe
from sightline.store import maintenance as maintenance_module
from sightline.store.engines import Embedded
from sightline.store.feed import Feeder
from sightline.store.maintenance import Maintenance
from tests.reports import helpers

NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture
def log_db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(f"sqlite:///{tmp_path / 'sightline.db'}")
    yield database
    database.dispose()


def _fill(db: Database, visits: int = 1500) -> list[helpers.Event]:
    _, site = helpers.create_site(db, "reclaim.example.com")
    rows = helpers.generate(site, NOW, visits=visits, days=3, seed=11)
    for row in rows:
        row.props = {"padding": "x" * 300}  # a few hundred pages of log
    rows.sort(key=lambda e: e.time)
    helpers.insert_events(db, rows)
    return rows


def test_a_new_database_is_made_with_incremental_auto_vacuum(log_db: Database) -> None:
    found = free_pages(log_db)
    assert found is not None
    assert found.incremental
    assert found.as_dict()["auto_vacuum"] == "incremental"


def test_after_the_trim_the_file_shrinks_without_a_vacuum_and_no_unfed_event_is_lost(
    log_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(maintenance_module, "BUDGET_SECONDS", 60.0)  # one round does it all, however loaded
    rows = _fill(log_db)
    engine = Embedded(tmp_path / "store", 256)
    try:
        feeder = Feeder(log_db, engine, batch=len(rows) // 2)
        feeder.step()  # half of the log reached the store; the other half must stay whatever its age
        fed = engine.watermark()
        with log_db.read() as conn:
            times = {int(r[0]): r[1] for r in conn.execute(select(events.c.id, events.c.time))}
        before = free_pages(log_db)
        assert before is not None
        maintenance = Maintenance(log_db, engine, feeder, 1)
        maintenance.run()  # one round: trim, give the pages back, checkpoint
        after = free_pages(log_db)
        assert after is not None
        cut = utcnow() - timedelta(days=1)
        with log_db.read() as conn:
            left = {int(r[0]) for r in conn.execute(select(events.c.id))}
        assert maintenance.trimmed > 0
        assert after.page_count < before.page_count * 0.8
        assert after.free_count == 0
        assert Path(tmp_path / "sightline.db").stat().st_size == after.file_bytes  # the WAL went back
        unfed_or_recent = {i for i, at in times.items() if i > fed or at >= cut}
        assert left == unfed_or_recent  # only old events the store holds left the log
        assert any(i > fed and at < cut for i, at in times.items())  # old but unfed: kept
    finally:
        engine.close()


def test_a_trim_longer_than_its_budget_goes_on_after_each_feeding_step_and_is_logged_once(
    log_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(maintenance_module, "BUDGET_SECONDS", 0.0)  # one transaction per feeding step
    monkeypatch.setattr(maintenance_module, "CHUNK", 200)
    rows = _fill(log_db)
    old = [e for e in rows if e.time < utcnow() - timedelta(days=1)]
    assert len(old) > 3 * 200
    engine = Embedded(tmp_path / "store", 256)
    try:
        feeder = Feeder(log_db, engine)
        feeder.catch_up()
        maintenance = Maintenance(log_db, engine, feeder, 1)
        caplog.set_level(logging.INFO, logger="sightline.store")
        maintenance.run()  # the round: one transaction, then back to feeding
        assert maintenance.trimming
        assert 0 < maintenance.trimmed <= 200
        calls = 1
        while maintenance.trimming and calls < 100:
            maintenance.run()  # the next steps' maintenance goes on with the trim, though no round is due
            calls += 1
        assert not maintenance.trimming
        assert calls >= len(old) // 200
        assert maintenance.trimmed == len(old)
        with log_db.read() as conn:
            assert conn.execute(select(func.count()).select_from(events)).scalar_one() == len(rows) - len(old)
        said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("trimmed ")]
        assert len(said) == 1
        assert said[0].startswith(f"trimmed {len(old)} log events older than 1 days")
    finally:
        engine.close()


def test_a_round_gives_back_one_step_when_its_time_is_up(log_db: Database) -> None:
    _fill(log_db, visits=600)
    with log_db.begin() as conn:
        conn.execute(delete(events))
    before = free_pages(log_db)
    assert before is not None
    assert before.free_count > 64
    reclaimer = Reclaimer(log_db)
    reclaimer.pages.value = 16
    assert reclaimer.run(budget_s=0) == 16
    assert reclaimer.run(budget_s=60) == before.free_count - 16
    after = free_pages(log_db)
    assert after is not None
    assert after.free_count == 0
    assert after.page_count == before.page_count - before.free_count


def _old_style_database(path: Path) -> None:
    """A database as Sightline made them before: auto_vacuum none, the schema migrated on it."""
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE made_before (x)")  # the first table fixes auto_vacuum (none)
        conn.commit()
    open_database(f"sqlite:///{path}").dispose()


def test_a_database_made_before_keeps_its_pages_and_health_says_to_compact_it(tmp_path: Path) -> None:
    path = tmp_path / "sightline.db"
    _old_style_database(path)
    db = open_database(f"sqlite:///{path}")
    try:
        _fill(db, visits=6000)
        with db.begin() as conn:
            conn.execute(delete(events))
        found = free_pages(db)
        assert found is not None
        assert not found.incremental
        assert Reclaimer(db).run(budget_s=60) == 0  # it cannot: pages stay free until compacted
        report = database_probe(db)()
        text = advice(found) if found.free_bytes >= 64 * 1024 * 1024 else None
        assert report.figures["space"]["auto_vacuum"] == "none"
        assert report.figures["space"]["free_bytes"] == found.free_bytes
        assert report.figures["advice"] == text
        small = advice(found.__class__(4096, 100_000, 50_000, 0))
        assert small is not None
        assert "sightline compact" in small
        assert advice(found.__class__(4096, 100_000, 50_000, 2)) is None  # the store gives them back
    finally:
        db.dispose()
