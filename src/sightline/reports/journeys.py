"""Journeys: from a page or an event, the most common next (or previous) steps within a visit,
up to 3 deep, with the unique visitors who took each path.

A visit's steps are its events in time order (a pageview's label is ``page:/path``, a custom
event's ``event:name``). From the first event of the visit matching the starting step, a path is
the labels of the following (``next``) or preceding (``previous``, nearest first) events, as many
as ``depth`` or fewer when the visit ends sooner. Visits are those the filters select.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from typing import Any

from sightline.reports.filters import Filters
from sightline.reports.queries import Query, Run, Span
from sightline.reports.steps import Step
from sightline.store.dialects import Dialect
from sightline.store.schema import PAGEVIEW

LIMIT = 50


def journeys(
    run: Run, d: Dialect, site_id: int, span: Span, filters: Filters, start: Step, direction: str, depth: int
) -> list[dict[str, Any]]:
    q = Query(d, site_id, span, filters)
    label = f"CASE WHEN name = '{PAGEVIEW}' THEN concat('page:', path) ELSE concat('event:', name) END"
    chosen = f"visit IN (SELECT visit FROM {d.visits} WHERE {q.selected()})"
    hit = start.condition(d, q.bind)
    steps = (
        f"SELECT visit, visitor, {label} AS step, {hit} AS hit, "
        f"row_number() OVER (PARTITION BY visit ORDER BY time, id) AS n "
        f"FROM events WHERE site_id = {q.site} AND time >= {q.a} AND {chosen} "
        f"AND visit IN (SELECT visit FROM events WHERE site_id = {q.site} AND time >= {q.a} AND {hit})"
    )
    sign = 1 if direction == "next" else -1
    picks = ", ".join(
        f"max(CASE WHEN (n - n0) * {sign} = {i} THEN step END) AS l{i}" for i in range(1, depth + 1)
    )
    query = (
        f"WITH s AS ({steps}), a AS (SELECT visit AS av, min(n) AS n0 FROM s WHERE hit GROUP BY visit), "
        f"p AS (SELECT visit, min(visitor) AS who, {picks} FROM s JOIN a ON s.visit = a.av "
        f"WHERE (n - n0) * {sign} BETWEEN 1 AND {depth} GROUP BY visit) "
        f"SELECT {', '.join(f'l{i}' for i in range(1, depth + 1))}, count(DISTINCT who) AS people FROM p "
        f"GROUP BY {', '.join(f'l{i}' for i in range(1, depth + 1))} ORDER BY people DESC"
    )
    paths: list[dict[str, Any]] = []
    for *labels, people in run(query, q.p.values):
        shown: list[str] = []
        for item in labels:
            if item is None or item == "":
                break
            shown.append(str(item))
        if shown:
            paths.append({"steps": shown, "visitors": int(people)})
    paths.sort(key=lambda p: (-p["visitors"], p["steps"]))
    return paths[:LIMIT]
