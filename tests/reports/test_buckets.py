"""Time buckets: every event lands in the span of the site's calendar it belongs to, across clock
changes and months of different lengths, on both engines' SQL."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import duckdb
import pytest

from sightline.reports import timeseries
from sightline.reports.filters import Filters
from sightline.store import schema
from sightline.store.dialects import DUCKDB
from sightline.store.feed import micros
from tests.reports.logged import logged_run
from tests.support.store_rows import EVENTS, VISITS

SITE = 1
ZONE = ZoneInfo("America/New_York")  # clocks went back on 1 November 2026: a day of 25 hours
FIRST = datetime(2026, 9, 28, tzinfo=ZONE)
LAST = datetime(2026, 12, 3, tzinfo=ZONE)


@pytest.fixture(scope="module")
def store() -> tuple[duckdb.DuckDBPyConnection, list[datetime]]:
    """One pageview (and one visit) every 50 minutes from FIRST to LAST."""
    con = duckdb.connect()
    for statement in schema.DUCKDB:
        con.execute(statement)
    times = []
    at = FIRST.astimezone(UTC)
    while at < LAST:
        times.append(at)
        at += timedelta(minutes=50)
    con.execute(
        f"INSERT INTO {EVENTS} SELECT $site, t, row_number() OVER (), hash(t), row_number() OVER (), "
        "'pageview', '/', [], t, "
        "'(none)', '', '', '', 'Chrome', 'Linux', 'desktop', '(none)', '', '', 'direct' "
        "FROM (SELECT unnest($t) AS t)",
        {"site": SITE, "t": [micros(t) for t in times]},
    )
    con.execute(
        f"INSERT INTO {VISITS} SELECT site_id, visit, visitor, visitor, time, time, time, 1, 0, '/', time, "
        "'/', time, "
        "source, utm_source, utm_medium, utm_campaign, browser, os, device, country, region, city, id, "
        "channel FROM events"
    )
    return con, times


def _expected(times: list[datetime], spans: list[tuple[datetime, datetime]]) -> list[int]:
    return [sum(1 for t in times if a <= t < b) for a, b in spans]


def _days(first: datetime, count: int) -> list[tuple[datetime, datetime]]:
    starts = [
        datetime.combine(first.date() + timedelta(days=i), datetime.min.time(), ZONE)
        for i in range(count + 1)
    ]
    return [(a.astimezone(UTC), b.astimezone(UTC)) for a, b in itertools.pairwise(starts)]


@pytest.mark.parametrize("first", [datetime(2026, 10, 25, tzinfo=ZONE), datetime(2026, 11, 10, tzinfo=ZONE)])
def test_days_across_a_clock_change_and_without_one_hold_their_own_events(
    store: tuple[duckdb.DuckDBPyConnection, list[datetime]], first: datetime
) -> None:
    con, times = store
    spans = _days(first, 14)
    lengths = {b - a for a, b in spans}
    assert (timedelta(hours=25) in lengths) == (first.month == 10)
    seen: list[str] = []
    points = timeseries.series(logged_run(con, seen), DUCKDB, SITE, spans, Filters())
    assert [p["pageviews"] for p in points] == _expected(times, spans)
    assert [p["visits"] for p in points] == _expected(times, spans)  # visits by their start
    assert ("WHEN start <" in " ".join(seen)) == (first.month == 10)  # one division without a clock change


def test_months_of_different_lengths_hold_their_own_events(
    store: tuple[duckdb.DuckDBPyConnection, list[datetime]],
) -> None:
    con, times = store
    starts = [datetime(2026, month, 1, tzinfo=ZONE) for month in (10, 11, 12)]
    spans = [(a.astimezone(UTC), b.astimezone(UTC)) for a, b in itertools.pairwise(starts)]
    points = timeseries.series(logged_run(con, []), DUCKDB, SITE, spans, Filters())
    assert [p["pageviews"] for p in points] == _expected(times, spans)
    assert all(p["pageviews"] > 800 for p in points)
