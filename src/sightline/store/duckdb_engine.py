"""The embedded engine, ``Embedded``: DuckDB in the data directory, owned by the store process alone.

A batch (its events, the new rows of the visits it touched, their sites' visit counts, the
watermark) is one DuckDB transaction, so it is written exactly once even when the process is
killed halfway. A file of an older layout is brought up to date in place (``store.upgrade``); when
it cannot be read, or was made in a layout with no upgrade, it is moved aside (never deleted: with
a trimmed log it holds events nothing else has) and rebuilt from the log; ``copy_tables`` writes
it out for backups.

Checkpoints (the WAL's changes written into the file) are the store process's own step
(``checkpoint``), run between its writes once the WAL holds ``CHECKPOINT_WAL`` bytes. DuckDB would
run one inside the ``COMMIT`` that crosses its threshold, while the write still holds the kept
selections (``Kept.writing``: no selection is handed out until the write's change is recorded),
so every filtered report waited the checkpoint's second; a checkpoint changes no data, and
DuckDB's readers go on during one. DuckDB's own threshold stays as a bound (``WAL_BOUND``), for a
store whose own checkpoints keep failing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sightline.store import schema, upgrade
from sightline.store.changes import Changes, Spans, Touched, touched_of
from sightline.store.dialects import DUCKDB
from sightline.store.engine import (
    FILE_NAME,
    ORDERED,
    TABLES,
    WATERMARK,
    StoreBusyError,
    log,
    path_literal,
)
from sightline.store.kept_days import TABLE as KEPT_DAYS
from sightline.store.kept_days import KeptDays
from sightline.store.kept_files import DIRECTORY as KEPT_FILES
from sightline.store.kept_files import Found, Row
from sightline.store.kept_selections import Kept, Span

CHECKPOINT_WAL = 16 * 2**20  # WAL bytes from which ``checkpoint`` writes it to the file (DuckDB's default)
WAL_BOUND = "256MB"  # DuckDB checkpoints in a commit itself past this: a bound, not the rule


class Embedded:
    """DuckDB in ``DATA_DIR/store.duckdb``."""

    dialect = DUCKDB
    name = "duckdb"

    def __init__(self, directory: Path, memory_mb: int) -> None:
        self.path = directory / FILE_NAME
        self.memory_mb = memory_mb
        self._write = threading.Lock()
        self._con = self._open()
        self.days = KeptDays(self._con, directory / KEPT_FILES)  # the overview's days: dropped by writes
        self.changes = Changes(self.watermark())
        self.kept = Kept(self._con.cursor, self.changes)  # report selections, dropped by the changes

    def _open(self) -> duckdb.DuckDBPyConnection:
        try:
            con = self._connect()
        except duckdb.IOException as error:
            if "lock" in str(error).lower():
                raise StoreBusyError(f"{self.path} is in use by another process") from error
            return self._rebuilt(error)
        except duckdb.Error as error:
            return self._rebuilt(error)
        return con

    def _rebuilt(self, error: Exception) -> duckdb.DuckDBPyConnection:
        aside = self._move_aside("unreadable")
        log.warning(
            "the analytics store %s cannot be read (%s); it was moved to %s and is rebuilt from the "
            "log (events the log has trimmed are only in the moved file: restore a backup for them)",
            self.path,
            error,
            aside,
        )
        return self._connect()

    def _move_aside(self, why: str) -> Path:
        """Keeps the file that cannot be used (one per reason, the newest) instead of deleting it:
        with ``--event-log-retention-days`` it holds events the log no longer has."""
        aside = self.path.with_name(f"{self.path.name}.{why}")
        for path, moved in ((self.path, aside), (self.path.with_name(self.path.name + ".wal"), None)):
            if not path.exists():
                continue
            if moved is None:
                path.replace(aside.with_name(aside.name + ".wal"))
            else:
                path.replace(moved)
        return aside

    def _connect(self) -> duckdb.DuckDBPyConnection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        config: dict[str, str | bool | int | float | list[str]] = {
            "memory_limit": f"{self.memory_mb}MB",
            "threads": 2,
            "temp_directory": str(self.path.parent / "store.tmp"),
            # Reports select visits with ``visit IN (SELECT visit FROM events WHERE ...)``, and the
            # subquery (the visits that sent an event) is the side to hash. DuckDB's optimizer
            # swaps the sides of a join by its estimates, and misjudges an equality on ``name``:
            # it hashed all 1.5 M visits of 30 days to probe 100,000 "signup" events, three times
            # the CPU of the other way. Joins keep their sides.
            "disabled_optimizers": "build_side_probe_side",
            "checkpoint_threshold": WAL_BOUND,  # the store's own step checkpoints (``checkpoint``)
        }
        upgrade.compacting(self.path).unlink(missing_ok=True)  # a copy a cut left half-written
        con = duckdb.connect(str(self.path), config=config)
        try:
            made = self._made_by(con)
            if made is not None and made[0] in upgrade.UPGRADABLE:  # DuckDB reads older files itself
                upgrade.upgrade_duckdb(con, made[0])
                con = upgrade.compacted(con, self.path, config)
                made = (schema.FORMAT, made[1])
            if made is not None and made[0] != schema.FORMAT:
                con.close()
                aside = self._move_aside(f"layout-{made[0]}")
                log.warning(
                    "the analytics store was made in layout %s (this Sightline uses %s): it was moved "
                    "to %s and is rebuilt from the log",
                    made[0],
                    schema.FORMAT,
                    aside,
                )
                con = duckdb.connect(str(self.path), config=config)
                made = None
            for statement in (*schema.DUCKDB, *schema.added_attributes("duckdb")):
                con.execute(statement)
            if made is None:
                con.execute("INSERT INTO store_meta VALUES (1, ?, ?)", [schema.FORMAT, duckdb.__version__])
            upgrade.refresh_duckdb(con)
        except BaseException:
            con.close()
            raise
        return con

    @staticmethod
    def _made_by(con: duckdb.DuckDBPyConnection) -> tuple[int, str] | None:
        found = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'store_meta'"
        ).fetchone()
        if not found or not found[0]:
            return None
        row = con.execute("SELECT format, engine FROM store_meta WHERE id = 1").fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def query(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        cursor = self._con.cursor()
        try:
            return cursor.execute(sql, params).fetchall()
        finally:
            cursor.close()

    def columns(self, sql: str, params: dict[str, Any]) -> dict[str, Any]:
        cursor = self._con.cursor()
        try:
            return dict(cursor.execute(sql, params).fetchnumpy())
        finally:
            cursor.close()

    def keep(
        self, sql: str, params: dict[str, Any], site_id: int | None = None, span: Span | None = None
    ) -> str | None:
        """The name of a table holding the rows of ``sql`` as the store holds them now
        (``store.kept_selections``: the dashboard's requests under one filter select their visits
        once; with ``span``, brought up to date in place where the store's data changed)."""
        return self.kept.keep(sql, params, site_id, span)

    def execute(self, sql: str, params: dict[str, Any] | None = None, changed: Spans | None = None) -> None:
        """One statement changing the store's data where ``changed`` says (None: everywhere), in
        a transaction with the deletion of the kept days it touches (``store.kept_days``)."""
        with self._write, self.kept.writing():
            cursor = self._con.cursor()
            try:
                cursor.execute("BEGIN TRANSACTION")
                try:
                    cursor.execute(sql, params or {})
                    dropped = self.days.drop(cursor, changed)
                except BaseException:
                    cursor.execute("ROLLBACK")
                    raise
                cursor.execute("COMMIT")
            finally:
                cursor.close()
            self.days.unlink(dropped)
            self.changes.record(changed)

    def kept_days(self, asked: list[tuple[int, int, int]]) -> list[Found]:
        """The overview's kept spans of the (site, low, high) asked, with their keys' files
        (``store.kept_days``)."""
        cursor = self._con.cursor()
        try:
            return self.days.get(cursor, asked)
        finally:
            cursor.close()

    def keep_days(self, epoch: str, rows: list[Row]) -> int:
        """Keeps the overview's days read at their change numbers (``KeptDays.put``)."""
        with self._write:
            cursor = self._con.cursor()
            try:
                return self.days.put(cursor, self.changes, epoch, rows)
            finally:
                cursor.close()

    def watermark(self) -> int:
        rows = self.query("SELECT value FROM store_state WHERE name = $name", {"name": WATERMARK})
        return int(rows[0][0]) if rows else 0

    def pending_range(self) -> tuple[int, int] | None:
        return None  # a DuckDB batch is one transaction: nothing is ever half written

    def ordered_until(self) -> int:
        """Where the rows in site order end (``store.ordering``): 0 before the first rewrite."""
        rows = self.query("SELECT value FROM store_state WHERE name = $name", {"name": ORDERED})
        return int(rows[0][0]) if rows else 0

    def rewrite_in_order(self, low: int, high: int) -> int:
        """Writes the events of ``[low, high)`` and the visits born in it again, sorted by site and
        time, and moves ``ordered_until`` to ``high``, in one transaction; returns the events
        written. A span of one site is in order already: only the mark moves."""
        span = {"low": low, "high": high}
        with self._transaction() as cursor:
            moved = self._sort_span(cursor, span)
            _set_state(cursor, ORDERED, high)
        return moved

    @staticmethod
    def _sort_span(cursor: duckdb.DuckDBPyConnection, span: dict[str, int]) -> int:
        """The span's events and visits written again in site order (none for one site)."""
        sites = cursor.execute(
            "SELECT count(DISTINCT site_id) FROM events WHERE time >= $low AND time < $high", span
        ).fetchone()
        if not sites or int(sites[0]) < 2:
            return 0
        moved = 0
        for table, column, key in (("events", "time", "id"), ("visits", "born", "visit")):
            where = f"{column} >= $low AND {column} < $high"
            sorted_rows = f"SELECT * FROM {table} WHERE {where} ORDER BY site_id, {column}, {key}"  # noqa: S608
            cursor.execute(f"CREATE TEMP TABLE sorted_{table} AS {sorted_rows}", span)
            cursor.execute(f"DELETE FROM {table} WHERE {where}", span)  # noqa: S608
            cursor.execute(f"INSERT INTO {table} SELECT * FROM sorted_{table}")  # noqa: S608
            found = cursor.execute(f"SELECT count(*) FROM sorted_{table}").fetchone()  # noqa: S608
            moved = moved or (int(found[0]) if found else 0)  # the events' count
            cursor.execute(f"DROP TABLE sorted_{table}")
        return moved

    def visits_of(self, keys: pa.Array, born_after: int) -> pa.Table:
        """The rows of these visits (born after ``born_after``), as the feeder merges them. The
        keys are read by DuckDB from Arrow (as a list parameter, each became a Python integer
        first: five times the CPU of the query, docs/performance.md)."""
        columns = ", ".join(schema.VISIT_COLUMNS)
        cursor = self._con.cursor()
        try:
            cursor.register("wanted", pa.table({"session": keys}))
            return cursor.sql(
                f"SELECT {columns} FROM visits WHERE born >= $born "  # noqa: S608
                "AND session IN (SELECT session FROM wanted)",
                params={"born": born_after},
            ).to_arrow_table()
        finally:
            cursor.close()

    def write(self, after: int, last: int, events: pa.Table, visits: pa.Table, changed: Spans) -> None:
        """Events with ids in (after, last], the visits they touched and the watermark, at once;
        ``changed``: the sites and hours they change (``Feeder.build``), recorded with the keys
        of the visits they touch: every event is one of theirs (``store.changes.touched_of``)."""
        event_rows = events  # noqa: F841 (read by DuckDB by its name)
        visit_rows = visits  # noqa: F841
        touched = touched_of(visits)
        with self._transaction(changed, removed=False, watermark=last, touched=touched) as cursor:
            moved = cursor.execute(
                "SELECT coalesce(max(value), 0) FROM store_state WHERE name = $name", {"name": WATERMARK}
            ).fetchone()
            if moved is None or int(moved[0]) != after:
                raise RuntimeError("the watermark moved under this batch; it is rolled back")
            cursor.execute("INSERT INTO events BY NAME SELECT * FROM event_rows")
            if visits.num_rows:
                born = pc.min(visits["born"]).as_py()
                cursor.execute(
                    "DELETE FROM visits WHERE born >= $born AND session IN (SELECT session FROM visit_rows)",
                    {"born": born},
                )
                cursor.execute("INSERT INTO visits BY NAME SELECT * FROM visit_rows")
                cursor.execute(
                    "INSERT INTO visit_counts SELECT site_id, max(visit) FROM visit_rows GROUP BY site_id "
                    "ON CONFLICT (site_id) DO UPDATE SET visits = greatest(visits, excluded.visits)"
                )
            _set_state(cursor, WATERMARK, last)

    def refill(
        self, site_id: int, drop: list[int], events: pa.Table, visits: pa.Table, changed: Spans
    ) -> None:
        """The self-check's repair of one site (``store.check``), at once: the events of its
        visits numbered ``drop`` go, the rows of the visits in ``visits`` are replaced, ``events``
        come in; the watermark stays. ``changed``: the spans of the site it changes."""
        event_rows = events  # noqa: F841 (read by DuckDB by its name)
        visit_rows = visits  # noqa: F841
        with self._transaction(changed) as cursor:
            if drop:
                cursor.execute(
                    "DELETE FROM events WHERE site_id = $site AND list_contains($drop, visit)",
                    {"site": site_id, "drop": drop},
                )
            if visits.num_rows:
                cursor.execute(
                    "DELETE FROM visits WHERE site_id = $site "
                    "AND session IN (SELECT session FROM visit_rows)",
                    {"site": site_id},
                )
                cursor.execute("INSERT INTO visits BY NAME SELECT * FROM visit_rows")
                cursor.execute(
                    "INSERT INTO visit_counts SELECT site_id, max(visit) FROM visit_rows GROUP BY site_id "
                    "ON CONFLICT (site_id) DO UPDATE SET visits = greatest(visits, excluded.visits)"
                )
            cursor.execute("INSERT INTO events BY NAME SELECT * FROM event_rows")

    @contextmanager
    def _transaction(
        self,
        changed: Spans | None = None,
        removed: bool = True,
        watermark: int | None = None,
        touched: Touched | None = None,
    ) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor in a transaction of its own, committed at the end or rolled back on any error;
        one writer at a time. ``changed``: it changes the store's data there, recorded once it
        committed (``store.changes``; no kept selection is handed out meanwhile, ``Kept.writing``)."""
        with self._write, self.kept.writing() if changed is not None else nullcontext():
            cursor = self._con.cursor()
            try:
                cursor.execute("BEGIN TRANSACTION")
                dropped: list[str] = []
                try:
                    yield cursor
                    if changed is not None:  # its data changed there: the kept days too
                        dropped = self.days.drop(cursor, changed)
                except BaseException:
                    cursor.execute("ROLLBACK")
                    raise
                cursor.execute("COMMIT")
            finally:
                cursor.close()
            self.days.unlink(dropped)
            if changed is not None:
                self.changes.record(changed, removed, watermark, touched)

    def reset(self) -> None:
        with self._write, self.kept.writing():
            dropped = self.days.drop(self._con, None)
            for table in ("events", "visits", "visit_counts", "store_state", KEPT_DAYS):
                self._con.execute(f"DELETE FROM {table}")  # noqa: S608 (fixed names)
            self.days.unlink(dropped)
            self._con.execute("CHECKPOINT")
            self.changes.record(None)

    def export(self, target: Path) -> list[Path]:
        """Every table as Parquet files in ``target``, from one snapshot (``store.snapshot``)."""
        return copy_tables(self._con, target)

    def wal_bytes(self) -> int:
        wal = self.path.with_name(self.path.name + ".wal")
        return wal.stat().st_size if wal.exists() else 0

    def checkpoint(self, at_least: int = CHECKPOINT_WAL) -> float | None:
        """Writes the WAL into the file once it holds ``at_least`` bytes: between two writes of
        the store (none starts meanwhile), outside ``Kept.writing`` (it changes no data, and the
        reports' reads go on during it). The milliseconds it took, or None when not due."""
        if self.wal_bytes() < at_least:
            return None
        with self._write:
            started = time.perf_counter()
            cursor = self._con.cursor()
            try:
                cursor.execute("CHECKPOINT")
            finally:
                cursor.close()
        return (time.perf_counter() - started) * 1000

    def size_bytes(self) -> int:
        return (self.path.stat().st_size if self.path.exists() else 0) + self.wal_bytes()

    def close(self) -> None:
        with self._write:
            try:
                KeptDays.closing(self._con)  # the kept days match the data as it is now
            except duckdb.Error:
                log.exception("the kept days' mark was not written: they are read again at the next start")
            self._con.close()


def copy_tables(con: duckdb.DuckDBPyConnection, target: Path) -> list[Path]:
    """Every store table as ``target/<table>.parquet``, in one transaction (one snapshot)."""
    target.mkdir(parents=True, exist_ok=True)
    written = []
    cursor = con.cursor()
    try:
        cursor.execute("BEGIN TRANSACTION")
        try:
            for table in TABLES:
                path = target / f"{table}.parquet"
                copy = f"COPY (SELECT * FROM {table}) TO '{path_literal(path)}'"  # noqa: S608 (fixed names)
                cursor.execute(copy + " (FORMAT parquet, COMPRESSION zstd)")
                written.append(path)
        finally:
            cursor.execute("ROLLBACK")  # nothing was changed: the read transaction just ends
    finally:
        cursor.close()
    return written


def _set_state(cursor: duckdb.DuckDBPyConnection, name: str, value: int) -> None:
    cursor.execute(
        "INSERT INTO store_state VALUES ($name, $value) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        {"name": name, "value": value},
    )
