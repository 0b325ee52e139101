"""Journeys: from a page or an event, the most common next (or previous) steps within a visit,
up to 3 deep, with the unique visitors who took each path.

A visit's steps are its events in time order (a pageview's label is ``page:/path``, a custom
event's ``event:name``). From the first event of the visit matching the starting step, a path is
the labels of the following (``next``) or preceding (``previous``, nearest first) events, as many
as ``depth`` or fewer when the visit ends sooner. Visits are those the filters select. The
measurements the SDK sends while a visitor reads (``autocapture.events.MEASUREMENTS``: engagement,
web vitals, heatmap clicks) are never steps; the click captures (outbound links, downloads, 404s)
are, as the visitor's own actions.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from typing import Any

from sightline.autocapture.events import MEASUREMENTS
from sightline.reports.filters import Filters
from sightline.reports.queries import Query, Run, Span
from sightline.reports.steps import Step, since, started
from sightline.store.dialects import Dialect
from sightline.store.schema import PAGEVIEW

LIMIT = 50
# A step's value in the query: a pageview's path (it starts with "/") or "!" and the event's name.
# No label is made per event (half a million strings); values sort as their labels do ("!" before
# "/" as "event:" before "page:"), so the engine's ranking of paths is unchanged.
VALUE = f"CASE WHEN name = '{PAGEVIEW}' THEN path ELSE concat('!', name) END"
STEPS = "name NOT IN (" + ", ".join(f"'{name}'" for name in MEASUREMENTS) + ")"  # the events that are steps


def label(value: str) -> str:
    return f"event:{value[1:]}" if value.startswith("!") else f"page:{value}"


def _sql(query: Query, start: Step, direction: str, depth: int, exact: bool) -> str:
    dialect = query.dialect
    key = dialect.sequence  # (time, id) as one value
    # Each visit's first hit of the start: its least (time, id), its visitor, and whether the visit
    # started in the span (``started``: decided on these few columns, mostly without the visits
    # table). Only then the events of those visits on the chosen side of it, with their values: the
    # ``depth`` nearest, by a top-n aggregate (no window, no sort of the visit's events) over a key
    # relative to the first hit (``Dialect.near``), or over ``sequence`` itself (``exact``).
    first = (
        f"SELECT hv, who, {dialect.sequence_time.format(k='k0')} "
        f"AS t0, {dialect.sequence_id.format(k='k0')} AS i0 "
        f"FROM (SELECT visit AS hv, min(visitor) AS who, min({key}) AS k0, "
        f"min(visit_start) AS b0 FROM events WHERE {since(query)} AND {start.condition(dialect, query.bind)} "
        f"GROUP BY visit) AS f WHERE {started(query, 'hv', 'b0')}"
    )
    nearest = dialect.first if direction == "next" else dialect.last
    relative = not exact and dialect.near is not None and dialect.loose is not None
    # An event whose relative key is ``loose`` (it may stand in the wrong place among events of its
    # moment) has the value "" (no step has it): were a visit's path wrong, one of its steps would
    # be such an event, so a path with "" means the exact key must answer.
    value = f"CASE WHEN {dialect.loose} THEN '' ELSE {VALUE} END" if relative else VALUE
    after = "time >= t0 AND (time > t0 OR id > i0)"
    side = after if direction == "next" else "time <= t0 AND (time < t0 OR id < i0)"
    picked = nearest.format(value=value, key=dialect.near if relative else key, n=int(depth))
    per_visit = (
        f"SELECT hv, any_value(who) AS person, {picked} AS ls FROM events "
        f"JOIN ({first}) AS h ON visit = hv WHERE {since(query)} AND {STEPS} AND {side} GROUP BY hv"
    )
    picks = ", ".join(f"{dialect.at('ls', str(i))} AS l{i}" for i in range(1, depth + 1))
    names = ", ".join(f"l{i}" for i in range(1, depth + 1))
    # The top paths are chosen by the engine: tens of thousands of paths made Python objects and
    # sorted cost more than the query. A missing step (the visit ended) sorts first, as a shorter
    # list does. A path with a loose step sorts before all.
    order = "people DESC, " + ", ".join(f"l{i} NULLS FIRST" for i in range(1, depth + 1))
    if relative:
        marked = " OR ".join(f"l{i} = ''" for i in range(1, depth + 1))
        order = f"coalesce({marked}, false) DESC, {order}"
    return (
        f"SELECT {names}, count(DISTINCT person) AS people FROM (SELECT person, {picks} "
        f"FROM ({per_visit}) AS p) AS t GROUP BY {names} ORDER BY {order} LIMIT {LIMIT}"
    )


def journeys(
    run: Run,
    dialect: Dialect,
    site_id: int,
    span: Span,
    filters: Filters,
    start: Step,
    direction: str,
    depth: int,
) -> list[dict[str, Any]]:
    query = Query(dialect, site_id, span, filters)
    rows = run(_sql(query, start, direction, depth, exact=False), query.params.values)
    if rows and dialect.near is not None and "" in rows[0][:-1]:  # a loose step: the exact key answers
        query = Query(dialect, site_id, span, filters)
        rows = run(_sql(query, start, direction, depth, exact=True), query.params.values)
    paths: list[dict[str, Any]] = []
    for *values, people in rows:
        shown: list[str] = []
        for item in values:
            if item is None or item == "":
                break
            shown.append(label(str(item)))
        if shown:
            paths.append({"steps": shown, "visitors": int(people)})
    paths.sort(key=lambda path: (-path["visitors"], path["steps"]))
    return paths[:LIMIT]
