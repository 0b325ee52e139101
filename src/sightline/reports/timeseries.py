"""The time series: a period's figures per span (hour or day), as the dashboard's chart shows them.

Visits, bounces and duration group the visits that started in the period by the span their start
falls in. Without filters, each span's unique visitors and pageviews are those of its events:
counted from the events themselves when the period is small (or on ClickHouse, which counts
distinct values fast), and from the visits when it is big (``_estimated``): a visit's events
all fall between its ``start`` and ``last`` (the visits table keeps both with its events), so a
visit that begins and ends in one span has all its visitor's events and its ``pageviews`` there,
and only the few visits that cross a span's edge need their events read. With filters every
figure is the selected visits', each counted whole in the span it started in.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

import bisect
from collections.abc import Sequence

from sightline.reports import counting, series_days
from sightline.reports.kept_figures import Kept
from sightline.reports.queries import (
    VIEWED,
    Filters,
    Query,
    Run,
    Span,
    bucket,
    edge_after,
    events_of,
    figures_of,
    selection,
)
from sightline.store.dialects import Dialect
from sightline.store.epoch import micros


def series(
    run: Run,
    dialect: Dialect,
    site_id: int,
    spans: Sequence[Span],
    filters: Filters,
    kept: Kept | None = None,
) -> list[dict[str, int]]:
    """Figures per span, in the order of ``spans`` (contiguous, each ``[start, end)`` in UTC); with
    ``kept``, a big period's spans that ended are kept there between requests (``series_days``)."""
    if not spans:
        return []
    if not filters and dialect.bitmap is not None:
        query = Query(dialect, site_id, (spans[0][0], spans[-1][1]), filters)
        visits, viewed = run(
            f"SELECT count(*), sum(pageviews) FROM {dialect.visits} WHERE {query.selected()}",
            query.params.values,
        )[0]
        unique = counting.visitors(dialect, int(viewed or 0), len(spans), rows=int(visits or 0))
        if unique is not counting.EXACT and kept is not None:
            return series_days.series(
                kept, site_id, spans, unique.sql, lambda part: _estimated(run, dialect, site_id, part, unique)
            )
        if unique is not counting.EXACT:
            return _estimated(run, dialect, site_id, spans, unique)
    points = _visits(run, dialect, site_id, spans, filters)
    if not filters:
        _events(run, dialect, site_id, spans, points)
    return points


def _visits(
    run: Run, dialect: Dialect, site_id: int, spans: Sequence[Span], filters: Filters
) -> list[dict[str, int]]:
    """The selected visits' figures grouped by the span their start falls in (unique visitors
    only with filters: without, they are the events', counted apart)."""
    whole = (spans[0][0], spans[-1][1])
    unique = selection(run, dialect, site_id, whole, len(spans)) if filters else counting.EXACT
    query_parts = Query(dialect, site_id, whole, filters)
    query_parts.bound(run)
    query_parts.keep(run)
    points = [figures_of((0, 0, 0, 0, 0)) for _ in spans]
    sums = ", ".join(query_parts.sums(visitors=bool(filters), unique=unique))
    query = (
        f"SELECT {bucket(query_parts, spans, 'start')} AS i, {sums} FROM {query_parts.chosen()} GROUP BY i"
    )
    for index, visitors, *row in run(query, query_parts.params.values):
        points[int(index) - 1] = figures_of((unique.read(visitors), *row))
    return points


def _events(
    run: Run, dialect: Dialect, site_id: int, spans: Sequence[Span], points: list[dict[str, int]]
) -> None:
    """Each span's unique visitors (exact) and pageviews, from its events."""
    query_parts = Query(dialect, site_id, (spans[0][0], spans[-1][1]), Filters())
    query = (
        f"SELECT {bucket(query_parts, spans, 'time')} AS i, count(DISTINCT visitor), "
        f"sum(CASE WHEN {VIEWED} THEN 1 ELSE 0 END) FROM events WHERE {query_parts.events()} GROUP BY i"
    )
    for point in points:
        point["visitors"] = point["pageviews"] = 0
    for index, visitors, pageviews in run(query, query_parts.params.values):
        points[int(index) - 1].update(visitors=int(visitors or 0), pageviews=int(pageviews or 0))


def _estimated(
    run: Run, dialect: Dialect, site_id: int, spans: Sequence[Span], unique: counting.Visitors
) -> list[dict[str, int]]:
    """Every figure of each span from the visits that started in it, plus the events of the visits
    that cross a span's edge (begun before the period, or ending in a later span than they
    began): their visitor sets a bit in the span of each of their events, and their pageviews
    count in the span of each pageview instead of all in their start's. For 30 days of 5 M events
    (1.5 M visits), a few thousand visits cross a midnight: their events are read from the
    stretches of time they cover, not from the whole period. Pageviews exact, visitors as exact as
    the bitmap, and no visitor missed when a visit's events reached the server out of order."""
    query_parts = Query(dialect, site_id, (spans[0][0], spans[-1][1]), Filters())
    crossing = run(
        f"SELECT visit, start, last, pageviews FROM {dialect.visits} WHERE "
        f"site_id = {query_parts.site} AND start < {query_parts.high} "
        f"AND last >= {query_parts.low} AND (start < {query_parts.low} OR last >= "
        f"{query_parts.high} OR last >= {edge_after(query_parts, spans, 'start')})",
        query_parts.params.values,
    )
    query_parts = Query(dialect, site_id, (spans[0][0], spans[-1][1]), Filters())
    rows = (
        f"SELECT {bucket(query_parts, spans, 'start')} AS i, visitor, "
        f"1 AS n, pageviews AS pv, {query_parts.bounce()} AS bounce, "
        f"{query_parts.duration()} AS duration FROM {dialect.visits} WHERE {query_parts.selected()}"
    )
    points = [figures_of((0, 0, 0, 0, 0)) for _ in spans]
    if crossing:
        first = micros(spans[0][0])
        edges = [micros(a) for a, _ in spans]
        for _, start, _, pageviews in crossing:  # their pageviews count where each pageview is
            if int(start) >= first:
                points[bisect.bisect_right(edges, int(start)) - 1]["pageviews"] -= int(pageviews)
        rows += (
            f" UNION ALL SELECT {bucket(query_parts, spans, 'time')} AS i, visitor, 0, "
            f"CASE WHEN {VIEWED} THEN 1 ELSE 0 END, 0, 0 FROM ({events_of(query_parts, crossing)}) AS e"
        )
    query = (
        f"SELECT i, {unique.sql}, sum(n), sum(pv), sum(bounce), sum(duration) FROM ({rows}) AS u GROUP BY i"
    )
    for index, visitors, *row in run(query, query_parts.params.values):
        point = points[int(index) - 1]
        figures = figures_of((unique.read(visitors), *row))
        figures["pageviews"] += point["pageviews"]
        points[int(index) - 1] = figures
    return points
