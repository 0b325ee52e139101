"""The reports of one site: summary, time series, breakdowns and realtime, as the console API shows them.

Each report picks its source: the rollups (the default dashboard: no filters, a span on whole
UTC hours); else the column store (filters, or a zone with a half-hour offset) once it has caught
up; else the raw visits and events, which give the same figures more slowly. The answer says
which one it used in ``"source"``: ``rollups``, ``columns`` or ``events``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Connection

from sightline.reports import localdays, raw, rollups
from sightline.reports.columns import queries as columnar
from sightline.reports.columns.store import ColumnStore
from sightline.reports.params import DIMENSIONS, Query
from sightline.reports.period import Period, local_midnight, period_of
from sightline.sites.service import get_site
from sightline.storage.types import utcnow

REALTIME_WINDOW = timedelta(minutes=5)


class Report:
    """One request's site, period and filters."""

    def __init__(
        self,
        conn: Connection,
        site: Any,
        query: Query,
        now: datetime,
        columns: ColumnStore | None = None,
    ) -> None:
        self.conn = conn
        self.columns = columns if columns is not None and columns.ready else None
        self.site = site
        self.query = query
        self.zone = ZoneInfo(site["timezone"])
        self.period = period_of(query.range, query.date_from, query.date_to, self.zone, now)

    @classmethod
    def open(
        cls,
        conn: Connection,
        owner_id: int,
        site_id: int,
        query: Query,
        now: datetime | None = None,
        columns: ColumnStore | None = None,
    ) -> Report:
        site = get_site(conn, owner_id, site_id)
        return cls(conn, site, query, now or utcnow(), columns)

    @property
    def site_id(self) -> int:
        return int(self.site["id"])

    def from_rollups(self, period: Period) -> bool:
        if self.query.filters:
            return False
        moments = [period.start, period.end] + [a for a, _ in period.buckets()]
        return rollups.aligned(*moments)

    def source(self, period: Period) -> str:
        if self.from_rollups(period):
            return "rollups"
        return "events" if self.columns is None else "columns"

    def meta(self, period: Period) -> dict[str, Any]:
        out: dict[str, Any] = {
            "site_id": self.site_id,
            "timezone": self.site["timezone"],
            "range": {"name": self.query.range, **period.describe()},
            "filters": self.query.filters.describe(),
            "source": self.source(period),
        }
        if self.query.compare:
            out["previous_range"] = period.previous().describe()
        return out

    def totals(self, period: Period) -> dict[str, int]:
        span = (period.start, period.end)
        if self.from_rollups(period):
            return rollups.totals(self.conn, self.site_id, span)
        figures: dict[str, int] = self._visits(columnar.totals, raw.totals, span)
        return figures

    def _visits(self, from_columns: Callable[..., Any], from_database: Callable[..., Any], *args: Any) -> Any:
        """A report the rollups cannot answer: from the column store once it is ready, else from
        the database (same figures). Both take (site_id, span or spans, filters, *rest)."""
        site_and_span, rest = (self.site_id, args[0], self.query.filters), args[1:]
        if self.columns is not None:
            with self.columns.reader() as cur:
                return from_columns(cur, *site_and_span, *rest)
        return from_database(self.conn, *site_and_span, *rest)

    def summary(self) -> dict[str, Any]:
        period = self.period
        out = self.meta(period)
        out["current"] = present(self.totals(period))
        out["previous"] = present(self.totals(period.previous())) if self.query.compare else None
        return out

    def points(self, period: Period) -> list[dict[str, Any]]:
        spans = period.buckets()
        if self.from_rollups(period):
            days = [self._whole_day(a, b) for a, b in spans] if period.interval == "day" else None
            figures = rollups.series(self.conn, self.site_id, spans, days, self.site["timezone"])
        else:
            figures = self._visits(columnar.series, raw.series, spans)
        return [{"time": period.label(a), **present(f)} for (a, _), f in zip(spans, figures, strict=True)]

    def _whole_day(self, start: datetime, end: datetime) -> int | None:
        """The local day (days since the epoch) the span covers exactly, if it does."""
        day = start.astimezone(self.zone).date()
        whole = start == local_midnight(day, self.zone) and end == local_midnight(
            day + timedelta(days=1), self.zone
        )
        return localdays.day_number(day) if whole else None

    def timeseries(self) -> dict[str, Any]:
        out = self.meta(self.period)
        out["interval"] = self.period.interval
        out["points"] = self.points(self.period)
        out["previous"] = self.points(self.period.previous()) if self.query.compare else None
        return out

    def breakdown(self) -> dict[str, Any]:
        assert self.query.dimension is not None
        dimension = DIMENSIONS[self.query.dimension]
        prefix = f"{self.query.name}\x1f" if self.query.name is not None else None
        span = (self.period.start, self.period.end)
        if self.from_rollups(self.period):
            rows, more = rollups.breakdown(
                self.conn, self.site_id, span, dimension.dim, dimension.order, self.query.limit, prefix
            )
        else:
            args = (dimension.dim, dimension.order, self.query.limit, prefix)
            rows, more = self._visits(columnar.breakdown, raw.breakdown, span, *args)
        out = self.meta(self.period)
        out["dimension"] = self.query.dimension
        if self.query.name is not None:
            out["name"] = self.query.name
        out["rows"] = [_row(row, dimension.fields, prefix) for row in rows]
        out["more"] = more
        return out


def present(figures: dict[str, int]) -> dict[str, Any]:
    """The figures the API shows: rates and averages per visit."""
    visits = figures["visits"]
    return {
        "visitors": figures["visitors"],
        "visits": visits,
        "pageviews": figures["pageviews"],
        "views_per_visit": round(figures["pageviews"] / visits, 2) if visits else 0.0,
        "bounce_rate": round(figures["bounces"] / visits, 4) if visits else 0.0,
        "visit_duration": round(figures["duration"] / visits) if visits else 0,
    }


def _row(row: dict[str, Any], fields: tuple[str, ...], prefix: str | None) -> dict[str, Any]:
    shown = present(row) | {"events": row["events"]}
    out: dict[str, Any] = {}
    if prefix is not None:
        _, key, value = [*row["value"].split("\x1f", 2), "", ""][:3]
        out["key"], out["value"] = key, value
    else:
        out["value"] = row["value"]
    out.update({name: shown[name] for name in fields})
    return out


def realtime(conn: Connection, owner_id: int, site_id: int, now: datetime | None = None) -> dict[str, Any]:
    site = get_site(conn, owner_id, site_id)
    since = (now or utcnow()) - REALTIME_WINDOW
    return {
        "site_id": int(site["id"]),
        "window_seconds": int(REALTIME_WINDOW.total_seconds()),
        **raw.realtime(conn, int(site["id"]), since),
    }
