"""Reports read from the rollups: a UTC span is covered by whole UTC days plus the hours at its ends.

Every figure is exact except unique visitors, which come from merged sketches (exact below 2048
visitors, within about 1 % above). A span can be read from the rollups only when it starts and
ends on a whole UTC hour (true for every zone whose offset is a whole number of hours).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, desc, func, literal_column, or_, select, union_all

from sightline.reports import localdays
from sightline.reports.sketch import merge_all
from sightline.storage.schema import report_daily, report_hourly

Span = tuple[datetime, datetime]


def aligned(*moments: datetime) -> bool:
    return all(m.minute == 0 and m.second == 0 and m.microsecond == 0 for m in moments)


def hour_of(moment: datetime) -> int:
    return int(moment.timestamp()) // 3600


@dataclass(frozen=True)
class Cover:
    """Hourly buckets [h0, h1) and [h2, h3) around the daily buckets [d0, d1)."""

    hours: tuple[tuple[int, int], ...]
    days: tuple[int, int] | None

    @classmethod
    def of(cls, span: Span) -> Cover:
        ha, hb = hour_of(span[0]), hour_of(span[1])
        d0, d1 = -(-ha // 24), hb // 24
        if d0 < d1:
            hours = tuple(r for r in ((ha, d0 * 24), (d1 * 24, hb)) if r[0] < r[1])
            return cls(hours, (d0, d1))
        return cls(((ha, hb),) if ha < hb else (), None)

    def where(self, table: Any, site_id: int, dim: str) -> Any:
        c = table.c
        if table is report_daily:
            assert self.days is not None
            ranges = [and_(c.bucket >= self.days[0], c.bucket < self.days[1])]
        else:
            ranges = [and_(c.bucket >= a, c.bucket < b) for a, b in self.hours]
        return and_(c.site_id == site_id, c.dim == dim, or_(*ranges))

    def tables(self) -> list[Any]:
        out: list[Any] = []
        if self.hours:
            out.append(report_hourly)
        if self.days:
            out.append(report_daily)
        return out


def _sums(table: Any) -> list[Any]:
    c = table.c
    return [
        func.coalesce(func.sum(c.pageviews), 0),
        func.coalesce(func.sum(c.events), 0),
        func.coalesce(func.sum(c.visits), 0),
        func.coalesce(func.sum(c.bounces), 0),
        func.coalesce(func.sum(c.duration), 0),
    ]


def totals(conn: Connection, site_id: int, span: Span) -> dict[str, int]:
    """Counters and unique visitors of the whole site over ``span``."""
    cover = Cover.of(span)
    counts = [0, 0, 0, 0, 0]
    blobs: list[bytes | None] = []
    for table in cover.tables():
        where = cover.where(table, site_id, "total")
        row = conn.execute(select(*_sums(table)).where(where)).one()
        counts = [a + int(b) for a, b in zip(counts, row, strict=True)]
        blobs += conn.execute(select(table.c.visitors).where(where)).scalars().all()
    return _figures(counts, merge_all(blobs).count())


def _cols(t: Any) -> tuple[Any, ...]:
    c = t.c
    return (c.bucket, c.pageviews, c.events, c.visits, c.bounces, c.duration, c.visitors)


def series(
    conn: Connection,
    site_id: int,
    spans: Sequence[Span],
    local_days: Sequence[int | None] | None = None,
    zone: str = "UTC",
) -> list[dict[str, int]]:
    """One set of figures per span; reads each table once over the whole period.

    ``local_days`` names, per span, the whole local day it is (or None); those spans read the
    site's local-day rows (``localdays``) when they are built for ``zone``.
    """
    if not spans:
        return []
    local: dict[int, Any] = {}
    days = [day for day in local_days or [] if day is not None]
    if days and localdays.valid(conn, site_id, zone):
        c = report_daily.c
        query = select(*_cols(report_daily)).where(
            c.site_id == site_id,
            c.dim == localdays.LOCAL,
            c.value == zone,
            c.bucket >= min(days),
            c.bucket <= max(days),
        )
        local = {row[0]: row for row in conn.execute(query)}
        spans_left = [s for s, day in zip(spans, local_days or [], strict=True) if day is None]
    else:
        days = []
        spans_left = list(spans)
    covers = [Cover.of(s) for s in spans_left]
    hourly: dict[int, Any] = {}
    daily: dict[int, Any] = {}
    need_days = [c.days for c in covers if c.days]
    need_hours = sorted(r for c in covers for r in c.hours)
    runs: list[list[int]] = []
    for a, b in need_hours:  # adjacent hour ranges read in one query
        if runs and a <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], b)
        else:
            runs.append([a, b])
    t = report_hourly
    for a, b in runs:
        query = select(*_cols(t)).where(
            t.c.site_id == site_id, t.c.dim == "total", t.c.bucket >= a, t.c.bucket < b
        )
        hourly.update((row[0], row) for row in conn.execute(query))
    if need_days:
        t = report_daily
        lo, hi = min(d[0] for d in need_days), max(d[1] for d in need_days)
        query = select(*_cols(t)).where(
            t.c.site_id == site_id, t.c.dim == "total", t.c.bucket >= lo, t.c.bucket < hi
        )
        daily = {row[0]: row for row in conn.execute(query)}
    out = []
    remaining = iter(covers)
    for day in local_days if days and local_days is not None else [None] * len(spans):
        if day is not None:
            rows = [local[day]] if day in local else []
        else:
            cover = next(remaining)
            rows = [hourly[h] for a, b in cover.hours for h in range(a, b) if h in hourly]
            if cover.days:
                rows += [daily[d] for d in range(*cover.days) if d in daily]
        counts = [sum(int(r[i]) for r in rows) for i in range(1, 6)]
        out.append(_figures(counts, merge_all(r[6] for r in rows).count() if rows else 0))
    return out


def breakdown(
    conn: Connection,
    site_id: int,
    span: Span,
    dim: str,
    order: str,
    limit: int,
    prefix: str | None = None,
) -> tuple[list[dict[str, Any]], bool]:
    """The top ``limit`` values of ``dim`` by ``order``, each with its visitors; and whether more exist."""
    cover = Cover.of(span)
    parts = []
    for table in cover.tables():
        c = table.c
        where = cover.where(table, site_id, dim)
        if prefix is not None:
            where = and_(where, func.substr(c.value, 1, len(prefix)) == prefix)
        parts.append(select(c.value, c.pageviews, c.events, c.visits, c.bounces, c.duration).where(where))
    if not parts:
        return [], False
    rows_of = union_all(*parts).subquery() if len(parts) > 1 else parts[0].subquery()
    r = rows_of.c
    sums = [
        func.sum(getattr(r, n)).label(n) for n in ("pageviews", "events", "visits", "bounces", "duration")
    ]
    query = (
        select(r.value, *sums)
        .group_by(r.value)
        .order_by(desc(literal_column(order)), r.value)
        .limit(limit + 1)
    )
    found = conn.execute(query).all()
    more = len(found) > limit
    found = found[:limit]
    sketches = _value_sketches(conn, cover, site_id, dim, [row[0] for row in found])
    out = []
    for value, *counts in found:
        figures = _figures([int(x) for x in counts], sketches.get(value, 0))
        out.append({"value": value, **figures})
    return out, more


def _value_sketches(
    conn: Connection, cover: Cover, site_id: int, dim: str, values: list[str]
) -> dict[str, int]:
    if not values:
        return {}
    blobs: dict[str, list[bytes | None]] = {v: [] for v in values}
    for table in cover.tables():
        c = table.c
        query = select(c.value, c.visitors).where(cover.where(table, site_id, dim), c.value.in_(values))
        for value, blob in conn.execute(query):
            blobs[value].append(blob)
    return {v: merge_all(b).count() for v, b in blobs.items()}


def _figures(counts: Sequence[int], visitors: int) -> dict[str, int]:
    pageviews, evts, visits, bounces, duration = counts
    return {
        "visitors": visitors,
        "visits": visits,
        "pageviews": pageviews,
        "events": evts,
        "bounces": bounces,
        "duration": duration,
    }
