"""The DuckDB file of the column store: schema, format check, watermark, readers and one writer.

One process owns the file (DuckDB locks it). Readers each take their own cursor, so reports run
side by side while the worker writes; DuckDB's MVCC gives each a consistent snapshot. The file
is derived data: when it cannot be read, or was written by another DuckDB version or an older
layout, it is deleted and rebuilt from the SQL database. When another process holds it, the
store stays off and reports read the SQL database.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

log = logging.getLogger("sightline.reports")

FORMAT = 4  # bump when the tables below change: the copy is then rebuilt
FILE_NAME = "reports.duckdb"

OFF, BUILDING, READY = "off", "building", "ready"

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY, format INTEGER NOT NULL, "
    "engine VARCHAR NOT NULL, watermark BIGINT NOT NULL)",
    # One row per event: time in microseconds since the epoch (UTC), visitor and visit as keys.
    "CREATE TABLE IF NOT EXISTS hits (site_id INTEGER NOT NULL, t BIGINT NOT NULL, "
    "vk UBIGINT NOT NULL, sk UBIGINT NOT NULL, name VARCHAR NOT NULL, path VARCHAR NOT NULL)",
    # One row per (custom event, prop): value is "name\x1fkey\x1fvalue" as the rollups cut it.
    "CREATE TABLE IF NOT EXISTS props (site_id INTEGER NOT NULL, t BIGINT NOT NULL, "
    "vk UBIGINT NOT NULL, sk UBIGINT NOT NULL, name VARCHAR NOT NULL, value VARCHAR NOT NULL)",
    # Visitors by number (dense, from 1): exact distinct counts of many visits are bitmaps.
    "CREATE TABLE IF NOT EXISTS visitors (vk UBIGINT PRIMARY KEY, vid INTEGER NOT NULL)",
    # The page paths and custom event names the visits' lists refer to, by number.
    "CREATE TABLE IF NOT EXISTS terms (id INTEGER PRIMARY KEY, text VARCHAR NOT NULL UNIQUE)",
    # One row per visit, as report_visits holds it, plus the pages it viewed and the custom
    # events it sent (term ids) with how many times (parallel lists): filters read them.
    "CREATE TABLE IF NOT EXISTS visits (site_id INTEGER NOT NULL, sk UBIGINT NOT NULL, "
    "vk UBIGINT NOT NULL, started BIGINT NOT NULL, pageviews INTEGER NOT NULL, "
    "duration INTEGER NOT NULL, entry VARCHAR, exit VARCHAR, source VARCHAR NOT NULL, "
    "utm_source VARCHAR NOT NULL, utm_medium VARCHAR NOT NULL, utm_campaign VARCHAR NOT NULL, "
    "browser VARCHAR NOT NULL, os VARCHAR NOT NULL, device VARCHAR NOT NULL, "
    "pages INTEGER[] NOT NULL, page_views INTEGER[] NOT NULL, "
    "events INTEGER[] NOT NULL, event_counts INTEGER[] NOT NULL, vid INTEGER NOT NULL)",
)


class ColumnStore:
    """The column store of one server; ``state`` is off, building (catching up) or ready."""

    def __init__(self, directory: Path, memory_mb: int, enabled: bool = True) -> None:
        self.path = directory / FILE_NAME
        self.memory_mb = memory_mb
        self.enabled = enabled
        self.state = OFF
        self.watermark = 0
        self._con: duckdb.DuckDBPyConnection | None = None
        self._write_lock = threading.Lock()

    def open(self) -> None:
        """Opens (or creates, or rebuilds) the file; leaves the store off when it cannot."""
        if not self.enabled or self._con is not None:
            return
        try:
            self._con = self._connect()
        except duckdb.IOException as error:
            if "lock" in str(error).lower():
                log.warning("the reports' column store %s is in use by another process: %s", self.path, error)
                return
            self._con = self._recreate(error)
        except duckdb.Error as error:
            self._con = self._recreate(error)
        if self._con is not None:
            self.state = BUILDING

    def _recreate(self, error: Exception) -> duckdb.DuckDBPyConnection | None:
        log.warning("the reports' column store %s cannot be read (%s); rebuilding it", self.path, error)
        self._remove_files()
        try:
            return self._connect()
        except duckdb.Error:
            log.exception("the reports' column store cannot be created; reports read the database")
            return None

    def _remove_files(self) -> None:
        for path in (self.path, self.path.with_name(self.path.name + ".wal")):
            path.unlink(missing_ok=True)

    def _connect(self) -> duckdb.DuckDBPyConnection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        config: dict[str, str | bool | int | float | list[str]] = {
            "memory_limit": f"{self.memory_mb}MB",
            "threads": 2,
        }
        con = duckdb.connect(str(self.path), config=config)
        try:
            found = self._meta(con)
            if found is not None and found[:2] != (FORMAT, duckdb.__version__):
                con.close()
                log.info("the reports' column store was made by another version; rebuilding it")
                self._remove_files()
                con = duckdb.connect(str(self.path), config=config)
                found = None
            for statement in SCHEMA:
                con.execute(statement)
            if found is None:
                con.execute(
                    "INSERT INTO meta VALUES (1, ?, ?, 0) ON CONFLICT DO NOTHING",
                    [FORMAT, duckdb.__version__],
                )
                self.rebuilt = True
            self.watermark = int(found[2]) if found is not None else 0
        except BaseException:
            con.close()
            raise
        return con

    @staticmethod
    def _meta(con: duckdb.DuckDBPyConnection) -> tuple[int, str, int] | None:
        exists = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'meta'"
        ).fetchone()
        if not exists or not exists[0]:
            return None
        row = con.execute("SELECT format, engine, watermark FROM meta WHERE id = 1").fetchone()
        return None if row is None else (int(row[0]), str(row[1]), int(row[2]))

    @property
    def ready(self) -> bool:
        return self.state == READY

    @contextmanager
    def reader(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of its own for one report (safe beside the writer and other readers)."""
        if self._con is None:
            raise RuntimeError("the column store is not open")
        cursor = self._con.cursor()
        try:
            yield cursor
        finally:
            cursor.close()

    @contextmanager
    def writer(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One transaction, one writer at a time; committed when the block ends without error."""
        if self._con is None:
            raise RuntimeError("the column store is not open")
        with self._write_lock:
            cursor = self._con.cursor()
            try:
                cursor.execute("BEGIN TRANSACTION")
                try:
                    yield cursor
                except BaseException:
                    cursor.execute("ROLLBACK")
                    raise
                cursor.execute("COMMIT")
            finally:
                cursor.close()

    def figures(self) -> dict[str, Any]:
        return {"state": self.state, "watermark": self.watermark}

    def close(self) -> None:
        if self._con is not None:
            with self._write_lock:
                self._con.close()
                self._con = None
        self.state = OFF
