"""Reports the rollups cannot answer: filtered reports, and zones with a half-hour offset.

Filters select visits. The selected visits are those that started in the span and match every
filter (AND): ``source`` is the visit's source, ``page`` means the visit viewed that page,
``event`` means it sent that custom event. A filtered report is about those visits, whole, each
counted at its start: visit figures (visitors, visits, pageviews, bounces, duration) and the
pages, events and props tables all count the selected visits' events (a visit's events all
come at or after its start, so they are read from the span's start on). Without filters every
visit that started in the span is selected and the tables count the events inside the span, so
this path also serves spans that do not start on a whole UTC hour. The column store
(``sightline.reports.columns``) answers the same, faster; this path serves until it is ready.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, case, desc, distinct, func, literal_column, select

from sightline.reports.rollup import PAGEVIEW, cut, epoch_seconds, props_of
from sightline.storage.schema import events, report_visits

Span = tuple[datetime, datetime]
v = report_visits.c
e = events.c


@dataclass(frozen=True)
class Filters:
    page: str | None = None
    source: str | None = None
    event: str | None = None

    def __bool__(self) -> bool:
        return any((self.page, self.source, self.event))

    def describe(self) -> dict[str, str]:
        return {
            k: val for k, val in (("page", self.page), ("source", self.source), ("event", self.event)) if val
        }


def selected(site_id: int, span: Span, filters: Filters) -> Any:
    """The WHERE clause of the visits the filters select."""
    start, end = span
    conditions = [v.site_id == site_id, v.started_at >= start, v.started_at < end]
    if filters.source is not None:
        conditions.append(v.source == filters.source)
    if filters.page is not None:
        conditions.append(v.session_id.in_(_sessions_with(site_id, span, PAGEVIEW, filters.page)))
    if filters.event is not None:
        conditions.append(v.session_id.in_(_sessions_with(site_id, span, filters.event)))
    return and_(*conditions)


def _sessions_with(site_id: int, span: Span, name: str, path: str | None = None) -> Any:
    """Sessions with event ``name`` (on ``path``) from the span's start on; an alias, never
    correlated. Only visits that started in the span are kept, and their events are all later."""
    inner = events.alias("filter_events").c
    query = select(inner.session_id).where(
        inner.site_id == site_id, inner.name == name, inner.time >= span[0]
    )
    return query.where(inner.path == path) if path is not None else query


def _visit_sums() -> list[Any]:
    return [
        func.count(distinct(v.visitor_id)),
        func.count(),
        func.coalesce(func.sum(v.pageviews), 0),
        func.coalesce(func.sum(case((v.pageviews <= 1, 1), else_=0)), 0),
        func.coalesce(func.sum(v.duration), 0),
    ]


def _figures(row: Sequence[Any]) -> dict[str, int]:
    visitors, visits, pageviews, bounces, duration = (int(x) for x in row)
    return {
        "visitors": visitors,
        "visits": visits,
        "pageviews": pageviews,
        "events": 0,
        "bounces": bounces,
        "duration": duration,
    }


def _in_span(site_id: int, span: Span) -> Any:
    return and_(e.site_id == site_id, e.time >= span[0], e.time < span[1])


def totals(conn: Connection, site_id: int, span: Span, filters: Filters) -> dict[str, int]:
    row = conn.execute(select(*_visit_sums()).where(selected(site_id, span, filters))).one()
    figures = _figures(row)
    if not filters:  # as the rollups count them: visitors and pageviews of the events in the span
        visitors, pageviews = conn.execute(
            select(
                func.count(distinct(e.visitor_id)),
                func.coalesce(func.sum(case((e.name == PAGEVIEW, 1), else_=0)), 0),
            ).where(_in_span(site_id, span))
        ).one()
        figures.update(visitors=int(visitors), pageviews=int(pageviews))
    return figures


def series(conn: Connection, site_id: int, spans: Sequence[Span], filters: Filters) -> list[dict[str, int]]:
    """Figures per span: the selected visits grouped by the span their start falls in."""
    dialect = conn.dialect.name
    if not spans:
        return []
    whole = (spans[0][0], spans[-1][1])
    query = select(epoch_seconds(v.started_at, dialect), v.visitor_id, v.pageviews, v.duration).where(
        selected(site_id, whole, filters)
    )
    edges = [s[0].timestamp() for s in spans] + [spans[-1][1].timestamp()]
    points: list[dict[str, Any]] = [
        {"visitors": set(), "visits": 0, "pageviews": 0, "bounces": 0, "duration": 0} for _ in spans
    ]
    for started, visitor_id, pageviews, duration in conn.execute(query):
        index = bisect.bisect_right(edges, float(started)) - 1
        if not 0 <= index < len(spans):
            continue
        point = points[index]
        point["visitors"].add(visitor_id)
        point["visits"] += 1
        point["pageviews"] += pageviews
        point["bounces"] += 1 if pageviews <= 1 else 0
        point["duration"] += duration
    if not filters:  # visitors and pageviews of the events in each span
        for point in points:
            point["visitors"], point["pageviews"] = set(), 0
        query = select(epoch_seconds(e.time, dialect), e.visitor_id, e.name == PAGEVIEW).where(
            _in_span(site_id, whole)
        )
        for at, visitor_id, pageview in conn.execute(query):
            index = bisect.bisect_right(edges, float(at)) - 1
            if 0 <= index < len(spans):
                points[index]["visitors"].add(visitor_id)
                points[index]["pageviews"] += 1 if pageview else 0
    return [{**p, "visitors": len(p["visitors"]), "events": 0} for p in points]


VISIT_COLUMNS = {
    "source": v.source,
    "utm_source": v.utm_source,
    "utm_medium": v.utm_medium,
    "utm_campaign": v.utm_campaign,
    "browser": v.browser,
    "os": v.os,
    "device": v.device,
    "entry": v.entry_path,
    "exit": v.exit_path,
}


def breakdown(
    conn: Connection,
    site_id: int,
    span: Span,
    filters: Filters,
    dim: str,
    order: str,
    limit: int,
    prefix: str | None = None,
) -> tuple[list[dict[str, Any]], bool]:
    if dim in VISIT_COLUMNS:
        rows = _visit_breakdown(conn, site_id, span, filters, dim, order, limit)
    elif dim == "prop":
        rows = _prop_breakdown(conn, site_id, span, filters, prefix or "", limit)
    else:
        rows = _event_breakdown(conn, site_id, span, filters, dim, limit)
    return rows[:limit], len(rows) > limit


def _visit_breakdown(
    conn: Connection, site_id: int, span: Span, filters: Filters, dim: str, order: str, limit: int
) -> list[dict[str, Any]]:
    column = VISIT_COLUMNS[dim]
    where = selected(site_id, span, filters)
    if dim.startswith("utm_"):
        where = and_(where, column != "")
    elif dim in ("entry", "exit"):
        where = and_(where, column.is_not(None))
    sums = _visit_sums()
    labels = ["visitors", "visits", "pageviews", "bounces", "duration"]
    query = (
        select(column.label("value"), *(s.label(n) for s, n in zip(sums, labels, strict=True)))
        .where(where)
        .group_by(column)
        .order_by(desc(literal_column(order)), column)
        .limit(limit + 1)
    )
    out = []
    for value, *figures in conn.execute(query):
        row = _figures(figures)
        if dim == "exit":
            row["bounces"] = row["duration"] = 0
        out.append({"value": value, **row})
    return out


def _event_rows(site_id: int, span: Span, filters: Filters, *where: Any) -> Any:
    """Without filters the events in the span; with them every event of the selected visits."""
    if not filters:
        return and_(_in_span(site_id, span), *where)
    return and_(
        e.site_id == site_id,
        e.time >= span[0],
        e.session_id.in_(select(v.session_id).where(selected(site_id, span, filters))),
        *where,
    )


def _event_breakdown(
    conn: Connection, site_id: int, span: Span, filters: Filters, dim: str, limit: int
) -> list[dict[str, Any]]:
    if dim == "page":
        column, where, count_name = e.path, e.name == PAGEVIEW, "pageviews"
    else:
        column, where, count_name = e.name, e.name != PAGEVIEW, "events"
    query = (
        select(column, func.count().label("n"), func.count(distinct(e.visitor_id)))
        .where(_event_rows(site_id, span, filters, where))
        .group_by(column)
        .order_by(desc(literal_column("n")), column)
        .limit(limit + 1)
    )
    out = []
    for value, count, visitors in conn.execute(query):
        row = {"value": value, "visitors": int(visitors), "visits": 0, "pageviews": 0, "events": 0}
        row[count_name] = int(count)
        row.update(bounces=0, duration=0)
        out.append(row)
    return out


def _prop_breakdown(
    conn: Connection, site_id: int, span: Span, filters: Filters, prefix: str, limit: int
) -> list[dict[str, Any]]:
    """Props of one custom event (``prefix`` is ``name + "\\x1f"``), counted in Python."""
    name = prefix[:-1]
    query = select(e.props, e.visitor_id).where(
        _event_rows(site_id, span, filters, e.name == name, e.props.is_not(None))
    )
    counts: dict[str, list[Any]] = {}

    for props, visitor_id in conn.execute(query):
        for key, text in props_of(props):
            value = cut(f"{name}\x1f{key}\x1f{text}")
            entry = counts.setdefault(value, [0, set()])
            entry[0] += 1
            entry[1].add(visitor_id)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))[: limit + 1]
    return [
        {
            "value": value,
            "visitors": len(vs),
            "visits": 0,
            "pageviews": 0,
            "events": n,
            "bounces": 0,
            "duration": 0,
        }
        for value, (n, vs) in ranked
    ]


def realtime(conn: Connection, site_id: int, since: datetime, limit: int = 10) -> dict[str, Any]:
    """Visitors with any event since ``since`` (raw events: fresh without waiting for the job)."""
    recent = and_(e.site_id == site_id, e.time >= since)
    visitors = conn.execute(select(func.count(distinct(e.visitor_id))).where(recent)).scalar_one()
    pageviews = conn.execute(select(func.count()).where(recent, e.name == PAGEVIEW)).scalar_one()
    pages = conn.execute(
        select(e.path, func.count(distinct(e.visitor_id)).label("n"))
        .where(recent, e.name == PAGEVIEW)
        .group_by(e.path)
        .order_by(desc(literal_column("n")), e.path)
        .limit(limit)
    ).all()
    return {
        "visitors": int(visitors),
        "pageviews": int(pageviews),
        "pages": [{"value": p, "visitors": int(n)} for p, n in pages],
    }
