"""The store's tables, for DuckDB and for ClickHouse: the same columns, each engine's own layout.

- ``events``: one row per event of the log (``id`` is the log's id), with the attributes of its
  visit as they were when the event was fed (``visit_start``, source, UTM tags, browser, OS,
  device, country, region, city): a filter on a visit attribute is a test on the event's row.
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
"""

from __future__ import annotations

PAGEVIEW = "pageview"  # the event name of a page view
FORMAT = 5  # bump when a table below changes: the embedded store is then rebuilt from the log

ATTRIBUTES = ("source", "utm_source", "utm_medium", "utm_campaign", "browser", "os", "device")
PLACES = ("country", "region", "city")
VISIT_ATTRIBUTES = (*ATTRIBUTES, *PLACES)

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

_DUCK_ATTRS = ", ".join(f"{name} VARCHAR NOT NULL" for name in VISIT_ATTRIBUTES)
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

_CH_ATTRS = ", ".join(f"{name} LowCardinality(String)" for name in VISIT_ATTRIBUTES)


def clickhouse(cluster: str | None = None) -> tuple[str, ...]:
    """The ClickHouse tables (``ON CLUSTER`` with replicated engines: docs/scaling.md)."""
    on = f" ON CLUSTER {cluster}" if cluster else ""
    merge = "ReplicatedMergeTree" if cluster else "MergeTree"
    replacing = "ReplicatedReplacingMergeTree" if cluster else "ReplacingMergeTree"
    dedup = "" if cluster else ", non_replicated_deduplication_window = 1000"
    return (
        f"CREATE TABLE IF NOT EXISTS store_state{on} (name String, value Int64, "
        f"first Int64, last Int64, at DateTime64(6)) ENGINE = {replacing}(at) ORDER BY name",
        f"CREATE TABLE IF NOT EXISTS events{on} (site_id UInt32, time Int64 CODEC(Delta, ZSTD), "
        "id Int64 CODEC(Delta, ZSTD), visitor UInt64, visit UInt32, name LowCardinality(String), "
        "path String, props Array(String), visit_start Int64 CODEC(Delta, ZSTD), "
        f"{_CH_ATTRS}) ENGINE = {merge} PARTITION BY intDiv(time, 2592000000000) "
        f"ORDER BY (site_id, time, id) SETTINGS index_granularity = 8192{dedup}",
        f"CREATE TABLE IF NOT EXISTS visits{on} (site_id UInt32, visit UInt32, session UInt64, "
        "visitor UInt64, "
        "born Int64, start Int64, last Int64, pageviews UInt32, events UInt32, entry Nullable(String), "
        "entry_at Nullable(Int64), exit Nullable(String), exit_at Nullable(Int64), "
        f"{_CH_ATTRS}, version Int64) ENGINE = {replacing}(version) "
        "PARTITION BY intDiv(born, 2592000000000) ORDER BY (site_id, born, visit)"
        f" SETTINGS index_granularity = 8192{dedup}",
        f"CREATE TABLE IF NOT EXISTS visit_counts{on} (site_id UInt32, visits UInt32) "
        f"ENGINE = {replacing}(visits) ORDER BY site_id SETTINGS index_granularity = 8192{dedup}",
    )
