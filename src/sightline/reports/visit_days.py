"""The visit tables (entry and exit pages, sources, channels, browsers, systems, devices, places...)
of a big period, from figures kept per ended day, as ``table_days`` keeps the pages table's.

A visit table counts the visits that started in the period, so its figures per value (visits,
pageviews, bounces, duration) are sums over the period's days, each day's those of the visits
that started in it (bucketed by the visit's start). Each ended day's figures per value are kept
between requests in the one layer of kept figures (``reports.kept_figures``, through
``series_days``), dropped when a write touches the day: a fed batch records the hours of the
starts of the visits it touched (and of the starts they had before), an erasure those of the
visitor's visits. The ranking is the sum, ordered as the query orders it (the figure, then the
value). The shown values' unique visitors are the union of each day's bitmap of the visitors of
the visits of that value that started in it (``day_visitors.visitors``): the very bitmap one pass
over the period's visits sets. So after a feed step a 30-day table reads the visits that started
today (and on a day a write changed since), not the period's.

Under filters the figures are those of the selected visits (``day_visitors.started_in``), kept per
filters: a visit's selection depends on its own row and events only, and a write that changes
either records the hour of its start, so a day's figures are dropped exactly when one of its
visits may have entered or left the selection (a goal's rule changing drops the site's).
Reading the period's selected visits at every request instead cost the 30-day sources table under
the page filter /pricing at 10 M events, fed at 2,000 events/s, about 100 ms p50 of the store's time.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sightline.reports import counting, day_visitors, series_days
from sightline.reports.kept_figures import Kept
from sightline.reports.queries import FIGURES, Page, Query, Run, Span, bucket

VISIT_FIGURES = FIGURES[1:]  # visits, pageviews, bounces, duration (visitors: ``table_days``)


def breakdown(
    run: Run, query: Query, column: str, where: str, order: str, page: Page, kept: Kept, days: Sequence[Span]
) -> list[tuple[Any, dict[str, int]]]:
    """The page of values (``Page.limit`` + 1 of them, from ``Page.offset``) of the visits that
    started in ``days`` (the period's spans; under ``query``'s filters, those it selects;
    ``where``: more conditions on the visit's row), ranked by ``order`` (one of
    ``VISIT_FIGURES``), then value, each with its figures and unique visitors."""
    total: dict[Any, list[int]] = {}
    counted = f"visit table {column} {where}" + (f" {query.filters!r}" if query.filters else "")
    for day in series_days.series(
        kept, query.site_id, days, counted, lambda part: _read(run, query, column, where, part)
    ):
        for value, figures in day.items():
            held = total.setdefault(value, [0] * len(VISIT_FIGURES))
            for index, figure in enumerate(figures):
                held[index] += figure
    at = VISIT_FIGURES.index(order)
    ordered = sorted(total.items(), key=lambda item: (-item[1][at], item[0] is None, item[0] or ""))
    shown = ordered[int(page.offset) : int(page.offset) + int(page.limit) + 1]
    rows = [
        (value, {"visitors": 0, **dict(zip(VISIT_FIGURES, figures, strict=True)), "events": 0})
        for value, figures in shown
    ]
    if not rows:
        return rows
    visits = [row["visits"] for _, row in rows]
    unique = counting.per_value(query.dialect, sum(visits), len(visits), room=max(visits))
    values = [value for value, _ in rows]
    people = day_visitors.visitors(run, query, column, where, values, kept, days, unique, of_visits=True)
    if not all(value in people for value in values):  # counted exactly, or over the layer's share
        people = _visitors_once(run, query, column, where, values, unique)
    for value, row in rows:
        row["visitors"] = unique.read(people.get(value))
    return rows


def _read(run: Run, query: Query, column: str, where: str, part: Sequence[Span]) -> list[dict[Any, Any]]:
    """Each day's figures per value of the (selected) visits that started in it."""
    query_parts, started = day_visitors.started_in(run, query, part)
    sums = ", ".join(query_parts.sums(visitors=False)[1:])
    sql = (
        f"SELECT {bucket(query_parts, part, 'start')} AS i, {column} AS value, {sums} FROM "
        f"{started}{where} GROUP BY i, value"
    )
    out: list[dict[Any, Any]] = [{} for _ in part]
    for day, value, *figures in run(sql, query_parts.params.values):
        out[int(day) - 1][value] = tuple(int(figure or 0) for figure in figures)
    return out


def _visitors_once(
    run: Run, query: Query, column: str, where: str, values: Sequence[Any], unique: counting.Visitors
) -> dict[Any, object]:
    """The visitors of each of ``values`` in one read of the period's visits (value -> the
    engine's count, for ``unique.read``)."""
    query_parts = Query(query.dialect, query.site_id, query.span, query.filters)
    query_parts.last, query_parts.kept = query.last, query.kept
    listed = ", ".join(query_parts.bind(value) for value in values)
    found = run(
        f"SELECT {column}, {unique.sql} FROM {query_parts.chosen()}{where} AND {column} IN ({listed}) "
        f"GROUP BY {column}",
        query_parts.params.values,
    )
    return {value: n for value, n in found}
