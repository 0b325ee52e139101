"""Whole-site figures per local day in the site's own time zone, for fast daily charts.

A local day of a zone that is not UTC straddles two UTC days, so a daily chart would otherwise
merge 24 hourly sketches per point. The rollup job therefore also keeps, for dimension
``total`` only, one ``report_daily`` row per local day: dimension ``day_local``, value = the zone,
bucket = days since 1970-01-01 of the local date. A marker row (bucket -1) names the zone the
rows were built for. When a site's zone changes, the next batch of its events rebuilds its
local days from its hourly rows (a few thousand rows at most); until then, and for zones whose
offset is not a whole number of hours, charts read the hourly rows instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, delete, insert, select

from sightline.reports.sketch import merge_all
from sightline.storage.schema import report_daily, report_hourly, sites

LOCAL = "day_local"
MARKER = -1
EPOCH = date(1970, 1, 1).toordinal()
d = report_daily.c


@lru_cache(maxsize=65536)
def local_day(zone: str, hour: int) -> int | None:
    """The local date (days since the epoch) of a UTC hour; None if the zone is not on whole hours."""
    moment = datetime.fromtimestamp(hour * 3600, UTC).astimezone(ZoneInfo(zone))
    offset = moment.utcoffset()
    if offset is None or offset.total_seconds() % 3600:
        return None
    return moment.date().toordinal() - EPOCH


def day_number(day: date) -> int:
    return day.toordinal() - EPOCH


def zones_of(conn: Connection, site_ids: Iterable[int]) -> dict[int, tuple[str, str | None]]:
    """Each site's zone, and the zone its local-day rows were built for (None: not built)."""
    ids = sorted(set(site_ids))
    zones = {
        row[0]: row[1]
        for row in conn.execute(select(sites.c.id, sites.c.timezone).where(sites.c.id.in_(ids)))
    }
    built = {
        row[0]: row[1]
        for row in conn.execute(
            select(d.site_id, d.value).where(d.site_id.in_(ids), d.dim == LOCAL, d.bucket == MARKER)
        )
    }
    return {site_id: (zone, built.get(site_id)) for site_id, zone in zones.items()}


def valid(conn: Connection, site_id: int, zone: str) -> bool:
    marker = select(d.value).where(d.site_id == site_id, d.dim == LOCAL, d.bucket == MARKER)
    return conn.execute(marker).scalar() == zone


def rebuild(conn: Connection, site_id: int, zone: str) -> None:
    """Replaces the site's local-day rows with ones built from its hourly rows for ``zone``."""
    conn.execute(delete(report_daily).where(d.site_id == site_id, d.dim == LOCAL))
    h = report_hourly.c
    days: dict[int, list[Any]] = {}
    query = select(h.bucket, h.pageviews, h.events, h.visits, h.bounces, h.duration, h.visitors).where(
        h.site_id == site_id, h.dim == "total"
    )
    for bucket, *counts, blob in conn.execute(query):
        day = local_day(zone, bucket)
        if day is None:
            return  # not a whole-hour zone (at some time): charts keep reading hourly rows
        entry = days.setdefault(day, [0, 0, 0, 0, 0, []])
        for i, value in enumerate(counts):
            entry[i] += int(value)
        entry[5].append(blob)
    rows = [
        {
            "site_id": site_id,
            "dim": LOCAL,
            "bucket": day,
            "value": zone,
            "pageviews": e[0],
            "events": e[1],
            "visits": e[2],
            "bounces": e[3],
            "duration": e[4],
            "visitors": merge_all(e[5]).dump(),
        }
        for day, e in days.items()
    ]
    marker = dict.fromkeys(("pageviews", "events", "visits", "bounces", "duration"), 0)
    rows.append(
        {"site_id": site_id, "dim": LOCAL, "bucket": MARKER, "value": zone, "visitors": None, **marker}
    )
    conn.execute(insert(report_daily), rows)
