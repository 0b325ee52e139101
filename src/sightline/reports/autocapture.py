"""Autocapture's reports: 404 pages and where their visitors came from, outbound links and file
downloads, time on page and scroll depth, web vitals (p75 with the industry's ratings), and rage
and dead clicks.

Each is one query on the store over autocapture's reserved events, whose props ingest has checked
(``sightline.autocapture.events``), with the period and filters of every report (``Query``):
without filters the period's events, with filters every event of the selected visits. Each table
answers rows of its own figures (docs/reports.md, "Autocapture"); ``vitals`` answers the period's
figure of each web vital.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sightline.reports import rules
from sightline.reports.queries import Filters, Page, Query, Run, Span
from sightline.store.dialects import Dialect
from sightline.store.schema import PAGEVIEW

# Web vitals: (good up to, poor above), the thresholds of web.dev (milliseconds; CLS has no unit).
THRESHOLDS: dict[str, tuple[float, float]] = {
    "LCP": (2500, 4000),
    "INP": (200, 500),
    "CLS": (0.1, 0.25),
    "FCP": (1800, 3000),
    "TTFB": (800, 1800),
}
PAGE_VITALS = ("LCP", "INP", "CLS")  # the Core Web Vitals, per page
LOOK_BACK = 86_400_000_000  # how far before the period a 404's visit may have viewed its last page
Rows = list[dict[str, Any]]
Shape = Callable[[tuple[Any, ...]], dict[str, Any]]
Made = tuple[str, Shape]  # a table's query, and how one of its result rows becomes an API row


def rating(name: str, value: float | None) -> str | None:
    """``good``, ``needs-improvement`` or ``poor`` for a figure of the web vital ``name``."""
    if value is None:
        return None
    good, poor = THRESHOLDS[name]
    return "good" if value <= good else "poor" if value > poor else "needs-improvement"


def _named(name: str) -> str:
    """Events of one reserved name (a fixed word of ours, never a visitor's text)."""
    return f"name = '{name}'"


def _text(query: Query, key: str) -> str:
    """Prop ``key`` of an event as text ('' or NULL when missing)."""
    return query.dialect.prop.format(props="props", prefix=query.bind(f"{key}\x1f"))


def _search(query: Query, page: Page, *columns: str) -> str:
    if not page.search:
        return ""
    value = query.bind(page.search)
    return " AND (" + " OR ".join(query.dialect.search.format(column=c, value=value) for c in columns) + ")"


def _window(page: Page) -> str:
    return f" LIMIT {int(page.limit) + 1} OFFSET {int(page.offset)}"


def not_found(query_parts: Query, page: Page, _: str | None) -> Made:
    """404 pages: the missing path, its visitors, visits and hits (``events``)."""
    query = (
        "SELECT path AS value, count(DISTINCT visitor) AS people, count(DISTINCT visit) AS v, count(*) AS n "
        f"FROM events WHERE {query_parts.events(_named('404'))}{_search(query_parts, page, 'path')} "
        f"GROUP BY path ORDER BY n DESC, value{_window(page)}"
    )
    return query, lambda row: {
        "value": row[0],
        "visitors": int(row[1]),
        "visits": int(row[2]),
        "events": int(row[3]),
    }


def not_found_referrers(query_parts: Query, page: Page, path: str | None) -> Made:
    """Where the visitors of one 404 path came from: the last other page their visit viewed
    before it (``kind`` page), or, when the visit began there, the visit's source (``kind``
    source, ``(none)`` for direct)."""
    missing = query_parts.bind(path or "")
    hits = f"{query_parts.events(_named('404'))} AND path = {missing}"
    before = (
        f"site_id = {query_parts.site} AND time >= {query_parts.low} - "
        f"{query_parts.bind(LOOK_BACK)} AND time < {query_parts.high} AND name = '{PAGEVIEW}'"
    )
    found = "coalesce(r.page, '') != ''"
    query = (
        "SELECT value, kind, count(DISTINCT visitor) AS people, count(*) AS n FROM ("
        f"SELECT e.visitor AS visitor, CASE WHEN {found} THEN r.page ELSE e.source END AS value, "
        f"CASE WHEN {found} THEN 'page' ELSE 'source' END AS kind "
        f"FROM (SELECT id, visitor, source FROM events WHERE {hits}) AS e LEFT JOIN ("
        "SELECT f.id AS id, argMax(p.path, p.time) AS page "
        f"FROM (SELECT id, visit, time FROM events WHERE {hits}) AS f "
        f"JOIN (SELECT visit, time, path FROM events WHERE {before}) AS p ON p.visit = f.visit "
        f"WHERE p.time < f.time AND p.path != {missing} GROUP BY f.id) AS r ON r.id = e.id"
        f") AS t WHERE 1 = 1{_search(query_parts, page, 'value')} "
        f"GROUP BY value, kind ORDER BY n DESC, value, kind{_window(page)}"
    )
    return query, lambda row: {
        "value": row[0],
        "kind": row[1],
        "visitors": int(row[2]),
        "events": int(row[3]),
    }


def _links(name: str) -> Callable[[Query, Page, str | None], Made]:
    def report(query_parts: Query, page: Page, _: str | None) -> Made:
        """Clicked URLs (the ``url`` prop): visitors and clicks (``events``)."""
        query = (
            "SELECT value, count(DISTINCT visitor) AS people, count(*) AS n FROM ("
            f"SELECT coalesce({_text(query_parts, 'url')}, '') AS value, visitor FROM events "
            f"WHERE {query_parts.events(_named(name))}) AS t WHERE "
            f"value != ''{_search(query_parts, page, 'value')} "
            f"GROUP BY value ORDER BY n DESC, value{_window(page)}"
        )
        return query, lambda row: {"value": row[0], "visitors": int(row[1]), "events": int(row[2])}

    return report


def engagement(query_parts: Query, page: Page, _: str | None) -> Made:
    """Per page: the visits that measured it, their visitors, the mean time on the page (a visit's
    ``seconds`` on it added up) and the mean scroll depth (a visit's deepest ``scroll`` on it)."""
    seconds = rules.prop_number(query_parts.dialect, query_parts.bind, "seconds")
    scroll = rules.prop_number(query_parts.dialect, query_parts.bind, "scroll")
    query = (
        "SELECT path AS value, count(*) AS v, count(DISTINCT visitor) AS people, avg(s) AS secs, "
        "avg(deep) AS depth FROM ("
        f"SELECT path, visit, visitor, sum({seconds}) AS s, max({scroll}) AS deep FROM events "
        f"WHERE {query_parts.events(_named('engagement'))} GROUP BY path, visit, visitor"
        f") AS t WHERE 1 = 1{_search(query_parts, page, 'path')} "
        f"GROUP BY path ORDER BY v DESC, value{_window(page)}"
    )

    def shaped(row: tuple[Any, ...]) -> dict[str, Any]:
        return {
            "value": row[0],
            "visitors": int(row[2]),
            "visits": int(row[1]),
            "time_on_page": round(float(row[3] or 0)),
            "scroll_depth": round(float(row[4] or 0)),
        }

    return query, shaped


def _vital(value: Any, name: str) -> float | None:
    if value is None:
        return None
    return round(float(value), 3 if name == "CLS" else 0)


def web_vitals(query_parts: Query, page: Page, _: str | None) -> Made:
    """Per page: the visits that measured it, and the p75 of LCP, INP and CLS with their ratings."""
    p75 = [
        query_parts.dialect.quantile.format(value=f"CASE WHEN vital = '{name}' THEN figure END", level="0.75")
        for name in PAGE_VITALS
    ]
    query = (
        "SELECT path AS value, count(DISTINCT visit) AS v, count(DISTINCT visitor) AS people, "
        f"{', '.join(p75)} "
        f"FROM (SELECT path, visit, visitor, {_text(query_parts, 'name')} AS vital, "
        f"{rules.prop_number(query_parts.dialect, query_parts.bind, 'value')} AS figure FROM events "
        f"WHERE {query_parts.events(_named('web_vital'))}) AS "
        f"t WHERE 1 = 1{_search(query_parts, page, 'path')} "
        f"GROUP BY path ORDER BY v DESC, value{_window(page)}"
    )

    def shaped(row: tuple[Any, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {"value": row[0], "visitors": int(row[2]), "visits": int(row[1])}
        for name, raw in zip(PAGE_VITALS, row[3:], strict=True):
            figure = _vital(raw, name)
            out[name.lower()] = figure
            out[f"{name.lower()}_rating"] = rating(name, figure)
        return out

    return query, shaped


def _frustrated(flag: str) -> Callable[[Query, Page, str | None], Made]:
    def report(query_parts: Query, page: Page, _: str | None) -> Made:
        """Heatmap clicks flagged ``rage`` (or ``dead``) per element and page: visitors, bursts
        (``events``) and the clicks they hold."""
        clicks = rules.prop_number(query_parts.dialect, query_parts.bind, "clicks")
        flagged = rules.prop_is(query_parts.dialect, query_parts.bind, flag, "true")
        query = (
            "SELECT selector AS value, path, count(DISTINCT visitor) AS people, count(*) AS n, "
            "sum(c) AS total "
            f"FROM (SELECT coalesce({_text(query_parts, 'selector')}, "
            f"'') AS selector, path, visitor, {clicks} AS c "
            f"FROM events WHERE {query_parts.events(_named('heatmap_click'))} AND {flagged}"
            f") AS t WHERE selector != ''{_search(query_parts, page, 'selector', 'path')} "
            f"GROUP BY selector, path ORDER BY n DESC, value, path{_window(page)}"
        )
        return query, lambda row: {
            "value": row[0],
            "page": row[1],
            "visitors": int(row[2]),
            "events": int(row[3]),
            "clicks": int(row[4] or 0),
        }

    return report


REPORTS = {
    "not_found": not_found,
    "not_found_referrers": not_found_referrers,
    "outbound_links": _links("outbound_link"),
    "file_downloads": _links("file_download"),
    "engagement": engagement,
    "web_vitals": web_vitals,
    "rage_clicks": _frustrated("rage"),
    "dead_clicks": _frustrated("dead"),
}


def breakdown(
    run: Run,
    dialect: Dialect,
    site_id: int,
    span: Span,
    filters: Filters,
    dim: str,
    page: Page,
    name: str | None,
) -> tuple[Rows, bool]:
    """One page of one autocapture table, and whether more rows follow."""
    query_parts = Query(dialect, site_id, span, filters)
    query, shape = REPORTS[dim](query_parts, page, name)
    rows = [shape(r) for r in run(query, query_parts.params.values)]
    return rows[: page.limit], len(rows) > page.limit


def vitals(run: Run, dialect: Dialect, site_id: int, span: Span, filters: Filters) -> list[dict[str, Any]]:
    """Each web vital of the period: p75 and its rating, the measurements, and the share of them
    the SDK rated good, needs improvement and poor."""
    query_parts = Query(dialect, site_id, span, filters)
    query = (
        f"SELECT vital, count(*), {dialect.quantile.format(value='figure', level='0.75')}, "
        "sum(CASE WHEN rated = 'good' THEN 1 ELSE 0 END), "
        "sum(CASE WHEN rated = 'needs-improvement' THEN 1 ELSE 0 END), "
        "sum(CASE WHEN rated = 'poor' THEN 1 ELSE 0 END) "
        f"FROM (SELECT {_text(query_parts, 'name')} AS vital, "
        f"{rules.prop_number(dialect, query_parts.bind, 'value')} AS figure, "
        f"{_text(query_parts, 'rating')} AS rated FROM events "
        f"WHERE {query_parts.events(_named('web_vital'))}) AS t "
        "WHERE figure IS NOT NULL GROUP BY vital"
    )
    found = {r[0]: r for r in run(query, query_parts.params.values)}
    out = []
    for name in THRESHOLDS:
        samples = int(found[name][1]) if name in found else 0
        figure = _vital(found[name][2], name) if samples else None
        item: dict[str, Any] = {
            "name": name,
            "p75": figure,
            "rating": rating(name, figure),
            "samples": samples,
        }
        for key, column in (("good", 3), ("needs_improvement", 4), ("poor", 5)):
            item[key] = round(int(found[name][column] or 0) / samples, 4) if samples else 0.0
        out.append(item)
    return out
