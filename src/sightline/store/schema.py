"""The store's tables, for DuckDB and for ClickHouse: the same columns, each engine's own layout.

- ``events``: one row per event of the log (``id`` is the log's id), with the attributes of its
  visit as they were when the event was fed (``visit_start`` and ``VISIT_ATTRIBUTES``: source,
  channel, UTM tags, browser, OS, device, country, region, city, language): a filter on a visit
  attribute is a test on the event's row. ``channel`` is the visit's channel
  (``sightline.channels``), written by the feed once per visit from its source and UTM tags, so
  that reports read it instead of working it out.
  ``props`` holds ``key\\x1fvalue`` strings; ``visitor`` is a 64-bit keyed hash, ``visit`` the
  visit's number in its site (below).
- ``visits``: one row per visit, replaced whenever a later event changes it (``version`` is the
  id of the last event folded in): start and end, pageviews, engaging events (custom events, not
  autocapture's passive ones), entry and exit page, and the attributes; ``born`` is the time of
  its first event fed (it never changes, so ClickHouse's sorting key stays put). DuckDB replaces
  the row in the feeding transaction; ClickHouse keeps the newest version (ReplacingMergeTree,
  read with FINAL). ``visit`` is the visit's number in its site, given by the feed in the order
  visits were first fed (1, 2, 3, ...): dense, so that reports join events to visits on a 32-bit
  key of a small range (and the events' column packs to a few bits a row); ``session`` is the
  64-bit keyed hash of the visit's session id, by which the feed finds the visit again.
- ``visit_counts``: per site, the last visit number given (written with the batch that gave it;
  on ClickHouse the greatest row counts, so a batch written again after a cut changes nothing).
- ``store_state``: the feed's watermark (the id of the last event fed) and, on ClickHouse, the
  range of the batch being written (so a batch cut short is written again with the same
  deduplication tokens).
Times are Int64 microseconds since the Unix epoch, UTC.

A layout's number (``FORMAT``) is kept in DuckDB's ``store_meta`` and in ClickHouse's
``store_state`` (``LAYOUT``). A store of an older layout that ``UPGRADES`` covers is brought up to
date in place when the store opens: a rebuild from the log would lose the events that the log's
trim (``--event-log-retention-days``) already removed. Another layout is rebuilt from the log.
"""

from __future__ import annotations

from collections.abc import Collection

from sightline.dimensions import STORED_ATTRIBUTES

PAGEVIEW = "pageview"  # the event name of a page view
# Bump when a table below changes, with the step that brings the previous layout up to it
# (``UPGRADES``); without one, an embedded store of the previous layout is rebuilt from the log.
FORMAT = 6
LAYOUT = "layout"  # ClickHouse's ``store_state`` row of the layout its tables were brought up to

# The visit's attributes, each a column of ``visits`` and of every event's row: the registry's
# stored visit dimensions (``sightline.dimensions``), in its order; the feed fills each one.
VISIT_ATTRIBUTES = STORED_ATTRIBUTES

EVENT_COLUMNS = (
    "site_id",
    "time",
    "id",
    "visitor",
    "visit",
    "name",
    "path",
    "props",
    "visit_start",
    *VISIT_ATTRIBUTES,
)
VISIT_COLUMNS = (
    "site_id",
    "visit",
    "session",
    "visitor",
    "born",
    "start",
    "last",
    "pageviews",
    "events",
    "entry",
    "entry_at",
    "exit",
    "exit_at",
    *VISIT_ATTRIBUTES,
    "version",
)

_DUCK_ATTRS = ", ".join(f"{name} VARCHAR NOT NULL DEFAULT ''" for name in VISIT_ATTRIBUTES)
DUCKDB = (
    "CREATE TABLE IF NOT EXISTS store_meta (id INTEGER PRIMARY KEY, format INTEGER NOT NULL, "
    "engine VARCHAR NOT NULL)",
    "CREATE TABLE IF NOT EXISTS store_state (name VARCHAR PRIMARY KEY, value BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS events (site_id INTEGER NOT NULL, time BIGINT NOT NULL, "
    "id BIGINT NOT NULL, visitor UBIGINT NOT NULL, visit UINTEGER NOT NULL, name VARCHAR NOT NULL, "
    f"path VARCHAR NOT NULL, props VARCHAR[] NOT NULL, visit_start BIGINT NOT NULL, {_DUCK_ATTRS})",
    "CREATE TABLE IF NOT EXISTS visits (site_id INTEGER NOT NULL, visit UINTEGER NOT NULL, "
    "session UBIGINT NOT NULL, visitor UBIGINT NOT NULL, born BIGINT NOT NULL, "
    "start BIGINT NOT NULL, last BIGINT NOT NULL, "
    "pageviews INTEGER NOT NULL, events INTEGER NOT NULL, entry VARCHAR, entry_at BIGINT, "
    f"exit VARCHAR, exit_at BIGINT, {_DUCK_ATTRS}, version BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS visit_counts (site_id INTEGER PRIMARY KEY, visits UINTEGER NOT NULL)",
)


def added_attributes(
    engine: str, cluster: str | None = None, present: Collection[tuple[str, str]] = ()
) -> tuple[str, ...]:
    """Each visit attribute added in place to a store made before it had the column (empty for the
    events and visits it already holds), so a new attribute never asks for a rebuild from the log:
    a no-op where the column exists. ``engine``: "duckdb" or "clickhouse"; ``present``: the
    (table, column) pairs known to exist, whose statements are left out."""
    kind = "VARCHAR DEFAULT ''" if engine == "duckdb" else "LowCardinality(String)"
    on = f" ON CLUSTER {cluster}" if cluster else ""
    return tuple(
        f"ALTER TABLE {table}{on} ADD COLUMN IF NOT EXISTS {name} {kind}"
        for table in ("events", "visits")
        for name in VISIT_ATTRIBUTES
        if (table, name) not in present
    )


_CH_ATTRS = ", ".join(f"{name} LowCardinality(String)" for name in VISIT_ATTRIBUTES)
_MONTH = 2592000000000  # 30 days in microseconds: a partition
_GRANULES = "SETTINGS index_granularity = 8192"
# Each ClickHouse table: its columns, its engine (MergeTree or ReplacingMergeTree with a version
# column) and what follows the engine. One definition for the tables Sightline creates itself and
# for a cluster's layout (docs/scaling.md is generated from ``cluster_layout``).
_CH_TABLES: dict[str, tuple[str, str, str]] = {
    "store_state": (
        "name String, value Int64, first Int64, last Int64, at DateTime64(6)",
        "at",
        "ORDER BY name",
    ),
    "events": (
        "site_id UInt32, time Int64 CODEC(Delta, ZSTD), id Int64 CODEC(Delta, ZSTD), visitor UInt64, "
        "visit UInt32, name LowCardinality(String), path String, props Array(String), "
        f"visit_start Int64 CODEC(Delta, ZSTD), {_CH_ATTRS}",
        "",
        f"PARTITION BY intDiv(time, {_MONTH}) ORDER BY (site_id, time, id) {_GRANULES}",
    ),
    "visits": (
        "site_id UInt32, visit UInt32, session UInt64, visitor UInt64, born Int64, start Int64, "
        "last Int64, pageviews UInt32, events UInt32, entry Nullable(String), entry_at Nullable(Int64), "
        f"exit Nullable(String), exit_at Nullable(Int64), {_CH_ATTRS}, version Int64",
        "version",
        f"PARTITION BY intDiv(born, {_MONTH}) ORDER BY (site_id, born, visit) {_GRANULES}",
    ),
    "visit_counts": (
        "site_id UInt32, visits UInt32",
        "visits",
        "ORDER BY site_id SETTINGS index_granularity = 8192",
    ),
}
SHARDED = ("events", "visits")  # by site: a site's events and visits live on one shard


def _engine(version: str, replicated: bool = False, path: str | None = None) -> str:
    """MergeTree, or ReplacingMergeTree(version); replicated at a Keeper ``path`` when given (else
    at the server's ``default_replica_path``)."""
    kind = ("Replicated" if replicated else "") + ("ReplacingMergeTree" if version else "MergeTree")
    args = [f"'{path}'", "'{replica}'"] if path else []
    args += [version] if version else []
    return f"{kind}({', '.join(args)})" if args else kind


def clickhouse(cluster: str | None = None) -> tuple[str, ...]:
    """The ClickHouse tables Sightline creates at start (``IF NOT EXISTS``: a cluster's own layout,
    ``cluster_layout``, is left as it is). ``cluster``: the same tables ``ON CLUSTER``, replicated."""
    statements = []
    for table, (columns, version, tail) in _CH_TABLES.items():
        on = f" ON CLUSTER {cluster}" if cluster else ""
        engine = _engine(version, replicated=bool(cluster))
        if not cluster and "SETTINGS" in tail:
            tail += ", non_replicated_deduplication_window = 1000"  # the batches' tokens
        statements.append(f"CREATE TABLE IF NOT EXISTS {table}{on} ({columns}) ENGINE = {engine} {tail}")
    return tuple(statements)


def cluster_layout(cluster: str, database: str = "sightline") -> tuple[str, ...]:
    """A cluster's tables, created by its operator (docs/scaling.md): ``events`` and ``visits``
    sharded by site (replicated ``*_local`` tables and a ``Distributed`` table over them), the
    small ``store_state`` and ``visit_counts`` replicated on every node, not sharded."""
    statements = [f"CREATE DATABASE IF NOT EXISTS {database} ON CLUSTER {cluster}"]
    for table, (columns, version, tail) in _CH_TABLES.items():
        on = f" ON CLUSTER {cluster}"
        if table in SHARDED:
            engine = _engine(version, True, f"/clickhouse/{{shard}}/{database}/{table}")
            local = f"{database}.{table}_local"
            statements.append(f"CREATE TABLE IF NOT EXISTS {local}{on} ({columns}) ENGINE = {engine} {tail}")
            statements.append(
                f"CREATE TABLE IF NOT EXISTS {database}.{table}{on} AS {database}.{table}_local "
                f"ENGINE = Distributed({cluster}, {database}, {table}_local, site_id)"
            )
        else:
            engine = _engine(version, True, f"/clickhouse/{database}/{table}")
            statements.append(
                f"CREATE TABLE IF NOT EXISTS {database}.{table}{on} ({columns}) ENGINE = {engine} {tail}"
            )
    return tuple(statements)
