"""The ClickHouse engine, ``ClickHouse``: a server or cluster through clickhouse-connect (in tests,
the embedded chDB engine).

ClickHouse has no transaction across tables, so a batch is written with deduplication tokens named
after its id range, and the range is recorded before it is written: after a crash the same range
is written again, and ClickHouse drops what already arrived. Its sites' visit counts are written
last: a batch cut short before them is built again from a store whose counts have not moved (the
same numbers for its new visits), and one cut after them finds every visit it numbered.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

import numpy as np
import pyarrow as pa

from sightline.settings import values
from sightline.store import schema, upgrade, wire
from sightline.store.changes import Changes, Spans
from sightline.store.dialects import CLICKHOUSE
from sightline.store.engine import (
    WATERMARK,
    visit_counts,
)


class ClickHouse:
    """A ClickHouse server or cluster (``clickhouse://``), or chDB in tests (``chdb://``). Every
    request goes through ``wire.call``: sent again after a passing fault, named when it fails."""

    dialect = CLICKHOUSE
    name = "clickhouse"

    def __init__(self, url: str, cluster: str | None = None) -> None:
        import clickhouse_connect  # a dependency only this engine needs at run time

        self._lock = threading.Lock()
        self.cluster = cluster
        self.embedded = url.startswith("chdb://")  # chDB in tests: no HTTP, no external data
        if self.embedded:
            values.events_url(url)  # refused unless Sightline's own tests allow it
        dsn = url if self.embedded else url.replace("clickhouse://", "http://", 1)
        self._client = wire.call("connect", lambda: clickhouse_connect.get_client(dsn=dsn))
        # Tables this start creates are at the newest layout as made: their layout is recorded
        # without the upgrade's steps and the added attributes' statements, which would find every
        # column there and every channel filled (some 70 statements, each a round trip and a change
        # of the tables' metadata on the server). A cluster's tables are its operator's.
        made = cluster is None and not self._present()
        for statement in schema.clickhouse(cluster):
            self._command("create the tables", statement)
        if made:
            self._mark_layout()
        else:
            # An older layout first (a cluster's is its operator's), then any attribute added since.
            if upgrade.upgrade_clickhouse(self._mutate, self._layout(), *self._events_table()):
                self._mark_layout()
            for statement in schema.added_attributes("clickhouse", cluster, self._present()):
                self._command("add the new visit attributes", statement)
        upgrade.refresh_clickhouse(self.query, self._mutate)
        self.changes = Changes(self.watermark())

    def _command(self, what: str, sql: str, **options: Any) -> None:
        with self._lock:
            wire.call(what, lambda: self._client.command(sql, **options))

    def _mutate(self, what: str, sql: str) -> None:
        """A statement whose mutation is waited for on every replica."""
        self._command(what, sql, settings={"mutations_sync": 2})

    def _present(self) -> set[tuple[str, str]]:
        """(table, column) of the columns the database's tables have (none: a new store). On a
        cluster, nothing: a column this node's table has may be missing on another's, and each
        ``ADD COLUMN IF NOT EXISTS ... ON CLUSTER`` reaches them all."""
        if self.cluster is not None:
            return set()
        rows = self.query("SELECT table, name FROM system.columns WHERE database = currentDatabase()", {})
        return {(str(table), str(name)) for table, name in rows}

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
