"""Every range of the reports and its comparison, as docs/reports.md describes them."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from sightline.reports.params import parse
from sightline.reports.period import RANGES, first_day_of, period_of

ZONE = ZoneInfo("Europe/Berlin")
# Friday 27 November 2026, 15:20 in Berlin (14:20 UTC).
NOW = datetime(2026, 11, 27, 14, 20, tzinfo=UTC)


def local(day: date, hour: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, tzinfo=ZONE).astimezone(UTC)


def test_every_documented_range_is_accepted_by_the_reports() -> None:
    assert set(RANGES) == {
        "realtime",
        "today",
        "yesterday",
        "7d",
        "30d",
        "month",
        "last_month",
        "12mo",
        "all",
        "custom",
    }
    for name in RANGES:
        extra = [("from", "2026-11-01"), ("to", "2026-11-03")] if name == "custom" else []
        assert parse([("range", name), *extra], ("range", "from", "to", "compare")).range == name


def test_today_until_15_00_compares_with_yesterday_until_15_00() -> None:
    period = period_of("today", None, None, ZONE, NOW)
    assert (period.start, period.end) == (local(date(2026, 11, 27)), local(date(2026, 11, 27), 16))
    before = period.previous()
    assert (before.first_day, before.last_day) == (date(2026, 11, 26), date(2026, 11, 26))
    assert (before.start, before.end) == (local(date(2026, 11, 26)), local(date(2026, 11, 26), 16))


def test_the_hourly_comparison_lines_up_hour_for_hour() -> None:
    period = period_of("today", None, None, ZONE, NOW)
    now, before = period.buckets(), period.previous().buckets()
    assert len(now) == len(before) == 16
    for (a, _), (b, _) in zip(now, before, strict=True):
        assert a - b == timedelta(days=1)


@pytest.mark.parametrize(
    ("name", "first", "last", "previous_first", "previous_last"),
    [
        ("7d", date(2026, 11, 21), date(2026, 11, 27), date(2026, 11, 14), date(2026, 11, 20)),
        ("30d", date(2026, 10, 29), date(2026, 11, 27), date(2026, 9, 29), date(2026, 10, 28)),
        ("month", date(2026, 11, 1), date(2026, 11, 27), date(2026, 10, 5), date(2026, 10, 31)),
        ("12mo", date(2025, 12, 1), date(2026, 11, 27), date(2024, 12, 4), date(2025, 11, 30)),
    ],
)
def test_a_period_reaching_now_compares_with_as_many_days_before_up_to_the_same_hour(
    name: str, first: date, last: date, previous_first: date, previous_last: date
) -> None:
    period = period_of(name, None, None, ZONE, NOW)
    assert (period.first_day, period.last_day, period.end) == (first, last, local(last, 16))
    before = period.previous()
    assert (before.first_day, before.last_day) == (previous_first, previous_last)
    assert (before.start, before.end) == (local(previous_first), local(previous_last, 16))
    assert len(before.buckets()) == len(period.buckets())


@pytest.mark.parametrize(
    ("name", "first", "last", "previous_first", "previous_last"),
    [
        ("yesterday", date(2026, 11, 26), date(2026, 11, 26), date(2026, 11, 25), date(2026, 11, 25)),
        ("last_month", date(2026, 10, 1), date(2026, 10, 31), date(2026, 8, 31), date(2026, 9, 30)),
    ],
)
def test_a_period_of_past_days_compares_with_as_many_whole_days_before(
    name: str, first: date, last: date, previous_first: date, previous_last: date
) -> None:
    period = period_of(name, None, None, ZONE, NOW)
    assert (period.start, period.end) == (local(first), local(last + timedelta(days=1)))
    before = period.previous()
    assert (before.start, before.end) == (local(previous_first), local(previous_last + timedelta(days=1)))
    # The daily buckets line up across the change from summer time in October.
    assert len(before.buckets()) == len(period.buckets())


def test_a_custom_range_compares_with_the_days_just_before_it() -> None:
    period = period_of("custom", "2026-03-01", "2026-03-10", ZONE, NOW)
    before = period.previous()
    assert (before.first_day, before.last_day) == (date(2026, 2, 19), date(2026, 2, 28))
    assert before.end == period.start


def test_all_time_runs_from_the_sites_first_day_or_its_earliest_import() -> None:
    since = first_day_of("2026-03-04T23:30:00+00:00", ZONE)
    assert since == date(2026, 3, 5)  # already the 5th in Berlin
    assert first_day_of("2026-03-04T10:00:00+00:00", ZONE, date(2025, 1, 1)) == date(2025, 1, 1)
    period = period_of("all", None, None, ZONE, NOW, since=since)
    assert (period.first_day, period.last_day, period.end) == (
        since,
        date(2026, 11, 27),
        local(NOW.date(), 16),
    )
    assert period.previous().last_day == date(2026, 3, 4)


def test_compare_year_is_the_same_days_a_year_before_up_to_the_same_hour() -> None:
    query = parse([("range", "today"), ("compare", "year")], ("range", "compare"))
    assert (query.compare, query.comparison) == (True, "year")
    before = period_of("today", None, None, ZONE, NOW, query.comparison).previous()
    assert (before.start, before.end) == (local(date(2025, 11, 27)), local(date(2025, 11, 27), 16))
    week = period_of("custom", "2028-02-27", "2028-03-02", ZONE, NOW, "year").previous()
    assert (week.first_day, week.last_day) == (date(2027, 2, 27), date(2027, 3, 3))  # as many days


@pytest.mark.parametrize(
    ("raw", "compare", "comparison"),
    [("true", True, "previous"), ("previous", True, "previous"), ("false", False, "previous")],
)
def test_compare_takes_true_previous_year_or_false(raw: str, compare: bool, comparison: str) -> None:
    query = parse([("compare", raw)], ("compare",))
    assert (query.compare, query.comparison) == (compare, comparison)


def test_realtime_is_the_last_30_minutes_minute_by_minute_with_this_minute_last() -> None:
    period = period_of("realtime", None, None, ZONE, NOW + timedelta(seconds=42))
    assert period.interval == "minute"
    assert (period.start, period.end) == (NOW - timedelta(minutes=29), NOW + timedelta(minutes=1))
    spans = period.buckets()
    assert len(spans) == 30
    assert spans[-1] == (NOW, NOW + timedelta(minutes=1))
