"""The reports of one site: summary, time series, breakdowns and realtime, as the console API shows them.

Every collected figure is one query on the analytics store (``queries``), whichever engine holds
it; the answer says so in ``"source": "store"``. Imported history (``sightline.imports``) is added
where the import has the figure: the summary, the day-by-day series and the breakdowns of the
dimensions imports hold, unless filters are set or the request says ``imported=false``; every
answer's ``imported`` says whether imported figures are in it, or why not.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from sqlalchemy import Connection

from sightline.database.types import utcnow
from sightline.errors import ApiError
from sightline.goals.service import rows_of
from sightline.imports.figures import ImportedFigures
from sightline.reports import (
    autocapture,
    goal_days,
    goals,
    heatmaps,
    queries,
    series_days,
    tables,
    timeseries,
)
from sightline.reports.filters import Filters, Goal
from sightline.reports.imported import History
from sightline.reports.kept_figures import kept_of
from sightline.reports.params import DIMENSIONS, Query
from sightline.reports.period import REALTIME_MINUTES as REALTIME_MINUTES
from sightline.reports.period import Period, first_day_of, period_of
from sightline.reports.realtime import ledger_of as kept_realtime
from sightline.reports.realtime import plain
from sightline.sites.service import get_site
from sightline.store.dialects import Dialect

REALTIME_WINDOW = timedelta(minutes=5)
# A comparison's earlier period is computed here while the request's thread computes the current one:
# the store answers both at once, on both cores (a period's queries keep about 1.6 of them busy).
# Few threads, kept: each holds its own connection to the store process.
_EARLIER = ThreadPoolExecutor(max_workers=4, thread_name_prefix="reports-earlier")


class StoreReader(Protocol):
    """What reports need of the analytics store (``sightline.store.client.StoreClient``)."""

    dialect: Dialect

    def query(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]: ...


class Report:
    """One request's site, period and filters."""

    def __init__(
        self,
        store: StoreReader,
        site: Any,
        query: Query,
        now: datetime,
        goals: Sequence[Goal] = (),
        imported: ImportedFigures | None = None,
    ) -> None:
        self.goals = list(goals)
        self.filters = _resolved(query.filters, self.goals)
        self.store = store
        self.run = queries.Runner(store)
        self.dialect = store.dialect
        self.site = site
        # Realtime compares with nothing: a comparison asked for is left out.
        self.query = replace(query, compare=False) if query.range == "realtime" else query
        self.now = now
        self.zone = ZoneInfo(site["timezone"])
        since = None
        if query.range == "all":
            first_imported = imported.first_day(self.site_id) if imported is not None else None
            since = first_day_of(site["created_at"], self.zone, first_imported)
        self.period = period_of(
            query.range, query.date_from, query.date_to, self.zone, now, query.comparison, since
        )
        self.history = History(imported, int(site["id"]), self.zone, query.imported, self.filters)

    @classmethod
    def open(
        cls,
        conn: Connection,
        owner_id: int,
        site_id: int,
        query: Query,
        store: StoreReader,
        now: datetime | None = None,
    ) -> Report:
        site = get_site(conn, owner_id, site_id)
        return cls(store, site, query, now or utcnow(), goals_of(conn, site_id), ImportedFigures(conn.engine))

    @property
    def site_id(self) -> int:
        return int(self.site["id"])

    def meta(self, period: Period) -> dict[str, Any]:
        out: dict[str, Any] = {
            "site_id": self.site_id,
            "timezone": self.site["timezone"],
            "range": {"name": self.query.range, **period.describe()},
            "filters": self.filters.describe(),
            "source": "store",
        }
        if self.query.compare:
            out["previous_range"] = period.previous().describe()
        return out

    def totals(self, period: Period) -> dict[str, int]:
        """The period's totals; those of a period that ended (a comparison's earlier period) kept
        between requests (``series_days.ended``)."""
        span = (period.start, period.end)
        return series_days.ended(
            kept_of(self.store),
            self.site_id,
            span,
            f"totals {self.filters!r}",
            lambda: queries.totals(self.run, self.dialect, self.site_id, span, self.filters),
        )

    def figures(self, period: Period, reason: str | None) -> dict[str, int]:
        """The period's totals, with the imported ones unless ``reason`` says why not."""
        out = self.totals(period)
        self.history.add_totals(out, period, reason)
        return out

    def summary(self) -> dict[str, Any]:
        period = self.period
        out = self.meta(period)
        reason = self.history.left_out()
        earlier = (
            _EARLIER.submit(lambda: self.figures(period.previous(), reason)) if self.query.compare else None
        )
        out["current"] = present(self.figures(period, reason))
        out["previous"] = present(earlier.result()) if earlier is not None else None
        out["imported"] = self.history.note(reason, (period.start, period.end))
        return out

    def points(self, period: Period, reason: str | None = "unavailable") -> list[dict[str, Any]]:
        spans = period.buckets()
        kept = kept_of(self.store)
        figures = timeseries.series(self.run, self.dialect, self.site_id, spans, self.filters, kept)
        self.history.add_points(spans, figures, period, reason)
        return [{"time": period.label(a), **present(f)} for (a, _), f in zip(spans, figures, strict=True)]

    def timeseries(self) -> dict[str, Any]:
        out = self.meta(self.period)
        reason = self.history.left_out(hourly=self.period.interval != "day")
        out["interval"] = self.period.interval
        earlier = (
            _EARLIER.submit(lambda: self.points(self.period.previous(), reason))
            if self.query.compare
            else None
        )
        out["points"] = self.points(self.period, reason)
        out["previous"] = earlier.result() if earlier is not None else None
        out["imported"] = self.history.note(reason, (self.period.start, self.period.end))
        return out

    def breakdown(self) -> dict[str, Any]:
        assert self.query.dimension is not None
        dimension = DIMENSIONS[self.query.dimension]
        span = (self.period.start, self.period.end)
        page = queries.Page(self.query.limit, self.query.offset, self.query.search)
        if dimension.dim in autocapture.REPORTS:
            found, more = autocapture.breakdown(
                self.run, self.dialect, self.site_id, span, self.filters, dimension.dim, page, self.query.name
            )
            return self._rows(found, more)
        if dimension.dim == "heatmap_pages":
            found, more = heatmaps.pages(self.run, self.dialect, self.site_id, span, self.filters, page)
            return self._rows(found, more)
        if dimension.dim == "clicked_elements":
            assert self.query.name is not None
            found, more = heatmaps.elements(
                self.run,
                self.dialect,
                self.site_id,
                span,
                self.filters,
                page,
                self.query.name,
                self.query.viewport,
            )
            out = self._rows(found, more)
            if self.query.viewport is not None:
                out["viewport"] = self.query.viewport
            return out
        if dimension.dim == "goal":
            ledger = goal_days.ledger_of(self.store)
            kept = goal_days.Days(ledger, self.zone, self.now) if ledger is not None else None
            found, more = goals.breakdown(
                self.run, self.dialect, self.site_id, span, self.filters, self.goals, page, kept
            )
            return self._rows(found, more)
        reason = self.history.left_out(dimension=dimension.dim)
        days = self.history.days(self.period)
        if reason is None and days is not None:
            rows, more = self.history.merged(
                self.run, self.dialect, span, days, dimension.dim, dimension.order, page
            )
        else:
            rows, more = tables.breakdown(
                self.run,
                self.dialect,
                self.site_id,
                span,
                self.filters,
                dimension.dim,
                dimension.order,
                page,
                self.query.name,
                kept_of(self.store),
                self.period.buckets(),
            )
        shown = [_row(row, dimension.fields, self.query.name is not None) for row in rows]
        out = self._rows(shown, more)
        out["imported"] = self.history.note(reason)
        return out

    def web_vitals(self) -> dict[str, Any]:
        out = self.meta(self.period)
        span = (self.period.start, self.period.end)
        out["vitals"] = autocapture.vitals(self.run, self.dialect, self.site_id, span, self.filters)
        return out

    def heatmap(self) -> dict[str, Any]:
        """One page's clicks for the overlay: per element and position cell, and per width class."""
        assert self.query.path is not None
        out = self.meta(self.period)
        span = (self.period.start, self.period.end)
        path, viewport = self.query.path, self.query.viewport
        found, more = heatmaps.spots(self.run, self.dialect, self.site_id, span, self.filters, path, viewport)
        widths = heatmaps.widths(self.run, self.dialect, self.site_id, span, self.filters, path)
        out.update(
            path=path,
            viewport=viewport,
            clicks=sum(widths.values()) if viewport is None else widths[viewport],
            viewports=widths,
            spots=found,
            more=more,
        )
        return out

    def _rows(self, rows: list[dict[str, Any]], more: bool) -> dict[str, Any]:
        out = self.meta(self.period)
        out["dimension"] = self.query.dimension
        if self.query.name is not None:
            out["name"] = self.query.name
        out["rows"] = rows
        out["more"] = more
        if self.query.offset:
            out["offset"] = self.query.offset
        return out


def goals_of(conn: Connection, site_id: int) -> list[Goal]:
    """The site's goals as reports need them."""
    fields = (
        "id",
        "name",
        "kind",
        "match",
        "path",
        "event",
        "prop_key",
        "prop_value",
        "revenue_prop",
        "currency",
    )
    return [Goal(**{name: row[name] for name in fields}) for row in rows_of(conn, site_id)]


def _resolved(filters: Filters, known: Sequence[Goal]) -> Filters:
    """The filters with their goals; a goal filter naming no goal of the site is refused."""
    try:
        return filters.with_goals({goal.id: goal for goal in known})
    except KeyError as error:
        raise ApiError(
            422, "invalid_parameter", "The parameter 'goal' names no goal of this site.", field="goal"
        ) from error


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


def _row(row: dict[str, Any], fields: tuple[str, ...], props: bool) -> dict[str, Any]:
    shown = present(row) | {"events": row["events"]}
    out: dict[str, Any] = {}
    if props:
        key, _, value = row["value"].partition("\x1f")
        out["key"], out["value"] = key, value
    else:
        out["value"] = row["value"]
    out.update({name: shown[name] for name in fields})
    return out


def realtime(
    conn: Connection, owner_id: int, site_id: int, store: StoreReader, now: datetime | None = None
) -> dict[str, Any]:
    return realtime_of(get_site(conn, owner_id, site_id), store, now)


def realtime_of(site: Any, store: StoreReader, now: datetime | None = None) -> dict[str, Any]:
    """Visitors of the last five minutes, the pages they view (the store is seconds behind), and
    visitors and pageviews in each of the last 30 minutes (the current one still running)."""
    until = now or utcnow()
    since = until - REALTIME_WINDOW
    first = until.replace(second=0, microsecond=0) - timedelta(minutes=REALTIME_MINUTES - 1)
    window = (since, until + timedelta(minutes=1))
    kept = kept_realtime(store)
    if kept is not None:
        found = kept.answer(store.query, store.dialect, int(site["id"]), window, first, REALTIME_MINUTES)
    else:
        found = plain(store.query, store.dialect, int(site["id"]), window, first, REALTIME_MINUTES)
    return {
        "site_id": int(site["id"]),
        "window_seconds": int(REALTIME_WINDOW.total_seconds()),
        "visitors": found.visitors,
        "pageviews": found.pageviews,
        "pages": found.pages,
        "minutes": [
            {"start": (first + timedelta(minutes=n)).isoformat(), **point}
            for n, point in enumerate(found.minutes)
        ],
    }
