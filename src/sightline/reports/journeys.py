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
    chosen = f"SELECT visit FROM {d.visits} WHERE {q.selected()}"
    # Only events of visits that may have started in the span: an event's ``visit_start`` (its
    # visit's start when it was fed) is never earlier than the visit's start. The visits table
    # decides which visits started in the span, on the visits that hit the start (few), not on
    # every event. Each visit's first hit is its least (time, id); its path is the labels of the
    # ``depth`` events nearest it on the chosen side, by a top-n aggregate (no window).
    since = f"site_id = {q.site} AND time >= {q.a} AND visit_start >= {q.a}"
    first = (
        f"SELECT visit AS hv, min((time, id)) AS k0 FROM events WHERE {since} AND "
        f"{start.condition(d, q.bind)} GROUP BY visit HAVING visit IN ({chosen})"
    )
    nearest = d.first if direction == "next" else d.last
    side = ">" if direction == "next" else "<"
    picked = nearest.format(value=label, key="(time, id)", n=int(depth))
    per_visit = (
        f"SELECT visit, min(visitor) AS who, {picked} AS ls FROM events JOIN ({first}) AS h "
        f"ON visit = hv WHERE {since} AND (time, id) {side} k0 GROUP BY visit"
    )
    picks = ", ".join(f"{d.at('ls', str(i))} AS l{i}" for i in range(1, depth + 1))
    names = ", ".join(f"l{i}" for i in range(1, depth + 1))
    query = (
        f"SELECT {names}, count(DISTINCT who) AS people FROM (SELECT who, {picks} FROM ({per_visit}) AS p) "
        f"AS t GROUP BY {names} ORDER BY people DESC"
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
