"""The reports ``sightline.reports.raw`` answers (same definitions, same figures), from the copy.

Visits are selected as raw.py says: started in the span and matching every filter, which the
copy answers from each visit's row alone (its pages and custom events are lists in it).
Filtered pages and events tables unnest those lists of the selected visits; unfiltered ones
count the span's events and count distinct visitors only for the rows shown.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

import duckdb
import numpy as np

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
MAX_QUANTA = 100_000  # longest lookup list of a time series (a year in quarter hours is 35,040)


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
            parts.append(f"list_contains(pages, {self._term('page', filters.page)})")
        if filters.event is not None:
            parts.append(f"list_contains(events, {self._term('event', filters.event)})")
        return " AND ".join(parts)

    def _term(self, name: str, text: str) -> str:
        """The number of a page path or event name (NULL when never seen: nothing matches)."""
        return f"(SELECT id FROM terms WHERE text = {self.bind(name, text)})"

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


def _buckets(where: Where, spans: Sequence[Span], column: str) -> str:
    """The 1-based index of the span ``column`` falls in, as SQL: a lookup in a list of quanta
    (the spans' edges share a step, an hour or a quarter of it), else a search of the edges."""
    edges = [micros(a) for a, _ in spans] + [micros(spans[-1][1])]
    step = 0
    for edge in edges:
        step = math.gcd(step, edge - edges[0])
    if step and (edges[-1] - edges[0]) // step <= MAX_QUANTA:
        index = [
            bisect.bisect_right(edges, edges[0] + q * step) for q in range((edges[-1] - edges[0]) // step)
        ]
        where.bind("quanta", index)
        where.bind("step", step)
        return f"list_extract($quanta, CAST(({column} - $a) // $step AS INTEGER) + 1)"
    where.bind("edges", edges)
    return f"(SELECT count(*) FROM (SELECT unnest($edges) AS edge) WHERE edge <= {column})"


def series(cur: Cursor, site_id: int, spans: Sequence[Span], filters: Filters) -> list[dict[str, int]]:
    """Figures per span: the selected visits grouped by the span their start falls in."""
    if not spans:
        return []
    where = Where(site_id, (spans[0][0], spans[-1][1]))
    bucket = _buckets(where, spans, "started")
    points = [_figures((0, 0, 0, 0, 0)) for _ in spans]
    query = f"SELECT {bucket} AS i, {VISIT_SUMS} FROM visits WHERE {where.selected(filters)} GROUP BY i"
    for i, *row in cur.execute(query, where.params).fetchall():
        points[int(i) - 1] = _figures(row)
    if not filters:  # visitors and pageviews of the events in each span
        for point in points:
            point["visitors"] = point["pageviews"] = 0
        plain = Where(site_id, (spans[0][0], spans[-1][1]))
        bucket = _buckets(plain, spans, "t")
        query = (
            f"SELECT {bucket} AS i, count(DISTINCT vk), count(*) FILTER (WHERE name = '{PAGEVIEW}') "
            f"FROM hits WHERE {plain.events(filters)} GROUP BY i"
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
    column = dim  # the copy names its visit columns by dimension (``raw.VISIT_COLUMNS``' keys)
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
    """Pages or custom events of the selected visits, from the lists in their rows.

    The (term, count, visitor) rows are fetched as numpy arrays: counts per term are one
    ``bincount``, and the distinct visitors of each term shown one bitmap over visitor numbers,
    exact and several times cheaper than a distinct count per group in SQL.
    """
    values, counts, count_name = (
        ("pages", "page_views", "pageviews") if dim == "page" else ("events", "event_counts", "events")
    )
    arrays = cur.execute(
        f"SELECT unnest({values}) AS term, unnest({counts}) AS n, vid "
        f"FROM visits WHERE {where.selected(filters)}",
        where.params,
    ).fetchnumpy()
    terms = np.asarray(arrays["term"], dtype=np.int64)
    if terms.size == 0:
        return []
    totals = np.bincount(terms, weights=np.asarray(arrays["n"], dtype=np.float64))
    ranked = _top_terms(cur, totals, limit + 1)
    visitor_ids = np.asarray(arrays["vid"], dtype=np.int64)
    seen = np.zeros(int(visitor_ids.max()) + 1, dtype=np.bool_)
    out = []
    for term, text in ranked:
        seen[:] = False
        seen[visitor_ids[terms == term]] = True
        out.append(_event_row(text, int(np.count_nonzero(seen)), count_name, int(totals[term])))
    return out


def _top_terms(cur: Cursor, totals: np.ndarray, count: int) -> list[tuple[int, str]]:
    """The ``count`` terms with the highest totals, ties by text (as ORDER BY total DESC, text)."""
    present = np.flatnonzero(totals)
    if present.size > count:
        threshold = np.partition(totals[present], present.size - count)[present.size - count]
        present = present[totals[present] >= threshold]  # every tie at the edge
    texts = dict(
        cur.execute(
            "SELECT id, text FROM terms WHERE id IN (SELECT unnest($ids))", {"ids": present.tolist()}
        ).fetchall()
    )
    order = sorted(present.tolist(), key=lambda term: (-totals[term], texts[term]))
    return [(term, texts[term]) for term in order[:count]]


def _event_row(value: str, visitors: int, count_name: str, count: int) -> dict[str, Any]:
    row = {"value": value, "visitors": visitors, "visits": 0, "pageviews": 0, "events": 0}
    row.update(bounces=0, duration=0)
    row[count_name] = int(count)
    return row


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
            f"WHERE {condition} AND {column} IN (SELECT unnest({shown})) GROUP BY {column}",
            where.params,
        ).fetchall()
    )
    return [_event_row(value, int(visitors.get(value, 0)), count_name, count) for value, count in top]
