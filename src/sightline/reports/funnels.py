"""Funnels: 2 to 8 steps completed in order within one visit, as one query on the store.

A visit reaches step 1 at its first event matching it, and step k at its first event matching
step k strictly after the time it reached step k-1 (the earliest completion, which reaches the
most steps). Per step: unique visitors who reached it, and the median seconds between reaching
the previous step and this one over the visits that did. With a breakdown dimension (a visit
attribute), the same per value. Visits are those the filters select (started in the period).
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sightline.reports.filters import Filters
from sightline.reports.queries import Query, Run, Span
from sightline.reports.steps import Step, since, started
from sightline.store.dialects import Dialect

BREAKDOWN_ROWS = 10


def _sql(query: Query, steps: Sequence[Step], column: str | None) -> str:
    """Each CTE ``s{k}`` holds the visits that reached step k: its own column names at every level
    (ClickHouse resolves an alias equal to a column's name in its favour).

    Each step reads its own events from the table (``since``: of visits that may have started in
    the span), its condition pushed into the scan: no shared set of every step's events, which the
    engine would materialize whole and read once per step (a third of the CPU at 10 M events).
    Which visits started in the span is decided at step 1, on the visits grouped there rather than
    on every event (``started``).

    With a dimension, each visit carries its value's rank among the span's values (``dn``; the
    least value has the least rank, so the visit's least value is the one taken, as before) rather
    than the text, which costs more to compare, keep and group at 600,000 visits; the names are
    joined back to the few rows of the answer.
    """
    dialect = query.dialect
    dim = "min(dc)" if column else "0"
    coded = f" JOIN dn ON dv = {column}" if column else ""
    conditions = [step.condition(dialect, query.bind) for step in steps]
    ctes = [
        "s1 AS (SELECT v0 AS v1, w0 AS w1, d0 AS d1, t0 AS t1, t0 AS p1 FROM (SELECT visit AS v0, "
        f"min(visitor) AS w0, {dim} AS d0, min(time) AS t0, min(visit_start) AS b0 FROM events{coded} "
        f"WHERE {since(query)} AND {conditions[0]} GROUP BY visit) AS f WHERE {started(query, 'v0', 'b0')})",
    ]
    if column:
        values = f"SELECT DISTINCT {column} AS dv FROM events WHERE {since(query)}"
        ctes.insert(0, f"dn AS (SELECT dv, row_number() OVER (ORDER BY dv) AS dc FROM ({values}) AS n)")
    for number in range(2, len(steps) + 1):
        previous = number - 1
        reached = f"SELECT visit, time FROM events WHERE {since(query)} AND {conditions[previous]}"
        ctes.append(
            f"s{number} AS (SELECT v{previous} AS v{number}, min(w{previous}) AS w{number}, "
            f"min(d{previous}) AS d{number}, min(time) AS t{number}, min(t{previous}) AS p{number} "
            f"FROM s{previous} JOIN ({reached}) AS e ON e.visit = s{previous}.v{previous} "
            f"WHERE time > t{previous} GROUP BY v{previous})"
        )
    # Step 1 has no time from a previous step: no median (the costliest one, over every visit).
    medians = ["NULL"] + [
        dialect.median.format(value=f"(t{k} - p{k}) / 1000000.0") for k in range(2, len(steps) + 1)
    ]
    # Per step the whole funnel (``whole`` 1) and, with a dimension, each of its values (0): both
    # from the same visits of each step, which the engine finds once.
    parts = [
        f"SELECT 1 AS whole, {k} AS step, '' AS dim, count(DISTINCT w{k}) AS people, "
        f"{medians[k - 1]} AS seconds FROM s{k}"
        for k in range(1, len(steps) + 1)
    ]
    if column:
        parts += [
            f"SELECT 0 AS whole, {k} AS step, dv AS dim, people, seconds FROM (SELECT d{k} AS c{k}, "
            f"count(DISTINCT w{k}) AS people, {medians[k - 1]} AS seconds FROM s{k} GROUP BY d{k}) AS g "
            f"JOIN dn ON dc = c{k}"
            for k in range(1, len(steps) + 1)
        ]
    return "WITH " + ", ".join(ctes) + " " + " UNION ALL ".join(parts)


def _steps(steps: Sequence[Step], reached: dict[int, tuple[int, float | None]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    first = reached.get(1, (0, None))[0]
    before = first
    for number, step in enumerate(steps, 1):
        people, seconds = reached.get(number, (0, None))
        out.append(
            {
                "label": step.label,
                "visitors": people,
                "conversion_rate": round(people / first, 4) if first else 0.0,
                "step_conversion_rate": round(people / before, 4) if before else 0.0,
                "dropoff": before - people if number > 1 else 0,
                "median_seconds": None if number == 1 or seconds is None else round(float(seconds), 1),
            }
        )
        before = people
    return out


def funnel(
    run: Run,
    dialect: Dialect,
    site_id: int,
    span: Span,
    filters: Filters,
    steps: Sequence[Step],
    column: str | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """The funnel's steps, and with ``column`` (a visit attribute) the funnel of each of its top
    values (by visitors at step 1)."""
    query = Query(dialect, site_id, span, filters)
    whole: dict[int, tuple[int, float | None]] = {}
    per: dict[str, dict[int, tuple[int, float | None]]] = {}
    for total, number, value, people, seconds in run(_sql(query, steps, column), query.params.values):
        if not int(people):  # a step no visit reached (its median is no number on ClickHouse)
            continue
        if int(total):
            whole[int(number)] = (int(people), seconds)
        else:
            per.setdefault(str(value) or "(none)", {})[int(number)] = (int(people), seconds)
    if column is None:
        return _steps(steps, whole), None
    top = sorted(per, key=lambda candidate: (-per[candidate].get(1, (0, None))[0], candidate))[
        :BREAKDOWN_ROWS
    ]
    return _steps(steps, whole), [{"value": v, "steps": _steps(steps, per[v])} for v in top]
