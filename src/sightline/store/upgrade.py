"""Bringing a store of an older layout up to the current one in place, on either engine.

A store is rebuilt from the log only when nothing else can be done: with
``--event-log-retention-days`` the log no longer holds the oldest events, and a rebuild would
lose them. So each layout change that can be made from what the store holds comes with its step
here, run when the store opens, before anything is fed or read:

- layout 5 to 6: every event and visit gets its visit's ``channel`` (``sightline.channels``),
  worked out by the rules' SQL from the source and UTM tags the row already holds (an event's
  row carries its visit's attributes, so both tables are filled from their own rows, with no
  join). DuckDB writes each table again in the current layout, by column name (so any visit
  attribute the old table lacks takes its default), in the transaction that records the new
  layout (a cut leaves the old layout whole, upgraded again at the next start); ClickHouse adds
  the column as any new visit attribute is added (``schema.added_attributes``) and fills it with
  a mutation that waits until every part is written, then records the layout in ``store_state``
  (a cut is filled again at the next start: only rows without a channel are touched). A cluster's
  tables are its operator's (``schema.cluster_layout``): it runs ``cluster_steps``
  (docs/scaling.md), and Sightline refuses to start on them until then.

The channel rules can change with a new version (a new AI assistant, say): ``store_state``
keeps a mark of the rules the stored channels were worked out by (``RULES``), and a store whose
mark differs has its channels worked out again in place when it opens (only the rows whose
channel changes are written), so that a change of the rules reaches every visit the store holds.
"""

# ruff: noqa: S608  (SQL made of fixed names and the channel rules' fixed SQL)
from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from sightline import channels
from sightline.datadir import fsync_path
from sightline.store import schema

log = logging.getLogger("sightline.store")

FILLED = ("events", "visits")  # the tables that gained ``channel`` in layout 6
UPGRADABLE = (5,)  # the layouts an embedded store is brought up from, in place
_KIND = "LowCardinality(String)"  # a visit attribute's column on ClickHouse
RULES = "channel_rules"  # store_state's row: the mark of the rules the stored channels follow
_CHANGED = f"channel != {channels.SQL}"


def rules_mark() -> int:
    """The mark of the channel rules: their SQL's hash, as a signed 64-bit integer."""
    return int.from_bytes(hashlib.sha256(channels.SQL.encode()).digest()[:8], "little", signed=True)


def refresh_duckdb(con: duckdb.DuckDBPyConnection) -> None:
    """Works the stored channels out again when the rules changed since they were (``RULES``)."""
    found = con.execute("SELECT value FROM store_state WHERE name = ?", [RULES]).fetchone()
    if found is not None and int(found[0]) == rules_mark():
        return
    started = time.perf_counter()
    con.execute("BEGIN TRANSACTION")
    try:
        if found is not None:  # none: a new store, or one just upgraded, by these rules
            for table in FILLED:
                con.execute(f"UPDATE {table} SET channel = {channels.SQL} WHERE {_CHANGED}")
        con.execute(
            "INSERT INTO store_state VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            [RULES, rules_mark()],
        )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    if found is not None:
        log.warning("the stored channels follow the new rules (%.1f s)", time.perf_counter() - started)


def refresh_clickhouse(
    query: Callable[[str, dict[str, Any]], list[tuple[Any, ...]]], command: Callable[[str, str], None]
) -> None:
    """As ``refresh_duckdb``, by mutations waited for, then the mark (a cut: done again)."""
    found = query(
        "SELECT argMax(value, at) FROM store_state WHERE name = {name:String} GROUP BY name", {"name": RULES}
    )
    if found and int(found[0][0]) == rules_mark():
        return
    if found:
        for table in FILLED:
            command(
                "work the stored channels out by the new rules",
                f"ALTER TABLE {table} UPDATE channel = {channels.SQL} WHERE {_CHANGED}",
            )
    command(
        "record the channel rules",
        f"INSERT INTO store_state SELECT '{RULES}', {rules_mark()}, 0, 0, now64(6)",
    )


def upgrade_duckdb(con: duckdb.DuckDBPyConnection, made: int) -> None:
    """Brings an embedded store of layout ``made`` (one of ``UPGRADABLE``) to ``schema.FORMAT``,
    in one transaction."""
    if made not in UPGRADABLE:
        raise ValueError(f"no upgrade from layout {made}")
    started = time.perf_counter()
    con.execute("BEGIN TRANSACTION")
    try:
        for table in FILLED:
            head = f"CREATE TABLE IF NOT EXISTS {table} ("
            definition = next(s for s in schema.DUCKDB if s.startswith(head))
            con.execute(definition.replace(head, f"CREATE TABLE {table}_upgrading (", 1))
            # By name: every column the old table has, its channel, and the defaults of any
            # attribute it lacks (the current layout's columns in their order).
            rows = f"SELECT *, {channels.SQL} AS channel FROM {table}"
            con.execute(f"INSERT INTO {table}_upgrading BY NAME {rows}")
            con.execute(f"DROP TABLE {table}")
            con.execute(f"ALTER TABLE {table}_upgrading RENAME TO {table}")
        con.execute("UPDATE store_meta SET format = ? WHERE id = 1", [schema.FORMAT])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("CHECKPOINT")
    log.warning(
        "the analytics store was upgraded in place from layout %s to %s in %.1f s",
        made,
        schema.FORMAT,
        time.perf_counter() - started,
    )


def compacting(path: Path) -> Path:
    """Where ``compact_duckdb`` writes the store again; a file left there by a cut is removed."""
    return path.with_name(path.name + ".compacting")


Connection = duckdb.DuckDBPyConnection


def compacted(con: Connection, path: Path, config: dict[str, Any]) -> Connection:
    """The just upgraded store at ``path``, written into a new file put in its place, opened again.

    An upgrade writes every row again, and DuckDB keeps the blocks it freed inside the file for
    later writes, never giving them back: the 10 M-event store of ``python -m bench reports`` came
    out of its upgrade at 725 MiB where a fresh build takes 386. A cut before the rename leaves the
    upgraded file whole (the next open removes the half-written copy); a copy that fails (a full
    disk, say) leaves it as it is, and the store works on, larger."""
    con.close()
    started, before = time.perf_counter(), path.stat().st_size
    fresh = compacting(path)
    try:
        if path.with_name(path.name + ".wal").exists():  # not checkpointed: the copy would miss it
            raise RuntimeError("the upgraded store has a write-ahead log")
        _copy(path, fresh, config)
        fresh.replace(path)
        fsync_path(path.parent)
    except (OSError, RuntimeError, duckdb.Error) as error:
        log.warning("the upgraded analytics store stays as it is, not written again compactly (%s)", error)
        for leftover in (fresh, fresh.with_name(fresh.name + ".wal")):
            leftover.unlink(missing_ok=True)
    else:
        log.warning(
            "the upgraded analytics store was written again compactly, %.0f -> %.0f MiB, in %.1f s",
            before / 2**20,
            path.stat().st_size / 2**20,
            time.perf_counter() - started,
        )
    return duckdb.connect(str(path), config=config)


def _copy(path: Path, fresh: Path, config: dict[str, Any]) -> None:
    for leftover in (fresh, fresh.with_name(fresh.name + ".wal")):
        leftover.unlink(missing_ok=True)
    con = duckdb.connect(str(fresh), config=config)
    try:
        (name,) = con.execute("SELECT current_database()").fetchone() or ("",)
        con.execute("ATTACH ? AS upgraded (READ_ONLY)", [str(path)])
        con.execute(f'COPY FROM DATABASE upgraded TO "{name}"')
        con.execute("DETACH upgraded")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    fsync_path(fresh)


def restored_columns(made: int | None, table: str) -> str:
    """What a restore selects from a copy of ``table`` made in layout ``made``, written into the
    table by name (``store.snapshot``): its columns, and the ones a later layout added."""
    return f"*, {channels.SQL} AS channel" if made in UPGRADABLE and table in FILLED else "*"


def clickhouse_steps() -> tuple[str, ...]:
    """The statements that bring ClickHouse's tables from layout 5 to 6; each may run again."""
    fills = (f"ALTER TABLE {table} UPDATE channel = {channels.SQL} WHERE channel = ''" for table in FILLED)
    return (*schema.added_attributes("clickhouse"), *fills)


def cluster_steps(cluster: str, database: str = "sightline") -> tuple[str, ...]:
    """The statements a cluster's operator runs to bring the cluster's layout
    (``schema.cluster_layout``) from layout 5 to 6 (docs/scaling.md), adding every visit attribute
    they lack (the channel, and any added since: ``schema.added_attributes``); each may run again."""
    on = f" ON CLUSTER {cluster}"
    added = ", ".join(f"ADD COLUMN IF NOT EXISTS {name} {_KIND}" for name in schema.VISIT_ATTRIBUTES)
    steps = []
    for table in FILLED:
        for name in (f"{table}_local", table):  # the shards' tables, then the Distributed one
            steps.append(f"ALTER TABLE {database}.{name}{on} {added}")
        steps.append(
            f"ALTER TABLE {database}.{table}_local{on} UPDATE channel = {channels.SQL} "
            "WHERE channel = '' SETTINGS mutations_sync = 2"
        )
    steps.append(
        f"INSERT INTO {database}.store_state VALUES ('{schema.LAYOUT}', {schema.FORMAT}, 0, 0, now64(6))"
    )
    return tuple(steps)


class ClusterLayoutError(RuntimeError):
    """A cluster's tables are of an older layout: its operator upgrades them (``cluster_steps``)."""


def upgrade_clickhouse(
    command: Callable[[str, str], None], layout: int, missing: bool, distributed: bool
) -> bool:
    """Runs ``clickhouse_steps`` through ``command(what, sql)`` (mutations waited for) unless the
    tables are at ``schema.FORMAT`` already (``layout``, from ``store_state``); True when the
    layout is then to be recorded. ``missing``: the ``events`` table has no ``channel``;
    ``distributed``: it is a cluster's ``Distributed`` table, whose shards' tables Sightline
    does not change (a new cluster has the column: its layout is recorded)."""
    if layout >= schema.FORMAT:
        return False
    if distributed:
        if missing:
            raise ClusterLayoutError(
                f"the cluster's store tables are of layout 5 and this Sightline reads layout "
                f'{schema.FORMAT}: run the upgrade statements of docs/scaling.md ("Upgrading a '
                "cluster's layout\") on the cluster, then start Sightline again"
            )
        return True
    started = time.perf_counter()
    for sql in clickhouse_steps():
        command(f"upgrade the store's layout to {schema.FORMAT}", sql)
    log.info(
        "the analytics store's tables are at layout %s (%.1f s)", schema.FORMAT, time.perf_counter() - started
    )
    return True
