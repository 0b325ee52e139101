"""Unique visitors of big spans: linear counting stays within 1 % of the exact count."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import duckdb
import pytest

from sightline.reports import counting, queries, tables, timeseries
from sightline.reports.filters import IS, Filter, Filters
from sightline.store import schema
from sightline.store.dialects import CLICKHOUSE, DUCKDB
from sightline.store.feed import key_of, micros
from tests.reports.logged import logged_run
from tests.support.store_rows import EVENTS, VISITS

SITE = 1
START = datetime(2026, 11, 1, tzinfo=UTC)
DAYS = 10
VISITORS = 30_000  # 3,000 a day and 1,000 back the next day, three events each: 120,000 events
HOUR = 3_600_000_000


@pytest.fixture(scope="module")
def store() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(config={"threads": 2})
    for statement in schema.DUCKDB:
        con.execute(statement)
    day = 86_400_000_000
    # Visitor i comes on day i % DAYS; a third of them come back the next day.
    con.execute(
        "INSERT INTO events (site_id, time, id, visitor, visit, name, path, props, visit_start, source, "
        "utm_source, utm_medium, utm_campaign, browser, os, device, country, region, city, channel) "
        "SELECT $site, t, row_number() OVER (), v, n, 'pageview', '/', [], t, '(none)', '', '', '', "
        "'Chrome', 'Linux', 'desktop', '(none)', '', '', 'direct' "
        "FROM (SELECT unnest($keys) AS v, unnest($numbers) AS n, "
        "$start + (unnest($days) * $day) + (unnest($hours) * $hour) AS t) "
        "CROSS JOIN range(3)",
        {
            "site": SITE,
            "keys": [key_of(SITE, f"visitor-{i}") for i in range(VISITORS)]
            + [key_of(SITE, f"visitor-{i}") for i in range(0, VISITORS, 3)],
            "numbers": [i + 1 for i in range(VISITORS)] + [i + 1 for i in range(0, VISITORS, 3)],
            "days": [i % DAYS for i in range(VISITORS)]
            + [(i % DAYS + 1) % DAYS for i in range(0, VISITORS, 3)],
            "hours": [i % 20 for i in range(VISITORS)] + [i % 20 for i in range(0, VISITORS, 3)],
            "start": micros(START),
            "day": day,
            "hour": HOUR,
        },
    )
    # One visit per visitor, on one of three browsers.
    con.execute(
        f"INSERT INTO {VISITS} SELECT site_id, visit, min(visitor), min(visitor), "
        "min(time), min(time), max(time), "
        "count(*), 0, '/', min(time), '/', max(time), '(none)', '', '', '', "
        "['Chrome', 'Firefox', 'Safari'][(min(visitor) % 3)::INTEGER + 1], 'Linux', 'desktop', "
        "'(none)', '', '', max(id), 'direct' FROM events GROUP BY site_id, visit"
    )
    # Each event carries its visit's start and attributes, as the feed writes them.
    con.execute(
        "UPDATE events SET visit_start = v.start, browser = v.browser FROM visits AS v "
        "WHERE events.visit = v.visit"
    )
    yield con
    con.close()


def _exact(con: duckdb.DuckDBPyConnection, a: datetime, b: datetime) -> int:
    row = con.execute(
        "SELECT count(DISTINCT visitor) FROM events WHERE time >= $a AND time < $b",
        {"a": micros(a), "b": micros(b)},
    ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_span_with_more_events_than_the_threshold_is_estimated_within_a_tenth_of_a_percent(
    store: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    seen: list[str] = []
    span = (START, START + timedelta(days=DAYS))
    figures = queries.totals(logged_run(store, seen), DUCKDB, SITE, span, Filters())
    exact = _exact(store, *span)
    assert exact == VISITORS
    assert any("bitstring_agg" in sql for sql in seen)
    assert abs(figures["visitors"] - exact) / exact < 0.001
    assert figures["pageviews"] == VISITORS * 3 + (VISITORS // 3) * 3


def test_each_day_of_a_big_time_series_is_estimated_within_one_percent(
    store: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    seen: list[str] = []
    days = [(START + timedelta(days=i), START + timedelta(days=i + 1)) for i in range(DAYS)]
    points = timeseries.series(logged_run(store, seen), DUCKDB, SITE, days, Filters())
    assert any("bitstring_agg" in sql for sql in seen)
    for (a, b), point in zip(days, points, strict=True):
        exact = _exact(store, a, b)
        assert exact > 3_000
        assert abs(point["visitors"] - exact) / exact < 0.01, (a, point["visitors"], exact)


def test_below_the_threshold_and_on_clickhouse_visitors_are_counted_exactly(
    store: duckdb.DuckDBPyConnection,
) -> None:
    seen: list[str] = []
    span = (START, START + timedelta(days=DAYS))
    assert counting.EXACT_BELOW > 120_000  # the store's events
    figures = queries.totals(logged_run(store, seen), DUCKDB, SITE, span, Filters())
    assert figures["visitors"] == VISITORS
    assert not any("bitstring_agg" in sql for sql in seen)
    assert counting.visitors(CLICKHOUSE, 10**9).sql == "count(DISTINCT visitor)"


def test_each_value_of_a_big_breakdown_with_few_values_is_estimated_within_one_percent(
    store: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    seen: list[str] = []
    span = (START, START + timedelta(days=DAYS))
    rows, more = tables.breakdown(
        logged_run(store, seen), DUCKDB, SITE, span, Filters(), "browser", "visitors", queries.Page(limit=10)
    )
    assert any("bitstring_agg" in sql for sql in seen)
    assert not more
    exact = dict(
        store.execute("SELECT browser, count(DISTINCT visitor) FROM visits GROUP BY browser").fetchall()
    )
    assert {row["value"] for row in rows} == {"Chrome", "Firefox", "Safari"}
    for row in rows:
        assert abs(row["visitors"] - exact[row["value"]]) / exact[row["value"]] < 0.01, row
        assert row["visits"] == exact[row["value"]]  # one visit each; visits stay exact
    assert [row["visitors"] for row in rows] == sorted((row["visitors"] for row in rows), reverse=True)


def test_a_big_pages_table_ranks_by_exact_pageviews_and_estimates_each_shown_pages_visitors(
    store: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    seen: list[str] = []
    span = (START, START + timedelta(days=DAYS))
    rows, more = tables.breakdown(
        logged_run(store, seen), DUCKDB, SITE, span, Filters(), "page", "visitors", queries.Page(limit=10)
    )
    assert not more
    [row] = rows
    assert row["value"] == "/"
    assert row["pageviews"] == 3 * (VISITORS + VISITORS // 3)  # ranked and shown exactly
    ranking, counted = seen
    assert "bitstring_agg" not in ranking  # the ranking is a plain count
    assert "DISTINCT" not in ranking
    assert "bitstring_agg" in counted  # visitors counted for the shown values only
    exact = _exact(store, *span)
    assert abs(row["visitors"] - exact) / exact < 0.01, (row["visitors"], exact)


def test_a_breakdown_with_more_values_than_bitmaps_allow_counts_exactly() -> None:
    assert counting.per_value(DUCKDB, 10**7, counting.MAX_VALUES + 1) is counting.EXACT
    assert counting.per_value(DUCKDB, 10**7, counting.MAX_VALUES).sql != counting.EXACT.sql
    assert counting.per_value(CLICKHOUSE, 10**7, 3) is counting.EXACT


def test_a_saturated_bitmap_reads_as_a_floor_not_an_infinite_estimate() -> None:
    unique = counting.visitors(DUCKDB, 10**7, 1)
    size = 1 << counting.MAX_BITS
    assert unique.read(size) == size
    assert unique.read(0) == 0
    assert unique.read(size // 2) == round(size * 0.6931471805599453)


def test_a_visit_table_under_a_filter_on_events_is_one_query_that_counts_exactly(
    store: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    seen: list[str] = []
    span = (START, START + timedelta(days=DAYS))
    chosen = Filters(page="/")
    rows, _ = tables.breakdown(
        logged_run(store, seen), DUCKDB, SITE, span, chosen, "browser", "visitors", queries.Page()
    )
    assert len(seen) == 1  # the filter's semi-join over the events runs once
    assert "bitstring_agg" not in seen[0]
    exact = store.execute("SELECT browser, count(DISTINCT visitor) FROM visits GROUP BY 1").fetchall()
    assert {row["value"]: row["visitors"] for row in rows} == dict(exact)


@pytest.mark.parametrize("chosen", [Filters(page="/"), Filters(rules=(Filter("browser", IS, "Safari"),))])
def test_a_filtered_pages_table_reads_the_selection_once_and_estimates_the_shown_pages_visitors(
    store: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch, chosen: Filters
) -> None:
    """Ranked and counted in one query over the selected visits' events (read once), after one
    count of the span's visits that sizes the bitmaps."""
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    seen: list[str] = []
    span = (START, START + timedelta(days=DAYS))
    rows, more = tables.breakdown(
        logged_run(store, seen), DUCKDB, SITE, span, chosen, "page", "pageviews", queries.Page()
    )
    reading = [sql for sql in seen if "FROM events" in sql]
    assert len(reading) == 1
    assert "bitstring_agg" in reading[0]
    assert not more
    browsers = "" if chosen.page else "WHERE browser = 'Safari'"
    exact = store.execute(
        "SELECT count(DISTINCT visitor), count(*) FROM events WHERE name = 'pageview' AND visit IN "
        f"(SELECT visit FROM visits {browsers})"
    ).fetchall()[0]
    [row] = rows
    assert row["value"] == "/"
    assert row["pageviews"] == exact[1]
    assert abs(row["visitors"] - exact[0]) / exact[0] < 0.01, (row, exact)


@pytest.mark.parametrize("late", [False, True], ids=["in order", "first event fed last"])
def test_the_estimate_counts_visitors_whose_visit_began_before_the_span(
    monkeypatch: pytest.MonkeyPatch, late: bool
) -> None:
    """The estimate reads the visits that started in the span and the span's events of visits that
    started before it: a visitor seen only in the span's first minutes, on a visit begun the night
    before, is counted, and one seen only before the span is not; also when the visit's event
    before midnight reached the server after the one after it (that event was fed as the start of
    its visit, ``late``)."""
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    con = duckdb.connect()
    for statement in schema.DUCKDB:
        con.execute(statement)
    midnight, minute = micros(START), 60_000_000
    rows = []  # (visitor, visit start, event times)
    for i in range(2_000):  # began at 23:50; one event before midnight, one after
        rows.append((i, midnight - 10 * minute, [midnight - 10 * minute, midnight + 5 * minute]))
    for i in range(2_000, 3_000):  # inside the span
        rows.append((i, midnight + 60 * minute, [midnight + 60 * minute, midnight + 61 * minute]))
    for i in range(3_000, 4_000):  # before the span only
        rows.append((i, midnight - 60 * minute, [midnight - 60 * minute]))
    events, visits = [], []
    for who, began, times in rows:
        visitor = key_of(SITE, f"crossing-{who}")
        events += [(visitor, time, time if late else began, who + 1) for time in times]
        visits.append((who + 1, visitor, began, times[-1], len(times)))
    con.execute(
        f"INSERT INTO {EVENTS} SELECT $site, t, row_number() OVER (), v, n, 'pageview', '/', [], began, "
        "'(none)', '', '', '', 'Chrome', 'Linux', 'desktop', '(none)', '', '', 'direct' "
        "FROM (SELECT unnest($v) AS v, unnest($t) AS t, unnest($b) AS began, unnest($n) AS n)",
        {"site": SITE, **{k: [e[i] for e in events] for i, k in enumerate(("v", "t", "b", "n"))}},
    )
    con.execute(
        f"INSERT INTO {VISITS} SELECT $site, u, v, v, b, b, last, n, 0, '/', b, '/', last, "
        "'(none)', '', '', '', 'Chrome', 'Linux', 'desktop', '(none)', '', '', 0, 'direct' "
        "FROM (SELECT unnest($u) AS u, unnest($v) AS v, unnest($b) AS b, unnest($last) AS last, "
        "unnest($n) AS n)",
        {"site": SITE, **{k: [v[i] for v in visits] for i, k in enumerate(("u", "v", "b", "last", "n"))}},
    )
    seen: list[str] = []
    span = (START, START + timedelta(days=1))
    figures = queries.totals(logged_run(con, seen), DUCKDB, SITE, span, Filters())
    assert any("bitstring_agg" in sql for sql in seen)
    assert figures["visits"] == 1_000  # visits that started in the span
    assert figures["pageviews"] == 2_000 + 2_000  # the span's events
    assert abs(figures["visitors"] - 3_000) / 3_000 < 0.01, figures["visitors"]


def test_the_visitors_of_a_filtered_big_span_are_estimated_within_one_percent_per_period_and_day(
    store: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A selection holds at most the span's visits: their count decides the bitmaps (one cheap
    count), whatever few visits the filters keep."""
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    chosen = Filters(rules=(Filter("browser", IS, "Firefox"),))
    seen: list[str] = []
    span = (START, START + timedelta(days=DAYS))
    figures = queries.totals(logged_run(store, seen), DUCKDB, SITE, span, chosen)
    assert any("bitstring_agg" in sql for sql in seen)
    exact = store.execute(
        "SELECT count(DISTINCT visitor), count(*) FROM visits WHERE browser = 'Firefox'"
    ).fetchall()[0]
    assert abs(figures["visitors"] - exact[0]) / exact[0] < 0.01, (figures, exact)
    assert figures["visits"] == exact[1]
    days = [(START + timedelta(days=i), START + timedelta(days=i + 1)) for i in range(DAYS)]
    points = timeseries.series(logged_run(store, []), DUCKDB, SITE, days, chosen)
    for (a, b), point in zip(days, points, strict=True):
        truth = store.execute(
            "SELECT count(DISTINCT visitor) FROM visits WHERE browser = 'Firefox' "
            "AND start >= $a AND start < $b",
            {"a": micros(a), "b": micros(b)},
        ).fetchall()[0][0]
        assert abs(point["visitors"] - truth) / truth < 0.01, (a, point, truth)
