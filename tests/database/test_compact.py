"""``sightline compact`` as an operator runs it: on a database made before incremental
auto-vacuum, it gives the free pages back and turns auto-vacuum on, keeping every row; it refuses
while a server holds the data directory, and explains what to do on PostgreSQL. Real SQLite files,
the real CLI in a subprocess."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from sightline.datadir import claim
from tests.support import waits


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    return subprocess.run(
        [sys.executable, "-m", "sightline.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=waits.COMMAND,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _pragma(path: Path, name: str) -> int:
    with closing(sqlite3.connect(path)) as conn:
        return int(conn.execute(f"PRAGMA {name}").fetchone()[0])


def _old_database_with_free_pages(path: Path) -> None:
    """auto_vacuum none (as Sightline made them before), 2,000 rows kept and 20,000 deleted."""
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE log (id INTEGER PRIMARY KEY, body TEXT)")
        conn.executemany("INSERT INTO log (body) VALUES (?)", [("x" * 400,)] * 22_000)
        conn.execute("DELETE FROM log WHERE id > 2000")
        conn.commit()


def test_compact_gives_the_free_pages_back_and_turns_incremental_auto_vacuum_on(tmp_path: Path) -> None:
    path = tmp_path / "sightline.db"
    _old_database_with_free_pages(path)
    pages, free = _pragma(path, "page_count"), _pragma(path, "freelist_count")
    assert _pragma(path, "auto_vacuum") == 0
    assert free > pages / 2
    done = _run("compact", "--data-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert f"compacted {path}" in done.stdout
    assert "given back to the file system" in done.stdout
    assert _pragma(path, "auto_vacuum") == 2
    assert _pragma(path, "freelist_count") == 0
    assert _pragma(path, "page_count") <= pages - free + 2
    assert path.stat().st_size < pages * 4096 / 2
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*), min(id), max(id) FROM log").fetchone() == (2000, 1, 2000)


def test_compact_refuses_while_a_server_holds_the_data_directory(tmp_path: Path) -> None:
    path = tmp_path / "sightline.db"
    _old_database_with_free_pages(path)
    pages = _pragma(path, "page_count")
    lock = claim(tmp_path)  # what `sightline serve` holds while it runs
    try:
        refused = _run("compact", "--data-dir", str(tmp_path))
    finally:
        lock.release()
    assert refused.returncode == 1
    assert "compact refused" in refused.stderr
    assert "another Sightline server" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert _pragma(path, "page_count") == pages
    assert _pragma(path, "auto_vacuum") == 0


def test_compact_on_postgresql_says_what_to_do_there_instead() -> None:
    done = _run("compact", "--database-url", "postgresql://sightline@127.0.0.1:1/none")
    assert done.returncode == 1
    assert "VACUUM FULL events" in done.stderr
    assert "pg_repack" in done.stderr
