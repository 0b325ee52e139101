"""The reports ``sightline.reports.raw`` answers (same definitions, same figures), from the copy.

Visits are selected as raw.py says: started in the span and matching every filter, which the
copy answers from each visit's row alone (its pages and custom events are lists in it).
Filtered pages and events tables unnest those lists of the selected visits; unfiltered ones
count the span's events and count distinct visitors only for the rows shown.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from sightline.reports.columns.sync import micros
from sightline.reports.raw import VISIT_COLUMNS, Filters, Span
from sightline.reports.rollup import PAGEVIEW

Cursor = duckdb.DuckDBPyConnection
VISIT_SUMS = (
    "count(DISTINCT vk) AS visitors, count(*) AS visits, coalesce(sum(pageviews), 0) AS pageviews, "
    "coalesce(sum(CASE WHEN pageviews <= 1 THEN 1 ELSE 0 END), 0) AS bounces, "
    "coalesce(sum(duration), 0) AS duration"
)
FIGURES = ("visitors", "visits", "pageviews", "bounces", "duration")
COLUMN_NAMES = {dim: dim for dim in VISIT_COLUMNS}  # the copy names its visit columns by dimension


class Where:
    """A WHERE clause with its named parameters, built from fixed SQL and bound values only."""

    def __init__(self, site_id: int, span: Span) -> None:
        self.params: dict[str, Any] = {"site": site_id, "a": micros(span[0]), "b": micros(span[1])}

    def bind(self, name: str, value: Any) -> str:
        self.params[name] = value
        return f"${name}"

    def selected(self, filters: Filters) -> str:
        """The visits the filters select (the SQL of ``raw.selected``)."""
        parts = ["site_id = $site", "started >= $a", "started < $b"]
        if filters.source is not None:
            parts.append(f"source = {self.bind('source', filters.source)}")
        if filters.page is not None:
            parts.append(f"list_contains(pages, {self.bind('page', filters.page)})")
        if filters.event is not None:
            parts.append(f"list_contains(events, {self.bind('event', filters.event)})")
        return " AND ".join(parts)

    def events(self, filters: Filters, *extra: str) -> str:
        """The span's events; with filters every event of the selected visits (all after ``a``)."""
        if not filters:
            return " AND ".join(["site_id = $site", "t >= $a", "t < $b", *extra])
        chosen = f"sk IN (SELECT sk FROM visits WHERE {self.selected(filters)})"
        return " AND ".join(["site_id = $site", "t >= $a", chosen, *extra])


def _figures(row: Sequence[Any]) -> dict[str, int]:
    return {**{name: int(x) for name, x in zip(FIGURES, row, strict=True)}, "events": 0}


def totals(cur: Cursor, site_id: int, span: Span, filters: Filters) -> dict[str, int]:
    where = Where(site_id, span)
    row = cur.execute(
        f"SELECT {VISIT_SUMS} FROM visits WHERE {where.selected(filters)}", where.params
    ).fetchone()
    assert row is not None
    figures = _figures(row)
    if not filters:  # as the rollups count them: visitors and pageviews of the events in the span
        plain = Where(site_id, span)
        visitors, pageviews = cur.execute(
            f"SELECT count(DISTINCT vk), count(*) FILTER (WHERE name = '{PAGEVIEW}') "
            f"FROM hits WHERE {plain.events(filters)}",
            plain.params,
        ).fetchone() or (0, 0)
        figures.update(visitors=int(visitors), pageviews=int(pageviews))
    return figures


def _buckets(where: Where, spans: Sequence[Span]) -> str:
    where.bind("lo", [micros(a) for a, _ in spans])
    where.bind("hi", [micros(b) for _, b in spans])
    return "(SELECT unnest($lo) AS lo, unnest($hi) AS hi, generate_subscripts($lo, 1) AS i)"


def series(cur: Cursor, site_id: int, spans: Sequence[Span], filters: Filters) -> list[dict[str, int]]:
    """Figures per span: the selected visits grouped by the span their start falls in."""
    if not spans:
        return []
    where = Where(site_id, (spans[0][0], spans[-1][1]))
    buckets = _buckets(where, spans)
    points = [_figures((0, 0, 0, 0, 0)) for _ in spans]
    query = (
        f"SELECT b.i, {VISIT_SUMS} FROM (SELECT * FROM visits WHERE {where.selected(filters)}) v "
        f"JOIN {buckets} b ON v.started >= b.lo AND v.started < b.hi GROUP BY b.i"
    )
    for i, *row in cur.execute(query, where.params).fetchall():
        points[int(i) - 1] = _figures(row)
    if not filters:  # visitors and pageviews of the events in each span
        for point in points:
            point["visitors"] = point["pageviews"] = 0
        plain = Where(site_id, (spans[0][0], spans[-1][1]))
        buckets = _buckets(plain, spans)
        query = (
            f"SELECT b.i, count(DISTINCT h.vk), count(*) FILTER (WHERE h.name = '{PAGEVIEW}') "
            f"FROM (SELECT vk, t, name FROM hits WHERE {plain.events(filters)}) h "
            f"JOIN {buckets} b ON h.t >= b.lo AND h.t < b.hi GROUP BY b.i"
        )
        for i, visitors, pageviews in cur.execute(query, plain.params).fetchall():
            points[int(i) - 1].update(visitors=int(visitors), pageviews=int(pageviews))
    return points


def breakdown(
    cur: Cursor,
    site_id: int,
    span: Span,
    filters: Filters,
    dim: str,
    order: str,
    limit: int,
    prefix: str | None = None,
) -> tuple[list[dict[str, Any]], bool]:
    if dim in VISIT_COLUMNS:
        rows = _visit_breakdown(cur, site_id, span, filters, dim, order, limit)
    elif dim == "prop":
        rows = _ranked(cur, Where(site_id, span), filters, "props", "value", prefix or "", limit)
    elif filters:
        rows = _listed(cur, Where(site_id, span), filters, dim, limit)
    elif dim == "page":
        rows = _ranked(cur, Where(site_id, span), filters, "hits", "path", None, limit)
    else:
        rows = _ranked(cur, Where(site_id, span), filters, "hits", "name", None, limit)
    return rows[:limit], len(rows) > limit


def _visit_breakdown(
    cur: Cursor, site_id: int, span: Span, filters: Filters, dim: str, order: str, limit: int
) -> list[dict[str, Any]]:
    column = COLUMN_NAMES[dim]
    if order not in FIGURES:
        raise ValueError(f"unknown order {order!r}")
    where = Where(site_id, span)
    condition = where.selected(filters)
    if dim.startswith("utm_"):
        condition += f" AND {column} != ''"
    elif dim in ("entry", "exit"):
        condition += f" AND {column} IS NOT NULL"
    query = (
        f"SELECT {column} AS value, {VISIT_SUMS} FROM visits WHERE {condition} "
        f"GROUP BY {column} ORDER BY {order} DESC, {column} LIMIT {int(limit) + 1}"
    )
    out = []
    for value, *figures in cur.execute(query, where.params).fetchall():
        row = _figures(figures)
        if dim == "exit":
            row["bounces"] = row["duration"] = 0
        out.append({"value": value, **row})
    return out


def _listed(cur: Cursor, where: Where, filters: Filters, dim: str, limit: int) -> list[dict[str, Any]]:
    """Pages or custom events of the selected visits, from the lists in their rows."""
    values, counts, count_name = (
        ("pages", "page_views", "pageviews") if dim == "page" else ("events", "event_counts", "events")
    )
    query = (
        f"SELECT value, sum(n) AS total, count(DISTINCT vk) FROM ("
        f"SELECT vk, unnest({values}) AS value, unnest({counts}) AS n "
        f"FROM visits WHERE {where.selected(filters)}) "
        f"GROUP BY value ORDER BY total DESC, value LIMIT {int(limit) + 1}"
    )
    out = []
    for value, total, visitors in cur.execute(query, where.params).fetchall():
        row = {"value": value, "visitors": int(visitors), "visits": 0, "pageviews": 0, "events": 0}
        row.update(bounces=0, duration=0)
        row[count_name] = int(total)
        out.append(row)
    return out


def _ranked(
    cur: Cursor, where: Where, filters: Filters, table: str, column: str, prefix: str | None, limit: int
) -> list[dict[str, Any]]:
    """Pages, custom events or props ranked by count; distinct visitors only for the rows shown."""
    if table == "props":
        extra = f"name = {where.bind('name', (prefix or '')[:-1])}"
        count_name = "events"
    elif column == "path":
        extra, count_name = f"name = '{PAGEVIEW}'", "pageviews"
    else:
        extra, count_name = f"name != '{PAGEVIEW}'", "events"
    condition = where.events(filters, extra)
    top = cur.execute(
        f"SELECT {column}, count(*) AS n FROM {table} WHERE {condition} "
        f"GROUP BY {column} ORDER BY n DESC, {column} LIMIT {int(limit) + 1}",
        where.params,
    ).fetchall()
    if not top:
        return []
    shown = where.bind("shown", [value for value, _ in top])
    visitors = dict(
        cur.execute(
            f"SELECT {column}, count(DISTINCT vk) FROM {table} "
            f"WHERE {condition} AND list_contains({shown}, {column}) GROUP BY {column}",
            where.params,
        ).fetchall()
    )
    out = []
    for value, count in top:
        row = {"value": value, "visitors": int(visitors.get(value, 0)), "visits": 0, "pageviews": 0}
        row.update(events=0, bounces=0, duration=0)
        row[count_name] = int(count)
        out.append(row)
    return out
