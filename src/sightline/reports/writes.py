"""Writing a folded batch: the rows each rollup table needs, then one executemany per table.

``Totals`` holds what one batch adds per rollup key. ``plan`` reads the existing rows of the
keys a batch touches (by bucket ranges, a few queries) and computes their new values (summed
counters, merged sketches); ``apply`` writes them with the driver's ``executemany`` (no per-row
SQLAlchemy work). ``local_totals`` derives the whole-site local-day rows (``localdays``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, select

from sightline.reports import localdays
from sightline.reports.sketch import Sketch, merge_all

Key = tuple[int, str, int, str]  # site_id, dim, hour, value


def _at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _sqlite_stamp(seconds: float) -> str:
    """The text UTCDateTime stores in SQLite (naive UTC with microseconds)."""
    return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


@dataclass
class Totals:
    """The figures one batch adds to each rollup key."""

    counts: dict[Key, list[int]] = field(default_factory=dict)  # pageviews, events, visits, bounces, duration
    visitors: dict[Key, set[int]] = field(default_factory=dict)

    def add(self, key: Key, pageviews: int, evts: int, visitor: int) -> None:
        row = self.counts.get(key)
        if row is None:
            row = self.counts[key] = [0, 0, 0, 0, 0]
            self.visitors[key] = set()
        row[0] += pageviews
        row[1] += evts
        self.visitors[key].add(visitor)

    def add_visit(self, key: Key, visits: int, bounces: int, duration: int) -> None:
        row = self.counts.get(key)
        if row is None:
            row = self.counts[key] = [0, 0, 0, 0, 0]
            self.visitors[key] = set()
        row[2] += visits
        row[3] += bounces
        row[4] += duration


def _runs(buckets: list[int], gap: int = 2) -> list[tuple[int, int]]:
    """Sorted buckets as a few [lo, hi] ranges (a batch touches a handful of nearby hours)."""
    runs: list[tuple[int, int]] = []
    for bucket in buckets:
        if runs and bucket - runs[-1][1] <= gap:
            runs[-1] = (runs[-1][0], bucket)
        else:
            runs.append((bucket, bucket))
    return runs


Plan = tuple[list[dict[str, Any]], list[dict[str, Any]]]  # rows to insert, rows to update


def local_totals(totals: Totals, zones: dict[int, tuple[str, str | None]]) -> tuple[Totals, dict[int, str]]:
    """The batch's whole-site figures per local day, for sites whose local days are built for
    their zone; and the sites whose local days must be (re)built."""
    local = Totals()
    stale: dict[int, str] = {}
    now = int(time.time()) // 3600
    for site_id, (zone, built) in zones.items():
        if zone != "UTC" and built != zone and localdays.local_day(zone, now) is not None:
            stale[site_id] = zone
    for (site_id, dim, hour, _), row in totals.counts.items():
        if dim != "total" or site_id not in zones:
            continue
        zone, built = zones[site_id]
        day = localdays.local_day(zone, hour) if built == zone else None
        if day is None:
            continue
        key = (site_id, localdays.LOCAL, day, zone)
        target = local.counts.setdefault(key, [0, 0, 0, 0, 0])
        local.visitors.setdefault(key, set()).update(totals.visitors[(site_id, dim, hour, "")])
        for i in range(5):
            target[i] += row[i]
    return local, stale


def plan(conn: Connection, table: Any, totals: Totals) -> Plan:
    """The rows of ``table`` once ``totals`` are added: merged sketches and summed counters."""
    c = table.c
    by_site: dict[int, list[tuple[str, int, str]]] = {}
    for site_id, dim, bucket, value in totals.counts:
        by_site.setdefault(site_id, []).append((dim, bucket, value))
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    for site_id, keys in by_site.items():
        existing: dict[tuple[str, int, str], Any] = {}
        wanted = set(keys)
        dims = sorted({k[0] for k in keys})
        for lo, hi in _runs(sorted({k[1] for k in keys})):
            query = select(
                c.dim, c.bucket, c.value, c.pageviews, c.events, c.visits, c.bounces, c.duration, c.visitors
            ).where(c.site_id == site_id, c.dim.in_(dims), c.bucket >= lo, c.bucket <= hi)
            for row in conn.execute(query):
                key = (row[0], row[1], row[2])
                if key in wanted:
                    existing[key] = row
        for dim, bucket, value in keys:
            add = totals.counts[(site_id, dim, bucket, value)]
            hashes = totals.visitors[(site_id, dim, bucket, value)]
            old = existing.get((dim, bucket, value))
            if old is None:
                sketch = Sketch.of(hashes).dump() if hashes else None
                inserts.append(
                    {
                        "site_id": site_id,
                        "dim": dim,
                        "bucket": bucket,
                        "value": value,
                        "pageviews": add[0],
                        "events": add[1],
                        "visits": add[2],
                        "bounces": add[3],
                        "duration": add[4],
                        "visitors": sketch,
                    }
                )
                continue
            sketch_blob = old[8]
            if hashes:
                sketch_blob = merge_all([old[8], Sketch.of(hashes).dump()]).dump()
            updates.append(
                {
                    "k_site": site_id,
                    "k_dim": dim,
                    "k_bucket": bucket,
                    "k_value": value,
                    "pageviews": old[3] + add[0],
                    "events": old[4] + add[1],
                    "visits": old[5] + add[2],
                    "bounces": old[6] + add[3],
                    "duration": old[7] + add[4],
                    "visitors": sketch_blob,
                }
            )
    return inserts, updates


def apply(conn: Connection, table: Any, inserts: list[dict[str, Any]], updates: list[dict[str, Any]]) -> None:
    names = ("pageviews", "events", "visits", "bounces", "duration", "visitors")
    keys_of = ("site_id", "dim", "bucket", "value")
    if inserts:
        columns = keys_of + names
        many(
            conn,
            f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({{marks}})",  # noqa: S608 (fixed names, bound values)
            columns,
            [tuple(row[n] for n in columns) for row in inserts],
        )
    if updates:
        sets = ", ".join(f"{n} = {{mark}}" for n in names)
        where = " AND ".join(f"{n} = {{mark}}" for n in keys_of)
        many(
            conn,
            f"UPDATE {table.name} SET {sets} WHERE {where}",  # noqa: S608 (fixed names, bound values)
            names,
            [tuple(row[n] for n in (*names, "k_site", "k_dim", "k_bucket", "k_value")) for row in updates],
        )


def many(conn: Connection, template: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    """One DBAPI executemany (no per-row SQLAlchemy work: a batch writes thousands of rows).

    ``template`` holds only fixed table and column names; ``{mark}`` is one placeholder of the
    driver's style and ``{marks}`` one per column; every value is a bound parameter.
    """
    mark = "?" if conn.dialect.name == "sqlite" else "%s"
    sql = template.replace("{marks}", ", ".join(mark for _ in columns)).replace("{mark}", mark)
    conn.exec_driver_sql(sql, rows)


def values_of(
    conn: Connection, row: dict[str, Any], columns: tuple[str, ...], times: set[str]
) -> tuple[Any, ...]:
    """The row's values in ``columns`` order; epoch seconds in ``times`` become the stored timestamp."""
    stamp = _sqlite_stamp if conn.dialect.name == "sqlite" else _at
    return tuple(stamp(row[n]) if n in times and row[n] is not None else row[n] for n in columns)
