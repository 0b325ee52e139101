"""The time series of a big period (visitors on bitmaps) counts from the visits and reads only the
events of the visits that cross a span's edge: its pageviews, visits, bounces and duration stay
exactly those of the events, and its visitors within 1 %, whatever the visits cross."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import duckdb
import pytest

from sightline.reports import counting, queries, timeseries
from sightline.reports.filters import Filters
from sightline.store import schema
from sightline.store.dialects import DUCKDB
from sightline.store.feed import key_of, micros
from tests.reports.logged import logged_run
from tests.support.store_rows import EVENTS, VISITS

SITE = 1
ZONE = ZoneInfo("America/New_York")  # clocks went back on 1 November 2026: a day of 25 hours
FIRST = datetime(2026, 10, 28, tzinfo=ZONE)
DAYS = 8
MINUTE = 60_000_000


@pytest.fixture(scope="module")
def store() -> Iterator[duckdb.DuckDBPyConnection]:
    """About 6,000 visits of 1-6 events over ten days; some cross midnight, some began the day
    before the first span, some go on past the last, a few last hours; every tenth visit's
    later events were fed before its first (their ``visit_start`` is later than the visit's)."""
    rng = random.Random(7)
    con = duckdb.connect(config={"threads": 2})
    for statement in schema.DUCKDB:
        con.execute(statement)
    begin = micros(FIRST.astimezone(UTC)) - 86_400_000_000
    events: list[tuple[int, int, int, int, str, int]] = []
    visits: list[tuple[int, int, int, int, int, int]] = []
    for n in range(6_000):
        visitor = key_of(SITE, f"visitor-{rng.randrange(2_500)}")  # returning visitors
        start = begin + rng.randrange(0, (DAYS + 2) * 86_400_000_000)
        gaps = [rng.choice([1, 5, 20, 200]) * MINUTE for _ in range(rng.randrange(0, 6))]
        times = list(itertools.accumulate([start, *gaps]))
        names = [rng.choice(["pageview", "pageview", "pageview", "signup"]) for _ in times]
        fed_start = times[1] if n % 10 == 0 and len(times) > 1 else start  # a late first event
        for i, (at, name) in enumerate(zip(times, names, strict=True)):
            events.append((at, len(events) + 1, visitor, n, name, start if i == 0 else fed_start))
        pageviews = names.count("pageview")
        engaging = len(names) - pageviews
        visits.append((n, visitor, start, times[-1], pageviews, engaging))
    con.execute(
        f"INSERT INTO {EVENTS} SELECT $site, unnest($t), unnest($id), unnest($v), unnest($visit), "
        "unnest($name), '/', [], unnest($fed), '(none)', '', '', '', 'Chrome', 'Linux', 'desktop', "
        "'(none)', '', '', 'direct'",
        {
            "site": SITE,
            **{k: [e[i] for e in events] for i, k in enumerate(("t", "id", "v", "visit", "name", "fed"))},
        },
    )
    con.execute(
        f"INSERT INTO {VISITS} SELECT $site, unnest($n), unnest($n), unnest($v), unnest($s), unnest($s), "
        "unnest($last), "
        "unnest($pv), unnest($e), '/', unnest($s), '/', unnest($last), '(none)', '', '', '', 'Chrome', "
        "'Linux', 'desktop', '(none)', '', '', 0, 'direct'",
        {
            "site": SITE,
            **{k: [v[i] for v in visits] for i, k in enumerate(("n", "v", "s", "last", "pv", "e"))},
        },
    )
    yield con
    con.close()


def _days(count: int) -> list[tuple[datetime, datetime]]:
    starts = [
        datetime.combine(FIRST.date() + timedelta(days=i), datetime.min.time(), ZONE)
        for i in range(count + 1)
    ]
    return [(a.astimezone(UTC), b.astimezone(UTC)) for a, b in itertools.pairwise(starts)]


def _hours(first: datetime, count: int) -> list[tuple[datetime, datetime]]:
    return [(first + timedelta(hours=i), first + timedelta(hours=i + 1)) for i in range(count)]


def _exact(con: duckdb.DuckDBPyConnection, spans: list[tuple[datetime, datetime]]) -> list[tuple[int, int]]:
    out = []
    for a, b in spans:
        row = con.execute(
            "SELECT count(DISTINCT visitor), count(*) FILTER (WHERE name = 'pageview') FROM events "
            "WHERE time >= $a AND time < $b",
            {"a": micros(a), "b": micros(b)},
        ).fetchone()
        assert row is not None
        out.append((int(row[0]), int(row[1])))
    return out


@pytest.mark.parametrize(
    "spans",
    [
        _days(DAYS),  # a day of 25 hours among them
        [*_days(DAYS)[:-1], (_days(DAYS)[-1][0], _days(DAYS)[-1][0] + timedelta(hours=7))],  # ends now
        _hours(datetime(2026, 10, 30, 22, tzinfo=UTC), 30),
    ],
    ids=["days", "days ending now", "hours"],
)
def test_a_big_series_counts_every_spans_pageviews_exactly_and_its_visitors_within_one_percent(
    store: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch, spans: list[tuple[datetime, datetime]]
) -> None:
    exact = timeseries.series(logged_run(store, []), DUCKDB, SITE, spans, Filters())
    assert [(p["visitors"], p["pageviews"]) for p in exact] == _exact(store, spans)
    monkeypatch.setattr(counting, "EXACT_BELOW", 100)
    seen: list[str] = []
    estimated = timeseries.series(logged_run(store, seen), DUCKDB, SITE, spans, Filters())
    assert any("bitstring_agg" in sql for sql in seen)
    assert not any("count(DISTINCT" in sql for sql in seen)
    for point, truth in zip(estimated, exact, strict=True):
        assert {k: v for k, v in point.items() if k != "visitors"} == {
            k: v for k, v in truth.items() if k != "visitors"
        }
        assert abs(point["visitors"] - truth["visitors"]) <= max(1, truth["visitors"] // 100), (point, truth)
    crossing = store.execute(
        "SELECT count(*) FROM visits WHERE start < $b AND last >= $a AND (start < $a OR last >= $edge)",
        {"a": micros(spans[0][0]), "b": micros(spans[-1][1]), "edge": micros(spans[0][1])},
    ).fetchone()
    assert crossing is not None
    assert crossing[0] > 0  # visits that cross an edge are there


def test_stretches_merge_overlapping_ranges_and_give_up_past_the_limit() -> None:
    assert queries.stretches([(5, 9), (1, 3), (4, 4), (20, 30), (25, 26)]) == [(1, 9), (20, 30)]
    many = [(i * 10, i * 10 + 1) for i in range(queries.MAX_RANGES + 1)]
    assert queries.stretches(many) == [(0, queries.MAX_RANGES * 10 + 1)]
