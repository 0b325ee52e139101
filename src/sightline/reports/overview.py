"""Every site at a glance: each site's visitors, pageviews, change and series, never a query per site.

Each site's period is its own (its time zone; ``all`` from its own first day), and its figures are
those the dashboard shows for it: the summary's unique visitors and pageviews of the period
(``queries.totals`` without filters), the change of its visitors against the previous period
(``Period.previous``: for a period that reaches now, up to the same time of day) and the time
series' visitors per hour or day (``timeseries``). Imported history is added as the summary and
the day-by-day series add it.

With a layer of kept figures (``overview_days``), every site's ended days and hours are kept
between requests and a request reads the hour going on; the first one after a start reads every
day of every site in one query. A store without that layer (no change records) is answered by one
statement for every site: sites whose periods are the same (one time zone, the
usual case: one part for all of them) share one part of it, and the parts are joined by ``UNION
ALL``. A part reads the events of its sites in the period and in the previous period once for the
visitors and pageviews of each bucket and of the previous period, and once more for the unique
visitors of the whole period. Visitors are counted exactly on both engines (the dashboard's
summary estimates them for a span of 500,000 events or more on the embedded store, within
0.1-0.3 %, docs/reports.md).
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter or a site id)
from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, select

from sightline.database.tables.imports import imports
from sightline.imports.figures import ImportedFigures
from sightline.reports import overview_days
from sightline.reports.filters import Filters
from sightline.reports.imported import History
from sightline.reports.overview_days import Ledger
from sightline.reports.period import Period, first_day_of, period_of
from sightline.reports.queries import VIEWED, Query, bucket
from sightline.store.dialects import Dialect, Params
from sightline.store.epoch import micros

TOTAL, PREVIOUS = -1, 0  # the row of the whole period's visitors, and of the previous period


class StoreReader(Protocol):
    dialect: Dialect

    def query(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]: ...

    def columns(self, sql: str, params: dict[str, Any]) -> dict[str, Any]: ...


@dataclass
class Site:
    """One site's period, its comparison and its figures as the store answers them."""

    row: Mapping[str, Any]
    period: Period
    history: History
    visitors: int = 0
    pageviews: int = 0
    previous: dict[str, int] = field(default_factory=lambda: {"visitors": 0, "pageviews": 0})
    points: list[dict[str, int]] = field(default_factory=list)

    @property
    def id(self) -> int:
        return int(self.row["id"])


@functools.lru_cache(maxsize=512)
def _buckets(period: Period) -> list[tuple[datetime, datetime]]:
    """A period's buckets (sites sharing a time zone share their periods: made once)."""
    return period.buckets()


@functools.lru_cache(maxsize=512)
def _labels(period: Period) -> list[str]:
    return [period.label(a) for a, _ in _buckets(period)]


def imported_sites(conn: Connection) -> set[int]:
    """The sites with a finished import (one query, not one per site)."""
    found = conn.execute(select(imports.c.site_id).where(imports.c.status == "done").distinct())
    return {int(site_id) for (site_id,) in found}


def overview(
    store: StoreReader,
    sites: Sequence[Mapping[str, Any]],
    range_name: str,
    raw_from: str | None,
    raw_to: str | None,
    now: datetime,
    imported: ImportedFigures | None = None,
    with_imports: frozenset[int] | set[int] = frozenset(),
    wanted: bool = True,
) -> dict[str, Any]:
    """The answer of ``GET /api/overview``: every site of ``sites``, most visitors first."""
    # A bad range is 422 with no sites too.
    period_of(range_name, raw_from, raw_to, ZoneInfo("UTC"), now)
    asked: list[Site] = []
    for row in sites:
        zone = ZoneInfo(row["timezone"])
        site_id = int(row["id"])
        figures = imported if site_id in with_imports else None
        since = None
        if range_name == "all":
            since = first_day_of(row["created_at"], zone, figures.first_day(site_id) if figures else None)
        period = period_of(range_name, raw_from, raw_to, zone, now, "previous", since)
        history = History(figures, site_id, zone, wanted, Filters())
        asked.append(Site(row, period, history))
    ledger = overview_days.ledger_of(store) if asked else None
    if asked and ledger is not None:
        _read_kept(store, ledger, asked, now)
    elif asked:
        _read(store, asked)
    for site in asked:
        _add_imported(site)
    shown = [_shown(site) for site in asked]
    shown.sort(key=lambda row: (-row["visitors"], str(row["name"]).lower(), row["site_id"]))
    return {"range": range_name, "sites": shown}


def _read(store: StoreReader, asked: Sequence[Site]) -> None:
    """Fills every site's figures from one statement."""
    dialect = store.dialect
    params = Params(dialect)
    groups: dict[tuple[Period, Period], list[Site]] = {}
    for site in asked:
        groups.setdefault((site.period, site.period.previous()), []).append(site)
    parts = [
        _part(dialect, params, period, previous, [s.id for s in members])
        for (period, previous), members in groups.items()
    ]
    by_id = {site.id: site for site in asked}
    for site in asked:
        site.points = [{"visitors": 0, "pageviews": 0} for _ in _buckets(site.period)]
    for site_id, bucket_number, visitors, pageviews in store.query(" UNION ALL ".join(parts), params.values):
        site = by_id[int(site_id)]
        seen, viewed = int(visitors or 0), int(pageviews or 0)
        if int(bucket_number) == TOTAL:
            site.visitors = seen
        elif int(bucket_number) == PREVIOUS:
            site.previous = {"visitors": seen, "pageviews": viewed}
        else:
            site.points[int(bucket_number) - 1] = {"visitors": seen, "pageviews": viewed}
    for site in asked:
        site.pageviews = sum(point["pageviews"] for point in site.points)


def _read_kept(store: StoreReader, ledger: Ledger, asked: Sequence[Site], now: datetime) -> None:
    """Fills every site's figures from its kept figures and the pieces read now (``overview_days``)."""
    periods = {site.id: (site.period, site.period.previous()) for site in asked}
    found = ledger.answer(store, periods, micros(now))
    for site in asked:
        current, previous = found[site.id]
        site.points = [{"visitors": n, "pageviews": pv} for n, pv in current.points]
        site.visitors, site.pageviews = current.visitors, current.pageviews
        site.previous = {"visitors": previous.visitors, "pageviews": previous.pageviews}


def _part(dialect: Dialect, params: Params, period: Period, previous: Period, site_ids: list[int]) -> str:
    """The rows (site, bucket, visitors, pageviews) of the sites sharing one period: each bucket
    of the period (1, 2, ...), the previous period (``PREVIOUS``) and the whole period's visitors
    (``TOTAL``)."""
    query = Query(dialect, 0, (period.start, period.end), Filters())
    query.params = params  # one statement: every part binds its values into the same parameters
    listed = ", ".join(str(int(site_id)) for site_id in sorted(site_ids))
    low, high = query.bind(micros(period.start)), query.bind(micros(period.end))
    previous_low, previous_high = query.bind(micros(previous.start)), query.bind(micros(previous.end))
    bucket_of = bucket(query, _buckets(period), "time")
    current = f"time >= {low} AND time < {high}"
    return (
        f"SELECT site_id, i, count(DISTINCT visitor), sum(pv) FROM (SELECT site_id, visitor, "
        f"CASE WHEN time < {low} THEN {PREVIOUS} ELSE {bucket_of} END AS i, "
        f"CASE WHEN {VIEWED} THEN 1 ELSE 0 END AS pv FROM events WHERE site_id IN ({listed}) "
        f"AND (({current}) OR (time >= {previous_low} AND time < {previous_high}))) AS e "
        f"GROUP BY site_id, i UNION ALL SELECT site_id, {TOTAL}, count(DISTINCT visitor), 0 FROM events "
        f"WHERE site_id IN ({listed}) AND {current} GROUP BY site_id"
    )


def _add_imported(site: Site) -> None:
    """Imported history, as the summary (totals) and the day-by-day series (points) add it."""
    reason = site.history.left_out()
    if reason is None:
        totals = _figures(site.visitors, site.pageviews)
        site.history.add_totals(totals, site.period, reason)
        site.visitors, site.pageviews = totals["visitors"], totals["pageviews"]
        earlier = _figures(**site.previous)
        site.history.add_totals(earlier, site.period.previous(), reason)
        site.previous = {"visitors": earlier["visitors"], "pageviews": earlier["pageviews"]}
    hourly = site.history.left_out(hourly=site.period.interval == "hour")
    if hourly is None:
        points = [_figures(**point) for point in site.points]
        site.history.add_points(_buckets(site.period), points, site.period, hourly)
        site.points = [{"visitors": f["visitors"], "pageviews": f["pageviews"]} for f in points]


def _figures(visitors: int, pageviews: int) -> dict[str, int]:
    return {"visitors": visitors, "visits": 0, "pageviews": pageviews, "bounces": 0, "duration": 0}


def _shown(site: Site) -> dict[str, Any]:
    before = site.previous["visitors"]
    change = round((site.visitors - before) / before, 4) if before else None
    return {
        "site_id": site.id,
        "name": site.row["name"],
        "domain": site.row["domain"],
        "timezone": site.row["timezone"],
        "from": site.period.first_day.isoformat(),
        "to": site.period.last_day.isoformat(),
        "interval": site.period.interval,
        "visitors": site.visitors,
        "pageviews": site.pageviews,
        "previous_visitors": before,
        "change": change,
        "series": [
            {"date": label, "visitors": point["visitors"]}
            for label, point in zip(_labels(site.period), site.points, strict=True)
        ],
    }
