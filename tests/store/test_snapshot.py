"""The embedded store in a backup: with ``--event-log-retention-days`` the store is the only copy of
the events the log trimmed, so ``sightline backup`` copies it (from the running server's store
process, or from the file when no server runs) and ``sightline restore`` puts every event back."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from sightline.database import open_database
from sightline.store.engines import Embedded
from tests.backup.test_backup import cli
from tests.reports import helpers
from tests.store.test_feed import _expected_visits, _visits
from tests.support.server import LiveServer


def log_size(data: Path) -> int:
    conn = sqlite3.connect(data / "sightline.db")
    try:
        return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
    finally:
        conn.close()


def parquet_rows(path: Path) -> int:
    con = duckdb.connect()
    try:
        literal = str(path).replace("'", "''")
        return int(con.execute(f"SELECT count(*) FROM read_parquet('{literal}')").fetchone()[0])  # type: ignore[index]
    finally:
        con.close()


def store_figures(data: Path, site: int) -> tuple[int, int, dict[int, object]]:
    store = Embedded(data, 256)
    try:
        count, distinct = store.query("SELECT count(*), count(DISTINCT id) FROM events", {})[0]
        return int(count), int(distinct), dict(_visits(store, site))
    finally:
        store.close()


def test_a_backup_keeps_the_events_the_log_trimmed_and_restore_puts_every_one_back(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = open_database(f"sqlite:///{data / 'sightline.db'}")
    _, site = helpers.create_site(db, "trimmed.example.com")
    rows = helpers.generate(site, datetime.now(UTC).replace(microsecond=0), visits=400, days=20, seed=4)
    helpers.insert_events(db, rows)
    db.dispose()
    recent = sum(1 for e in rows if (datetime.now(UTC) - e.time).days < 7)
    assert 0 < recent < len(rows)

    server = LiveServer(data, env={"SIGHTLINE_EVENT_LOG_RETENTION_DAYS": "7"}).start()
    try:
        deadline = time.monotonic() + 120
        while log_size(data) > recent + 50 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert log_size(data) <= recent + 50, "the log was not trimmed"
        running = tmp_path / "while-running"
        made = cli("backup", str(running), "--data-dir", str(data))
        assert made.returncode == 0, made.stderr
    finally:
        server.stop()

    manifest = json.loads((running / "manifest.json").read_text())
    assert [p["name"] for p in manifest["parts"]] == ["store", "database", "recordings"]
    assert parquet_rows(running / "store" / "events.parquet") == len(rows)

    stopped = tmp_path / "while-stopped"  # no store process: the file is read directly
    made = cli("backup", str(stopped), "--data-dir", str(data))
    assert made.returncode == 0, made.stderr
    assert parquet_rows(stopped / "store" / "events.parquet") == len(rows)

    expected = _expected_visits(site, rows)
    for backup in (running, stopped):
        fresh = tmp_path / f"restored-{backup.name}"
        done = cli("restore", str(backup), "--data-dir", str(fresh))
        assert done.returncode == 0, done.stderr
        assert log_size(fresh) < len(rows)
        assert store_figures(fresh, site) == (len(rows), len(rows), expected)

    # A server on the restored place keeps the store it was given (no rebuild from the short log).
    again = LiveServer(tmp_path / "restored-while-running").start()
    again.stop()
    assert store_figures(tmp_path / "restored-while-running", site)[0] == len(rows)


def test_restore_refuses_a_store_copied_in_another_layout(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert cli("migrate", "--data-dir", str(data)).returncode == 0
    Embedded(data, 256).close()  # an empty store of this layout
    backup = tmp_path / "backup"
    assert cli("backup", str(backup), "--data-dir", str(data)).returncode == 0
    meta = backup / "store" / "store_meta.parquet"
    con = duckdb.connect()
    literal = str(meta).replace("'", "''")
    changed = f"SELECT id, 99 AS format, engine FROM read_parquet('{literal}')"
    con.execute(f"COPY ({changed}) TO '{literal}.new' (FORMAT parquet)")
    con.close()
    Path(f"{meta}.new").replace(meta)
    manifest = backup / "manifest.json"  # made again to match, as a foreign but whole backup would
    data_manifest = json.loads(manifest.read_text())
    for part in data_manifest["parts"]:
        for f in part["files"]:
            if f["path"].endswith("store_meta.parquet"):
                f["bytes"] = meta.stat().st_size
                f["sha256"] = hashlib.sha256(meta.read_bytes()).hexdigest()
    manifest.write_text(json.dumps(data_manifest))
    done = cli("restore", str(backup), "--data-dir", str(tmp_path / "target"))
    assert done.returncode == 1
    assert "store_meta.parquet" in done.stderr
    assert "layout 99" in done.stderr


def test_a_store_file_that_cannot_be_read_is_moved_aside_not_deleted(tmp_path: Path) -> None:
    tmp_path.joinpath("store.duckdb").write_bytes(b"not a database" * 1000)
    Embedded(tmp_path, 256).close()
    assert tmp_path.joinpath("store.duckdb.unreadable").read_bytes() == b"not a database" * 1000
    assert store_figures(tmp_path, 1)[0] == 0  # a new, empty store took its place


def test_a_store_of_another_layout_is_moved_aside_and_a_store_of_an_older_duckdb_is_kept(
    tmp_path: Path,
) -> None:
    Embedded(tmp_path, 256).close()
    con = duckdb.connect(str(tmp_path / "store.duckdb"))
    con.execute("INSERT INTO store_state VALUES ('watermark', 41)")
    con.execute("UPDATE store_meta SET engine = '1.1.0'")
    con.close()
    kept = Embedded(tmp_path, 256)
    assert kept.watermark() == 41
    kept.close()
    con = duckdb.connect(str(tmp_path / "store.duckdb"))
    con.execute("UPDATE store_meta SET format = 1")
    con.close()
    rebuilt = Embedded(tmp_path, 256)
    assert rebuilt.watermark() == 0
    rebuilt.close()
    old = duckdb.connect(str(tmp_path / "store.duckdb.layout-1"), read_only=True)
    assert old.execute("SELECT value FROM store_state WHERE name = 'watermark'").fetchall() == [(41,)]
    old.close()
