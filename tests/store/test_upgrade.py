"""The visits' channel as a stored column: the feed writes it once per visit; a store of the previous
layout (no ``channel`` column) is brought up to date in place when it opens, on DuckDB and on
ClickHouse's SQL (chDB): every visit and event gets the channel the rules give it, nothing is
rebuilt from the log (whose trim removed the oldest events), and the feed carries on after it."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
from sqlalchemy import delete, func, select

from sightline.database import Database
from sightline.database.schema import events
from sightline.store import schema, snapshot, upgrade
from sightline.store.engines import ClickHouse, Embedded, Engine, copy_tables
from sightline.store.feed import Feeder, key_of
from tests.reports import helpers, oracle
from tests.reports.test_channels import generate
from tests.support.clickhouse import RealServer, StandIn

Opener = Callable[[], Engine]


@pytest.fixture(params=["duckdb", "clickhouse"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """Opens the same store again each time it is called (a new DuckDB file, or chDB database)."""
    if request.param == "duckdb":
        return lambda: Embedded(tmp_path / "data", 256)
    url = request.getfixturevalue("clickhouse").url(f"t_{uuid.uuid4().hex[:12]}")
    return lambda: ClickHouse(url)


def _as_previous_layout(engine: Engine, tmp_path: Path) -> None:
    """Turns a store into one the previous Sightline made: its tables without ``channel``, the
    previous layout's number recorded (DuckDB's ``store_meta``; none on ClickHouse)."""
    if isinstance(engine, Embedded):
        engine.close()
        con = duckdb.connect(str(tmp_path / "data" / "store.duckdb"))
        for table in ("events", "visits"):
            con.execute(f"ALTER TABLE {table} DROP COLUMN channel")
        con.execute("UPDATE store_meta SET format = 5")
        con.close()
        return
    for table in ("events", "visits"):
        engine.execute(f"ALTER TABLE {table} DROP COLUMN channel")
    engine.execute("DELETE FROM store_state WHERE name = {name:String}", {"name": schema.LAYOUT})
    engine.close()


def _channels(engine: Engine, table: str) -> dict[int, set[str]]:
    """Each visit's channels as the table's rows hold them, by the visit's session key."""
    sessions = {
        int(visit): int(session)
        for visit, session in engine.query(f"SELECT visit, session FROM {engine.dialect.visits}", {})
    }
    source = engine.dialect.visits if table == "visits" else table
    out: dict[int, set[str]] = {}
    for visit, channel in engine.query(f"SELECT visit, channel FROM {source}", {}):
        out.setdefault(sessions[int(visit)], set()).add(str(channel))
    return out


def _expected(site: int, rows: list[helpers.Event]) -> dict[int, set[str]]:
    return {key_of(site, v.session_id): {oracle.channel(v)} for v in helpers.visits_of(rows)}


def _logged(db: Database) -> int:
    with db.read() as conn:
        return int(conn.execute(select(func.count()).select_from(events)).scalar_one())


def test_a_store_of_the_previous_layout_gets_its_channels_in_place_though_the_log_was_trimmed(
    db: Database, opener: Opener, tmp_path: Path
) -> None:
    _, site = helpers.create_site(db, "upgrade.example.com")
    rows = sorted(generate(site, 300, seed=11), key=lambda e: e.time)
    helpers.insert_events(db, rows)
    engine = opener()
    feeder = Feeder(db, engine, batch=200)
    feeder.catch_up()
    feeder.close()
    watermark = engine.watermark()
    _as_previous_layout(engine, tmp_path)
    with db.begin() as conn:  # the log's trim: the oldest events are in the store alone
        conn.execute(delete(events).where(events.c.id <= len(rows) // 2))
    assert _logged(db) < len(rows)

    upgraded = opener()
    try:
        assert upgraded.watermark() == watermark  # not rebuilt from the log
        held = upgraded.query("SELECT count(*) FROM events", {})[0][0]
        assert held == len(rows), "every event the trimmed log no longer has is kept"
        assert _channels(upgraded, "visits") == _expected(site, rows)
        assert _channels(upgraded, "events") == _expected(site, rows)
        assert {c for found in _expected(site, rows).values() for c in found} >= {
            "direct",
            "paid_search",
            "ai_assistants",
            "email",
            "referral",
        }

        later = [helpers.pageview(site, max(e.time for e in rows), "visitor-late", "/", source="Perplexity")]
        helpers.insert_events(db, later)
        feeder = Feeder(db, upgraded, batch=200)
        assert feeder.catch_up() == 1
        feeder.close()
        assert _channels(upgraded, "events") == _expected(site, rows + later)
    finally:
        upgraded.close()


def test_an_upgraded_store_opens_again_as_it_is(db: Database, opener: Opener, tmp_path: Path) -> None:
    _, site = helpers.create_site(db, "again.example.com")
    rows = sorted(generate(site, 60, seed=12), key=lambda e: e.time)
    helpers.insert_events(db, rows)
    engine = opener()
    feeder = Feeder(db, engine, batch=100)
    feeder.catch_up()
    feeder.close()
    _as_previous_layout(engine, tmp_path)
    opener().close()
    again = opener()
    try:
        assert _channels(again, "visits") == _expected(site, rows)
        if isinstance(again, Embedded):
            assert not list((tmp_path / "data").glob("store.duckdb.layout-*")), "nothing moved aside"
            assert again.query("SELECT format FROM store_meta", {}) == [(schema.FORMAT,)]
    finally:
        again.close()


def test_a_change_of_the_channel_rules_reaches_every_visit_the_store_holds_when_it_opens(
    db: Database, opener: Opener
) -> None:
    _, site = helpers.create_site(db, "rules.example.com")
    rows = sorted(generate(site, 60, seed=13), key=lambda e: e.time)
    helpers.insert_events(db, rows)
    engine = opener()
    feeder = Feeder(db, engine, batch=100)
    feeder.catch_up()
    feeder.close()
    # As the rules before the change had it: AI assistants were referrals.
    if isinstance(engine, Embedded):
        for table in ("events", "visits"):
            engine.execute(f"UPDATE {table} SET channel = 'referral' WHERE channel = 'ai_assistants'")
        engine.execute("UPDATE store_state SET value = 1 WHERE name = $name", {"name": upgrade.RULES})
    else:
        for table in ("events", "visits"):
            engine.execute(
                f"ALTER TABLE {table} UPDATE channel = 'referral' WHERE channel = 'ai_assistants' "
                "SETTINGS mutations_sync = 2"
            )
        engine.execute(
            "INSERT INTO store_state SELECT {name:String}, 1, 0, 0, now64(6)", {"name": upgrade.RULES}
        )
    assert _channels(engine, "visits") != _expected(site, rows)
    engine.close()
    again = opener()
    try:
        assert _channels(again, "visits") == _expected(site, rows)
        assert _channels(again, "events") == _expected(site, rows)
    finally:
        again.close()


def test_the_feed_writes_a_visits_channel_once_and_its_later_events_carry_it(
    db: Database, opener: Opener
) -> None:
    _, site = helpers.create_site(db, "fed.example.com")
    rows = sorted(generate(site, 80, seed=14), key=lambda e: e.time)
    helpers.insert_events(db, rows)
    engine = opener()
    feeder = Feeder(db, engine, batch=7, backlog=7)  # most visits' events span batches
    try:
        feeder.catch_up()
        assert _channels(engine, "visits") == _expected(site, rows)
        assert _channels(engine, "events") == _expected(site, rows)
    finally:
        feeder.close()
        engine.close()


def test_a_backup_of_the_previous_layout_restores_with_its_channels(db: Database, tmp_path: Path) -> None:
    _, site = helpers.create_site(db, "restored.example.com")
    rows = sorted(generate(site, 60, seed=15), key=lambda e: e.time)
    helpers.insert_events(db, rows)
    engine = Embedded(tmp_path / "data", 256)
    feeder = Feeder(db, engine, batch=100)
    feeder.catch_up()
    feeder.close()
    _as_previous_layout(engine, tmp_path)
    con = duckdb.connect(str(tmp_path / "data" / "store.duckdb"))
    copy_tables(con, tmp_path / "backup")  # as a backup of the previous version wrote it
    con.close()
    snapshot.check(tmp_path / "backup")
    snapshot.restore(tmp_path / "restored", tmp_path / "backup")
    restored = Embedded(tmp_path / "restored", 256)
    try:
        assert restored.query("SELECT format FROM store_meta", {}) == [(schema.FORMAT,)]
        assert _channels(restored, "visits") == _expected(site, rows)
        assert _channels(restored, "events") == _expected(site, rows)
    finally:
        restored.close()


def _upgradable_store(db: Database, tmp_path: Path, doublings: int) -> Path:
    """A DuckDB store of the previous layout, its rows doubled ``doublings`` times (so the blocks
    an upgrade frees are many), closed; its file's path."""
    _, site = helpers.create_site(db, "compact.example.com")
    helpers.insert_events(db, sorted(generate(site, 100, seed=13), key=lambda e: e.time))
    engine = Embedded(tmp_path / "data", 256)
    feeder = Feeder(db, engine, batch=500)
    feeder.catch_up()
    feeder.close()
    for _ in range(doublings):
        engine.execute("INSERT INTO events SELECT * FROM events")
    _as_previous_layout(engine, tmp_path)
    return tmp_path / "data" / "store.duckdb"


def test_an_upgraded_store_is_written_again_compactly(db: Database, tmp_path: Path) -> None:
    path = _upgradable_store(db, tmp_path, doublings=9)
    before = path.stat().st_size
    with duckdb.connect(str(path), read_only=True) as con:
        held = con.execute("SELECT count(*) FROM events").fetchone()
    upgraded = Embedded(tmp_path / "data", 256)
    try:
        assert upgraded.query("SELECT count(*) FROM events", {}) == [held]
        assert upgraded.query("SELECT format FROM store_meta", {}) == [(schema.FORMAT,)]
    finally:
        upgraded.close()
    assert path.stat().st_size <= before * 1.25, (before, path.stat().st_size)  # doubled without the copy
    assert not upgrade.compacting(path).exists()


def test_without_the_compact_copy_the_upgrade_would_leave_the_file_far_bigger(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the test above guards against: the upgrade's own rewrite leaves the freed blocks (the
    file 1.4-2 times as big, where the compact copy keeps it under 1.25 times)."""
    path = _upgradable_store(db, tmp_path, doublings=9)
    before = path.stat().st_size
    monkeypatch.setattr(upgrade, "_copy", _refuse)
    Embedded(tmp_path / "data", 256).close()
    assert path.stat().st_size > before * 1.35, (before, path.stat().st_size)


def _refuse(*_: object) -> None:
    raise duckdb.IOException("No space left on device")


def test_a_compact_copy_that_fails_leaves_the_upgraded_store_working(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = _upgradable_store(db, tmp_path, doublings=2)
    upgrade.compacting(path).write_bytes(b"half written by a cut")
    monkeypatch.setattr(upgrade, "_copy", _refuse)
    store = Embedded(tmp_path / "data", 256)
    try:
        assert store.query("SELECT format FROM store_meta", {}) == [(schema.FORMAT,)]
        assert store.query("SELECT count(*) FROM events WHERE channel = ''", {}) == [(0,)]
    finally:
        store.close()
    assert "not written again compactly (No space left on device)" in caplog.text
    assert not upgrade.compacting(path).exists()
    assert not list(path.parent.glob("store.duckdb.unreadable*")), "not moved aside and rebuilt"


def test_a_clickhouse_store_lacking_a_visit_attributes_column_gains_it_when_it_opens(
    clickhouse: StandIn | RealServer,
) -> None:
    """A store made before an attribute was registered has the newest layout but not its column:
    opening it adds the column, though a store's first open adds none (its tables are made whole)."""
    url = clickhouse.url(f"t_{uuid.uuid4().hex[:12]}")
    made = ClickHouse(url)
    try:
        for table in ("events", "visits"):
            made.execute(f"ALTER TABLE {table} DROP COLUMN language")
    finally:
        made.close()
    reopened = ClickHouse(url)
    try:
        having = reopened.query(
            "SELECT table FROM system.columns WHERE database = currentDatabase() AND name = 'language' "
            "ORDER BY table",
            {},
        )
        assert having == [("events",), ("visits",)]
    finally:
        reopened.close()
