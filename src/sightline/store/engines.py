"""The store's two engines behind one small interface: read a query's rows, write one fed batch.

``Embedded`` is a DuckDB file in the data directory, owned by the store process alone: a batch
(its events, the new rows of the visits it touched, their sites' visit counts, the watermark) is
one DuckDB transaction, so it is written exactly once even when the process is killed halfway.
A file of an older layout is brought up to date in place (``store.upgrade``); when it cannot be
read, or was made in a layout with no upgrade, it is moved aside (never deleted: with a trimmed
log it holds events nothing else has) and rebuilt from the log; ``copy_tables`` writes it out for
backups.
``ClickHouse`` talks to a server (or, in tests, the embedded chDB engine) through
clickhouse-connect. ClickHouse has no transaction across tables, so a batch is written with
deduplication tokens named after its id range, and the range is recorded before it is written:
after a crash the same range is written again, and ClickHouse drops what already arrived. Its
sites' visit counts are written last: a batch cut short before them is built again from a store
whose counts have not moved (the same numbers for its new visits), and one cut after them finds
every visit it numbered.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sightline.settings import values
from sightline.store import schema, upgrade, wire
from sightline.store.changes import Changes, Spans
from sightline.store.dialects import CLICKHOUSE, DUCKDB
from sightline.store.engine import Engine
from sightline.store.kept_selections import Kept, Span

__all__ = ["ClickHouse", "Embedded", "Engine"]
log = logging.getLogger("sightline.store")

FILE_NAME = "store.duckdb"
# Every table of the embedded store.
TABLES = ("store_meta", "store_state", "events", "visits", "visit_counts")
WATERMARK = "watermark"
ORDERED = "ordered_until"  # store.ordering: rows before this time are in site order


class StoreBusyError(RuntimeError):
    """Another process holds the embedded store's file."""


class Embedded:
    """DuckDB in ``DATA_DIR/store.duckdb``."""

    dialect = DUCKDB
    name = "duckdb"

    def __init__(self, directory: Path, memory_mb: int) -> None:
        self.path = directory / FILE_NAME
        self.memory_mb = memory_mb
        self._write = threading.Lock()
        self._con = self._open()
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
            # the CPU of the other way (docs/performance.md, session 9). Joins keep their sides.
            "disabled_optimizers": "build_side_probe_side",
        }
        con = duckdb.connect(str(self.path), config=config)
        try:
            made = self._made_by(con)
            if made is not None and made[0] in upgrade.UPGRADABLE:  # DuckDB reads older files itself
                upgrade.upgrade_duckdb(con, made[0])
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
        with self._write, self.kept.writing():
            cursor = self._con.cursor()
            try:
                cursor.execute(sql, params or {})
            finally:
                cursor.close()
            self.changes.record(changed)

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
        ``changed``: the sites and hours they change (``Feeder.build``)."""
        event_rows = events  # noqa: F841 (read by DuckDB by its name)
        visit_rows = visits  # noqa: F841
        with self._transaction(changed, removed=False, watermark=last) as cursor:
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
        self, changed: Spans | None = None, removed: bool = True, watermark: int | None = None
    ) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor in a transaction of its own, committed at the end or rolled back on any error;
        one writer at a time. ``changed``: it changes the store's data there, recorded once it
        committed (``store.changes``; no kept selection is handed out meanwhile, ``Kept.writing``)."""
        with self._write, self.kept.writing() if changed is not None else nullcontext():
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
            if changed is not None:
                self.changes.record(changed, removed, watermark)

    def reset(self) -> None:
        with self._write, self.kept.writing():
            for table in ("events", "visits", "visit_counts", "store_state"):
                self._con.execute(f"DELETE FROM {table}")  # noqa: S608 (fixed names)
            self._con.execute("CHECKPOINT")
            self.changes.record(None)

    def export(self, target: Path) -> list[Path]:
        """Every table as Parquet files in ``target``, from one snapshot (``store.snapshot``)."""
        return copy_tables(self._con, target)

    def size_bytes(self) -> int:
        return sum(
            p.stat().st_size for p in (self.path, self.path.with_name(self.path.name + ".wal")) if p.exists()
        )

    def close(self) -> None:
        with self._write:
            self._con.close()


class ClickHouse:
    """A ClickHouse server or cluster (``clickhouse://``), or chDB in tests (``chdb://``). Every
    request goes through ``wire.call``: sent again after a passing fault, named when it fails."""

    dialect = CLICKHOUSE
    name = "clickhouse"

    def __init__(self, url: str, cluster: str | None = None) -> None:
        import clickhouse_connect  # a dependency only this engine needs at run time

        self._lock = threading.Lock()
        self.embedded = url.startswith("chdb://")  # chDB in tests: no HTTP, no external data
        if self.embedded:
            values.events_url(url)  # refused unless Sightline's own tests allow it
        dsn = url if self.embedded else url.replace("clickhouse://", "http://", 1)
        self._client = wire.call("connect", lambda: clickhouse_connect.get_client(dsn=dsn))
        for statement in schema.clickhouse(cluster):
            self._command("create the tables", statement)
        # An older layout first (a cluster's is its operator's), then any attribute added since.
        if upgrade.upgrade_clickhouse(self._mutate, self._layout(), *self._events_table()):
            self._mark_layout()
        for statement in schema.added_attributes("clickhouse", cluster):
            self._command("add the new visit attributes", statement)
        upgrade.refresh_clickhouse(self.query, self._mutate)
        self.changes = Changes(self.watermark())

    def _command(self, what: str, sql: str, **options: Any) -> None:
        with self._lock:
            wire.call(what, lambda: self._client.command(sql, **options))

    def _mutate(self, what: str, sql: str) -> None:
        """A statement whose mutation is waited for on every replica."""
        self._command(what, sql, settings={"mutations_sync": 2})

    def _layout(self) -> int:
        """The layout the tables were brought up to (``schema.LAYOUT``; 0: none recorded)."""
        rows = self.query(
            "SELECT argMax(value, at) FROM store_state WHERE name = {name:String} GROUP BY name",
            {"name": schema.LAYOUT},
        )
        return int(rows[0][0]) if rows else 0

    def _events_table(self) -> tuple[bool, bool]:
        """Whether ``events`` lacks the ``channel`` column, and whether it is a cluster's
        ``Distributed`` table."""
        rows = self.query(
            "SELECT engine, (SELECT count() FROM system.columns WHERE database = currentDatabase() "
            "AND table = 'events' AND name = 'channel') FROM system.tables "
            "WHERE database = currentDatabase() AND name = 'events'",
            {},
        )
        return (not rows[0][1], rows[0][0] == "Distributed") if rows else (True, False)

    def _mark_layout(self) -> None:
        self._command(
            "record the store's layout",
            "INSERT INTO store_state SELECT {name:String}, {value:Int64}, 0, 0, now64(6)",
            parameters={"name": schema.LAYOUT, "value": schema.FORMAT},
        )

    def _result(self, sql: str, params: dict[str, Any]) -> Any:
        external = None
        if not self.embedded:  # a long list travels in the body, not as a parameter
            sql, params, external = wire.lists_as_data(sql, params)
        with self._lock:
            return wire.call(
                "a query", lambda: self._client.query(sql, parameters=params, external_data=external)
            )

    def query(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in self._result(sql, params).result_rows]

    def columns(self, sql: str, params: dict[str, Any]) -> dict[str, Any]:
        result = self._result(sql, params)  # each column of its own type (a guess mixes 64-bit keys)
        return {
            name: np.array(column, dtype=getattr(kind, "np_type", None) or object)
            for name, kind, column in zip(
                result.column_names, result.column_types, result.result_columns, strict=True
            )
        }

    def execute(self, sql: str, params: dict[str, Any] | None = None, changed: Spans | None = None) -> None:
        try:
            self._command("a statement", sql, parameters=params or None)
        finally:  # a mutation that failed may have applied to some parts
            self.changes.record(changed)

    def _state(self) -> tuple[int, int, int] | None:
        rows = self.query(
            "SELECT argMax(value, at), argMax(first, at), argMax(last, at) FROM store_state "
            "WHERE name = {name:String} GROUP BY name",
            {"name": WATERMARK},
        )
        return (int(rows[0][0]), int(rows[0][1]), int(rows[0][2])) if rows else None

    def watermark(self) -> int:
        state = self._state()
        return state[0] if state else 0

    def pending_range(self) -> tuple[int, int] | None:
        """(after, last) of the batch being written when the last feeder stopped, if unfinished."""
        state = self._state()
        if state is None or state[2] <= state[0]:
            return None
        return state[1], state[2]

    def _mark(self, value: int, first: int, last: int) -> None:
        """A row of the watermark (a second copy of it changes nothing: the newest row counts)."""
        self._command(
            f"record the watermark {value} (batch {first}-{last})",
            "INSERT INTO store_state SELECT {name:String}, {value:Int64}, {first:Int64}, "
            "{last:Int64}, now64(6)",
            parameters={"name": WATERMARK, "value": value, "first": first, "last": last},
        )

    def visits_of(self, keys: pa.Array, born_after: int) -> pa.Table:
        """The rows of these visits: the keys travel as external data in the request's body (a
        catch-up batch has up to 122,880; as a parameter they would pass the server's limits)."""
        columns = ", ".join(schema.VISIT_COLUMNS)
        sql = f"SELECT {columns} FROM visits FINAL WHERE born >= {{born:Int64}} AND session IN "  # noqa: S608
        settings = {"output_format_arrow_low_cardinality_as_dictionary": 0}
        if self.embedded:  # chDB takes parameters as a function call, with no HTTP limits
            sql += "{keys:Array(UInt64)}"
            params: dict[str, Any] = {"born": born_after, "keys": keys.to_pylist()}
            external = None
        else:
            sql += "(SELECT session FROM wanted)"
            params, external = {"born": born_after}, wire.keys_data(keys)
        with self._lock:
            table: pa.Table = wire.call(
                f"read back {len(keys)} visits",
                lambda: self._client.query_arrow(
                    sql, parameters=params, settings=settings, use_strings=True, external_data=external
                ),
            )
        return table

    def write(self, after: int, last: int, events: pa.Table, visits: pa.Table, changed: Spans) -> None:
        """Records the range first, then writes with tokens named after it, then moves the mark."""
        self._mark(after, after, last)
        token = f"sightline-{after}-{last}"
        parts = [("events", events)]
        if visits.num_rows:
            parts += [("visits", visits), ("visit_counts", visit_counts(visits))]
        try:
            with self._lock:
                for table, rows in parts:
                    self._insert(table, rows, f"{token}-{table.replace('_', '-')}", f"batch {after}-{last}")
            self._mark(last, last, last)
        finally:  # a batch cut short may have written part of its rows
            self.changes.record(changed, removed=False, watermark=last)

    def refill(
        self, site_id: int, drop: list[int], events: pa.Table, visits: pa.Table, changed: Spans
    ) -> None:
        """As ``Embedded.refill``, in steps: one cut short is found again by the next check. The
        lists are sent in parts of ``wire.LARGE`` values, so no request passes the server's limits."""
        try:
            self._refill(site_id, drop, events, visits)
        finally:  # a refill cut short may have changed part of the site
            self.changes.record(changed)

    def _refill(self, site_id: int, drop: list[int], events: pa.Table, visits: pa.Table) -> None:
        token = f"sightline-check-{uuid.uuid4().hex}"
        sessions = visits.column("session").to_pylist() if visits.num_rows else []
        for start in range(0, len(drop), wire.LARGE):
            self._command(
                f"delete the events of {len(drop)} visits of site {site_id} to feed them again",
                "DELETE FROM events WHERE site_id = {site:UInt32} AND has({drop:Array(UInt32)}, visit)",
                parameters={"site": site_id, "drop": drop[start : start + wire.LARGE]},
            )
        for start in range(0, len(sessions), wire.LARGE):
            self._command(
                f"delete {len(sessions)} visits of site {site_id} to feed them again",
                "DELETE FROM visits WHERE site_id = {site:UInt32} AND has({keys:Array(UInt64)}, session)",
                parameters={"site": site_id, "keys": sessions[start : start + wire.LARGE]},
            )
        parts = [("events", events)]
        if visits.num_rows:
            parts += [("visits", visits), ("visit_counts", visit_counts(visits))]
        with self._lock:
            for table, rows in parts:
                self._insert(
                    table, rows, f"{token}-{table.replace('_', '-')}", f"the check's refill of site {site_id}"
                )

    def _insert(self, table: str, rows: pa.Table, token: str, batch: str) -> None:
        """One table's rows of a batch, in the request's body; sent again, the server drops them
        (the token); on a cluster's Distributed table they reach the shards in this request."""
        settings = {"insert_deduplication_token": token, "insert_distributed_sync": 1}
        wire.call(
            f"insert {rows.num_rows} rows into {table} ({batch})",
            lambda: self._client.insert_arrow(table, rows, settings=settings),
        )

    def reset(self) -> None:
        for table in ("events", "visits", "visit_counts", "store_state"):
            self._command(f"empty {table}", f"TRUNCATE TABLE IF EXISTS {table}")
        self._mark_layout()  # the tables keep their layout
        self.changes.record(None)

    def close(self) -> None:
        with self._lock:
            self._client.close()


def visit_counts(visits: pa.Table) -> pa.Table:
    """The greatest visit number of each site in a batch's visit rows."""
    counts = visits.group_by("site_id").aggregate([("visit", "max")])
    return pa.table({"site_id": counts["site_id"], "visits": counts["visit_max"]})


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


def path_literal(path: Path) -> str:
    """A path inside a SQL string literal."""
    return str(path).replace("'", "''")


def open_engine(events_url: str | None, directory: Path, memory_mb: int) -> Engine:
    """The engine ``--events-url`` names: DuckDB in the data directory when it is empty."""
    if not events_url:
        return Embedded(directory, memory_mb)
    return ClickHouse(events_url)
