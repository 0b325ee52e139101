"""Filtered reports through ``report_visit_hits``: each visit's pages and custom events.

The rollup job keeps one row per (visit, page viewed) and (visit, custom event sent) with the
first and last time and the count. A ``page`` or ``event`` filter reads an index range of this
table instead of the period's events.

Exactness: the selected visits started in the span, so all their events are at or after its
start: a visit viewed a page in the span exactly when its first view is before the span's end.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select

from sightline.storage.schema import report_visit_hits
from sightline.storage.tables.reports import VALUE_MAX

Span = tuple[datetime, datetime]
PAGEVIEW = "pageview"


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
