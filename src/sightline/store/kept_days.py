"""The overview's figures of ended spans, kept beside the embedded store's file they are the figures
of, so that they outlive the process: after a restart the overview reads them instead of every
event of its periods (``reports.overview_days``).

A row is one site's span (its UTC ``[low, high)``: a whole local day, or a period's whole days
together): its pageviews, its visitors' count and the name of a file in ``DIRECTORY`` beside the
store's file holding their sorted, unique keys (8 bytes each, little-endian, then a check word),
read only where a union needs them (a day's count is enough for its point of the series). The
keys are files, not a column: a server reads every site's days at its start, and reading 30 M
keys from files takes it a tenth of what reading them from the table and through the store's
pipe took. Only the store process writes the table, and a row present is always the figures of
the events as the store holds them:

- **every write of the store's data** deletes, in its own transaction, the rows whose span it
  changed: the spans it records in ``store.changes`` (every row when it changed everything: a
  rebuild), and their files once it committed. A write that lands after the last row's end (the
  hour going on) deletes nothing and costs nothing;
- **a row is added** (``put``) by the server that read its figures and wrote its keys' file
  (``kept_files.Files.save``), with the change number it read them at
  (``reports.kept_figures.Seen``): the store adds it only when it comes from this process's
  change records (the same ``epoch``) and no change of the site after that number touched its
  span, checked under the writers' lock (a write between the read and the check is recorded
  before the lock is let go); else it deletes the file.
  A row of several days replaces the site's rows as long that end within it (yesterday's 30 days;
  not the 30 days before, which end where it starts);
- **another program's writes** (an older Sightline opening the file) delete nothing: the file
  keeps a mark of the data the rows were last known to match (the watermark and the rows of
  events and visits), written when the process closes the store, and at open a mark that differs
  (another program wrote, or this process was killed after writing) empties the table. At open,
  a file no row names (a row deleted by a process killed before it deleted the file) is deleted;
  a file whose check word does not match its keys is read as no file
  (``kept_files.KeysFile.read``).

Backups leave the table and the files out (``engine.TABLES``: they are derived): a restored store
starts without rows, and the overview reads its days from the events again.
"""

# ruff: noqa: S608  (SQL made of fixed names; every value is a bound parameter)
from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from sightline.store.changes import Changes, Spans
from sightline.store.engine import WATERMARK
from sightline.store.kept_files import Found, Row

TABLE = "kept_days"
DDL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (site_id INTEGER NOT NULL, low BIGINT NOT NULL, "
    "high BIGINT NOT NULL, pageviews BIGINT NOT NULL, visitors BIGINT NOT NULL, keys VARCHAR NOT NULL)"
)
MARK = "kept_days_mark"  # store_state's row: the mark of the data the rows match
DAY = 86_400_000_000  # µs
SAME_LENGTH = 2 * 3_600_000_000  # rows this close in length: as long (a change of clocks between)
COLUMNS = ["site_id", "low", "high", "pageviews", "visitors", "keys"]
_MATCHING = (
    "(SELECT unnest($sites) AS s, unnest($lows) AS lo, unnest($highs) AS hi) AS c "
    f"WHERE c.s = {TABLE}.site_id AND c.lo < {TABLE}.high AND c.hi > {TABLE}.low"
)


class KeptDays:
    """The table of one embedded store, opened on its connection, and its keys' files."""

    def __init__(self, con: duckdb.DuckDBPyConnection, directory: Path) -> None:
        self.files = directory
        columns = con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = $t", {"t": TABLE}
        ).fetchall()
        if columns and [c for (c,) in columns] != COLUMNS:  # an older layout: the keys in the table
            con.execute(f"DROP TABLE {TABLE}")
        con.execute(DDL)
        if _stored_mark(con) != _mark(con):
            con.execute(f"DELETE FROM {TABLE}")
        [(newest,)] = con.execute(f"SELECT max(high) FROM {TABLE}").fetchall()  # a result left open
        self.newest: int | None = int(newest) if newest is not None else None  # would hold the connection
        named = {str(name) for (name,) in con.execute(f"SELECT keys FROM {TABLE}").fetchall()}
        if directory.is_dir():
            for path in directory.iterdir():
                if path.name not in named:
                    path.unlink(missing_ok=True)

    def drop(self, cursor: duckdb.DuckDBPyConnection, changed: Spans | None) -> list[str]:
        """Deletes the rows ``changed`` touches (None: every row), in the caller's transaction;
        the names of their files, for ``unlink`` once it committed."""
        if self.newest is None:
            return []
        if changed is None:
            names = cursor.execute(f"DELETE FROM {TABLE} RETURNING keys").fetchall()
            return [str(name) for (name,) in names]
        sites, lows, highs = [], [], []
        for site_id, spans in changed.items():
            for low, high in spans:
                if int(low) < self.newest:  # a span from the last row's end on touches none
                    sites.append(int(site_id))
                    lows.append(int(low))
                    highs.append(int(high))
        if not sites:
            return []
        names = cursor.execute(
            f"DELETE FROM {TABLE} WHERE EXISTS (SELECT 1 FROM {_MATCHING}) RETURNING keys",
            {"sites": sites, "lows": lows, "highs": highs},
        ).fetchall()
        return [str(name) for (name,) in names]

    def unlink(self, names: Iterable[str]) -> None:
        """Deletes the files of rows deleted (a file left by a kill is deleted at the next open)."""
        for name in names:
            with contextlib.suppress(OSError):
                (self.files / name).unlink()

    def put(
        self, cursor: duckdb.DuckDBPyConnection, changes: Changes, epoch: str, rows: Sequence[Row]
    ) -> int:
        """Adds the rows read at a change number of this process after which no change of their
        site touched their span (the caller holds the writers' lock); how many it added. The
        files of the rows not added are deleted, and those of the rows they replace."""
        since: dict[tuple[int, int], dict[str, Any]] = {}
        chosen: list[Row] = []
        for row in rows:
            site_id, number, low, high = int(row[0]), int(row[1]), int(row[2]), int(row[3])
            if epoch != changes.epoch or high <= low or not (self.files / str(row[6])).is_file():
                self.unlink([str(row[6])])
                continue
            found = since.get((site_id, number))
            if found is None:
                found = since[(site_id, number)] = changes.since(site_id, number)
            if found["everything"] or any(a < high and b > low for _, a, b in found["spans"]):
                self.unlink([str(row[6])])
                continue
            chosen.append(row)
        if not chosen:
            return 0
        table = pa.table(
            {
                "site_id": pa.array([int(r[0]) for r in chosen], pa.int32()),
                "low": pa.array([int(r[2]) for r in chosen], pa.int64()),
                "high": pa.array([int(r[3]) for r in chosen], pa.int64()),
                "pageviews": pa.array([int(r[4]) for r in chosen], pa.int64()),
                "visitors": pa.array([int(r[5]) for r in chosen], pa.int64()),
                "keys": pa.array([str(r[6]) for r in chosen], pa.string()),
            }
        )
        cursor.execute("BEGIN TRANSACTION")
        try:
            cursor.register("kept_day_rows", table)
            replaced = cursor.execute(
                f"DELETE FROM {TABLE} WHERE EXISTS (SELECT 1 FROM kept_day_rows AS r WHERE "
                f"r.site_id = {TABLE}.site_id AND ((r.low = {TABLE}.low AND r.high = {TABLE}.high) "
                f"OR (r.high - r.low > {DAY} AND {TABLE}.high < r.high AND {TABLE}.high > r.low "
                f"AND abs(({TABLE}.high - {TABLE}.low) - (r.high - r.low)) <= {SAME_LENGTH}))) "
                "RETURNING keys"
            ).fetchall()
            cursor.execute(f"INSERT INTO {TABLE} SELECT * FROM kept_day_rows")
            cursor.unregister("kept_day_rows")
        except BaseException:
            cursor.execute("ROLLBACK")
            raise
        cursor.execute("COMMIT")
        self.unlink(str(name) for (name,) in replaced)
        newest = max(int(r[3]) for r in chosen)
        self.newest = newest if self.newest is None else max(self.newest, newest)
        return len(chosen)

    def get(self, cursor: duckdb.DuckDBPyConnection, asked: Sequence[tuple[int, int, int]]) -> list[Found]:
        """The rows of the (site, low, high) ``asked`` that the table holds, with their files' paths."""
        if not asked:
            return []
        found = cursor.execute(
            f"SELECT d.site_id, d.low, d.high, d.pageviews, d.visitors, d.keys FROM {TABLE} AS d JOIN "
            "(SELECT unnest($sites) AS s, unnest($lows) AS lo, unnest($highs) AS hi) AS w "
            "ON d.site_id = w.s AND d.low = w.lo AND d.high = w.hi",
            {
                "sites": [int(a[0]) for a in asked],
                "lows": [int(a[1]) for a in asked],
                "highs": [int(a[2]) for a in asked],
            },
        ).fetchall()
        directory = f"{self.files}{os.sep}"  # joined as text: a Path per row took 40 ms of 12,000
        return [
            (int(s), int(a), int(b), int(pv), int(count), directory + name)
            for s, a, b, pv, count, name in found
        ]

    @staticmethod
    def closing(con: duckdb.DuckDBPyConnection) -> None:
        """Writes the mark of the data as it is, which the rows match (the process closes the store)."""
        con.execute(
            "INSERT INTO store_state VALUES ($name, $value) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            {"name": MARK, "value": _mark(con)},
        )


def _stored_mark(con: duckdb.DuckDBPyConnection) -> int | None:
    found = con.execute("SELECT value FROM store_state WHERE name = $name", {"name": MARK}).fetchall()
    return int(found[0][0]) if found else None


def _mark(con: duckdb.DuckDBPyConnection) -> int:
    """The mark of the data: a hash of the watermark and of the rows of events and visits."""
    [found] = con.execute(
        "SELECT (SELECT coalesce(max(value), 0) FROM store_state WHERE name = $watermark), "
        "(SELECT count(*) FROM events), (SELECT count(*) FROM visits)",
        {"watermark": WATERMARK},
    ).fetchall()
    text = ":".join(str(int(v)) for v in found)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little", signed=True)
