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
from sightline.reports.steps import Step, since, started
from sightline.store.dialects import Dialect
from sightline.store.schema import PAGEVIEW

LIMIT = 50


def journeys(
    run: Run, d: Dialect, site_id: int, span: Span, filters: Filters, start: Step, direction: str, depth: int
) -> list[dict[str, Any]]:
    q = Query(d, site_id, span, filters)
    label = f"CASE WHEN name = '{PAGEVIEW}' THEN concat('page:', path) ELSE concat('event:', name) END"
    key = d.sequence  # (time, id) as one value
    # Each visit's first hit of the start: its least (time, id), its visitor, and whether the visit
    # started in the span (``started``: decided on these few columns, mostly without the visits
    # table). Only then the events of those visits on the chosen side of it, with their labels: the
    # ``depth`` nearest, by a top-n aggregate (no window, no sort of the visit's events).
    first = (
        f"SELECT * FROM (SELECT visit AS hv, min(visitor) AS who, min({key}) AS k0, "
        f"min(visit_start) AS b0 FROM events WHERE {since(q)} AND {start.condition(d, q.bind)} "
        f"GROUP BY visit) AS f WHERE {started(q, 'hv', 'b0')}"
    )
    nearest = d.first if direction == "next" else d.last
    side = ">" if direction == "next" else "<"
    picked = nearest.format(value=label, key=key, n=int(depth))
    per_visit = (
        f"SELECT hv, min(who) AS person, {picked} AS ls FROM events JOIN ({first}) AS h "
        f"ON visit = hv WHERE {since(q)} AND {key} {side} k0 GROUP BY hv"
    )
    picks = ", ".join(f"{d.at('ls', str(i))} AS l{i}" for i in range(1, depth + 1))
    names = ", ".join(f"l{i}" for i in range(1, depth + 1))
    # The top paths are chosen by the engine: tens of thousands of paths made Python objects and
    # sorted cost more than the query. A missing step (the visit ended) sorts first, as a shorter
    # list does.
    order = ", ".join(f"l{i} NULLS FIRST" for i in range(1, depth + 1))
    query = (
        f"SELECT {names}, count(DISTINCT person) AS people FROM (SELECT person, {picks} "
        f"FROM ({per_visit}) AS p) AS t GROUP BY {names} ORDER BY people DESC, {order} LIMIT {LIMIT}"
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
