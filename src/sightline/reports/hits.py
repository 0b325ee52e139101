"""Filtered reports through ``report_visit_hits``: each visit's pages and custom events.

The rollup job keeps one row per (visit, page viewed) and (visit, custom event sent) with the
first and last time and the count. A ``page`` or ``event`` filter then reads an index range of
this table instead of the period's events, and the pages and events tables of a filtered report
sum the counts of the selected visits instead of scanning the period's events.

Exactness: the selected visits started in the span, so all their events are at or after its
start. A visit viewed a page in the span exactly when its first view is before the span's end,
and all its views are in the span when its last one is; only visits still running at the end
(last view at or after it) have their views in the span counted from the events.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, desc, distinct, func, literal_column, select

from sightline.storage.schema import events, report_visit_hits, report_visits
from sightline.storage.tables.reports import VALUE_MAX

Span = tuple[datetime, datetime]
PAGEVIEW = "pageview"
h = report_visit_hits.c
v = report_visits.c
e = events.c


def usable(value: str, kind: str) -> bool:
    """Whether the table answers for ``value``: not cut by the job, and not the name ``pageview``
    (kept as pages, not as an event)."""
    return len(value) <= VALUE_MAX and not (kind == "e" and value == PAGEVIEW)


def sessions_with(site_id: int, span: Span, kind: str, value: str) -> Any:
    """Sessions whose first ``kind`` hit of ``value`` is in the span (an alias, never correlated)."""
    hit = report_visit_hits.alias("filter_hits").c
    return select(hit.session_id).where(
        hit.site_id == site_id,
        hit.kind == kind,
        hit.value == value,
        hit.first_at >= span[0],
        hit.first_at < span[1],
    )


def breakdown(
    conn: Connection, site_id: int, span: Span, chosen: Any, kind: str, limit: int
) -> list[tuple[str, int, int]]:
    """(value, count in the span, visitors) of the pages (``kind`` "p") or custom events ("e") of
    the visits ``chosen`` (a WHERE clause on report_visits), ranked by count then value."""
    visits = select(v.session_id, v.visitor_id).where(chosen).subquery("chosen")
    joined = report_visit_hits.join(visits, (h.site_id == site_id) & (h.session_id == visits.c.session_id))
    base = (h.kind == kind) & (h.first_at < span[1])
    fix = _running_at_end(conn, site_id, span, joined, base, kind)
    query = (
        select(h.value, func.sum(h.views).label("n"), func.count(distinct(visits.c.visitor_id)))
        .select_from(joined)
        .where(base)
        .group_by(h.value)
    )
    if not fix:
        ranked = conn.execute(query.order_by(desc(literal_column("n")), h.value).limit(limit + 1))
        return [(value, int(n), int(visitors)) for value, n, visitors in ranked]
    rows = [(value, int(n) + fix.get(value, 0), int(visitors)) for value, n, visitors in conn.execute(query)]
    rows.sort(key=lambda r: (-r[1], r[0]))
    return rows[: limit + 1]


def _running_at_end(
    conn: Connection, site_id: int, span: Span, joined: Any, base: Any, kind: str
) -> dict[str, int]:
    """Per value, the views of visits still running at the span's end that fall after it (to
    subtract): their rows count every view, the span only those before its end."""
    running = conn.execute(
        select(h.session_id, h.value, h.views).select_from(joined).where(base, h.last_at >= span[1])
    ).all()
    if not running:
        return {}
    fix: dict[str, int] = {}
    sessions = {session for session, _, _ in running}
    for _, value, views in running:
        fix[value] = fix.get(value, 0) - int(views)
    earliest = conn.execute(
        select(func.min(v.started_at)).where(v.site_id == site_id, v.session_id.in_(sessions))
    ).scalar_one()
    column = e.path if kind == "p" else e.name
    named = e.name == PAGEVIEW if kind == "p" else e.name != PAGEVIEW
    counted = conn.execute(
        select(e.session_id, column, func.count())
        .where(e.site_id == site_id, e.time >= earliest, e.time < span[1], named)
        .where(e.session_id.in_(sessions))
        .group_by(e.session_id, column)
    )
    keys = {(session, value) for session, value, _ in running}
    for session, full, n in counted:
        value = full[:VALUE_MAX]
        if (session, value) in keys:
            fix[value] = fix.get(value, 0) + int(n)
    return fix
