"""The conversion reports of one request (funnel, retention, journeys), shaped for the API: the
common answer of every report (``Report.meta``) plus their own figures."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from sightline import dimensions
from sightline.database.types import utcnow
from sightline.reports.funnels import funnel
from sightline.reports.journeys import journeys
from sightline.reports.period import local_midnight, next_hour
from sightline.reports.retention import retention
from sightline.reports.service import Report
from sightline.reports.steps import Step
from sightline.sites.service import WEEK_STARTS

# Each spelling of a dimension a funnel can be split by -> the events table's column.
FUNNEL_DIMENSIONS = {
    spelling: d.column
    for d in dimensions.supporting(dimensions.FUNNEL)
    if d.column is not None
    for spelling in d.spellings
}
FUNNEL_NAMES = tuple(d.name for d in dimensions.supporting(dimensions.FUNNEL))  # aliases left out
MAX_PERIODS = 12


def funnel_report(report: Report, steps: Sequence[Step], dimension: str | None) -> dict[str, Any]:
    span = (report.period.start, report.period.end)
    column = FUNNEL_DIMENSIONS[dimension] if dimension else None
    whole, split = funnel(report.run, report.dialect, report.site_id, span, report.filters, steps, column)
    out = report.meta(report.period)
    out["steps"] = whole
    if dimension:
        out["dimension"] = dimension
        out["breakdown"] = split
    return out


def retention_report(report: Report, interval: str, periods: int) -> dict[str, Any]:
    period = report.period
    step = timedelta(days=7 if interval == "week" else 1)
    # Weeks start on the site's first day of the week: the first cohort is the week holding the
    # range's first day.
    first_day = period.first_day
    if interval == "week":
        weekday = WEEK_STARTS[str(report.site.get("week_start") or "monday")]
        first_day -= timedelta(days=(first_day.weekday() - weekday) % 7)
    cohorts = ((period.last_day - first_day).days + 1 + step.days - 1) // step.days
    now = report.now
    limit = next_hour(now)
    spans = []
    for index in range(cohorts + periods - 1):
        start = local_midnight(first_day + index * step, report.zone)
        end = local_midnight(first_day + (index + 1) * step, report.zone)
        if start >= limit:
            break
        spans.append((start, min(end, limit)))
    elapsed = len(spans)
    rows = retention(report.run, report.dialect, report.site_id, spans, report.filters, periods, elapsed)
    out = report.meta(period)
    out["interval"] = interval
    out["periods"] = periods
    out["cohorts"] = [
        {"start": (first_day + n * step).isoformat(), "visitors": size, "returning": shares}
        for n, (size, shares) in enumerate(rows[:cohorts])
    ]
    return out


def journeys_report(report: Report, start: Step, direction: str, depth: int) -> dict[str, Any]:
    span = (report.period.start, report.period.end)
    out = report.meta(report.period)
    out.update(start=start.label, direction=direction, depth=depth)
    out["paths"] = journeys(
        report.run, report.dialect, report.site_id, span, report.filters, start, direction, depth
    )
    return out


__all__ = [
    "FUNNEL_DIMENSIONS",
    "FUNNEL_NAMES",
    "MAX_PERIODS",
    "funnel_report",
    "journeys_report",
    "retention_report",
    "utcnow",
]
