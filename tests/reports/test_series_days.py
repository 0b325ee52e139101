"""A big period's time series keeps its ended spans between requests, with the same figures as
reading them, and reads a span again once an event in its window was fed or events were deleted."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import duckdb
import pytest

from sightline.reports import counting, queries, series_days, tables, timeseries
from sightline.reports.filters import IS_NOT, Filter, Filters
from sightline.reports.queries import Span
from sightline.store import schema
from sightline.store.dialects import DUCKDB
from sightline.store.feed import micros
from sightline.store.kept import Kept
from tests.reports.logged import logged_run

SITE = 1
START = datetime(2026, 3, 1, tzinfo=UTC)  # long past: every span has ended
DAYS = 6
VISITORS = 3_000  # visitor i on day i % DAYS at hour i % 24, three pageviews a minute apart
MINUTE = 60_000_000
SPANS = [(START + timedelta(days=i), START + timedelta(days=i + 1)) for i in range(DAYS)]


@pytest.fixture
def con(monkeypatch: pytest.MonkeyPatch) -> Iterator[duckdb.DuckDBPyConnection]:
    monkeypatch.setattr(counting, "EXACT_BELOW", 100)  # the period is big: estimated
    opened = duckdb.connect(config={"threads": 2})
    for statement in schema.DUCKDB:
        opened.execute(statement)
    opened.execute(
        "INSERT INTO events (site_id, time, id, visitor, visit, name, path, props, visit_start, source, "
        "utm_source, utm_medium, utm_campaign, browser, os, device, country, region, city) "
        "SELECT $site, $start + (i % $days) * 86400000000 + (i % 24) * 3600000000 + j * $minute, "
        "i * 3 + j + 1, hash(i), i + 1, 'pageview', '/', [], 0, '(none)', '', '', '', 'Chrome', 'Linux', "
        "'desktop', '(none)', '', '' FROM range($n) AS r(i), range(3) AS s(j)",
        {"site": SITE, "start": micros(START), "days": DAYS, "minute": MINUTE, "n": VISITORS},
    )
    _visits(opened)
    yield opened
    opened.close()


def _visits(con: duckdb.DuckDBPyConnection) -> None:
    """The visits table and the watermark as the feed would leave them."""
    con.execute("DELETE FROM visits")
    con.execute(
        "INSERT INTO visits SELECT site_id, visit, min(visitor), min(visitor), min(time), min(time), "
        "max(time), count(*), 0, '/', min(time), '/', max(time), '(none)', '', '', '', 'Chrome', 'Linux', "
        "'desktop', '(none)', '', '', max(id) FROM events GROUP BY site_id, visit"
    )
    con.execute("UPDATE events SET visit_start = v.start FROM visits AS v WHERE events.visit = v.visit")
    con.execute(
        "INSERT INTO store_state SELECT 'watermark', max(id) FROM events "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value"
    )


def _series(
    con: duckdb.DuckDBPyConnection, ledger: series_days.Ledger | None, seen: list[str]
) -> list[dict[str, int]]:
    return timeseries.series(logged_run(con, seen), DUCKDB, SITE, SPANS, Filters(), ledger)


def _reads_visits(seen: list[str]) -> int:
    """Queries that read the period's visits row by row (the count of the period aside)."""
    return sum("bitstring_agg" in sql for sql in seen)


def test_ended_spans_are_kept_with_the_figures_reading_them_gives(con: duckdb.DuckDBPyConnection) -> None:
    ledger = series_days.Ledger()
    plain = _series(con, None, [])
    first: list[str] = []
    assert _series(con, ledger, first) == plain
    assert _reads_visits(first) == 1
    assert len(ledger) == DAYS
    again: list[str] = []
    assert _series(con, ledger, again) == plain
    assert _reads_visits(again) == 0
    assert plain[0]["visits"] == VISITORS // DAYS
    assert plain[0]["pageviews"] == 3 * VISITORS // DAYS


def test_an_event_fed_into_a_kept_spans_window_makes_it_read_again(con: duckdb.DuckDBPyConnection) -> None:
    ledger = series_days.Ledger()
    _series(con, ledger, [])
    # A late pageview of visit 1 (day 0), fed after the spans were kept.
    con.execute(
        "INSERT INTO events SELECT site_id, time + 2 * $minute, (SELECT max(id) + 1 FROM events), visitor, "
        "visit, name, path, props, visit_start, source, utm_source, utm_medium, utm_campaign, browser, os, "
        "device, country, region, city FROM events WHERE id = 1",
        {"minute": MINUTE},
    )
    _visits(con)
    seen: list[str] = []
    figures = _series(con, ledger, seen)
    assert figures == _series(con, None, [])
    assert figures[0]["pageviews"] == 3 * VISITORS // DAYS + 1
    assert _reads_visits(seen) == 1  # days 0 to 2 again (the event's window), in one run
    assert len(ledger) == DAYS


def test_deleted_events_make_every_span_of_the_site_read_again(con: duckdb.DuckDBPyConnection) -> None:
    ledger = series_days.Ledger()
    _series(con, ledger, [])
    con.execute("DELETE FROM events WHERE visit = 2")
    _visits(con)
    seen: list[str] = []
    figures = _series(con, ledger, seen)
    assert figures == _series(con, None, [])
    assert figures[1]["visits"] == VISITORS // DAYS - 1


def test_a_span_still_going_on_is_read_at_every_request(con: duckdb.DuckDBPyConnection) -> None:
    ledger = series_days.Ledger()
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    spans = [(now - timedelta(hours=3 - i), now - timedelta(hours=2 - i)) for i in range(3)]
    spans[-1] = (spans[-1][0], now + timedelta(hours=1))  # this hour, until its end
    asked: list[int] = []

    def read(part: Sequence[Span]) -> list[dict[str, int]]:
        asked.append(len(part))
        return [{"visits": micros(a)} for a, _ in part]

    first = ledger.series(logged_run(con, []), SITE, spans, "counted", read)
    assert ledger.series(logged_run(con, []), SITE, spans, "counted", read) == first
    assert asked == [3, 1]  # every span, then the one still going on
    assert len(ledger) == 2


def test_spans_read_while_the_store_was_written_are_not_kept(con: duckdb.DuckDBPyConnection) -> None:
    ledger = series_days.Ledger()

    def read(part: Sequence[Span]) -> list[dict[str, int]]:
        con.execute("UPDATE store_state SET value = value + 1 WHERE name = 'watermark'")  # a feed step
        return [{"visits": 1} for _ in part]

    assert len(ledger.series(logged_run(con, []), SITE, SPANS, "counted", read)) == DAYS
    assert len(ledger) == 0


def test_a_store_holding_ids_above_its_watermark_keeps_its_spans(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("DELETE FROM store_state")  # as the benchmarks' generated store: no watermark
    ledger = series_days.Ledger()
    plain = _series(con, None, [])
    assert _series(con, ledger, []) == plain
    seen: list[str] = []
    assert _series(con, ledger, seen) == plain
    assert _reads_visits(seen) == 0


def test_the_pages_table_ranks_by_kept_day_counts_as_by_reading_them(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("UPDATE events SET path = '/p/' || (visit % 7) WHERE id % 3 = 0")  # seven more pages
    ledger = series_days.Ledger()
    whole = (SPANS[0][0], SPANS[-1][1])

    def pages(kept: series_days.Ledger | None, seen: list[str], page: queries.Page) -> object:
        return tables.breakdown(
            logged_run(con, seen),
            DUCKDB,
            SITE,
            whole,
            Filters(),
            "page",
            "pageviews",
            page,
            None,
            kept,
            SPANS,
        )

    for page in (queries.Page(3), queries.Page(3, 3), queries.Page(10)):
        assert pages(ledger, [], page) == pages(None, [], page)
    seen: list[str] = []
    assert pages(ledger, seen, queries.Page(5)) == pages(None, [], queries.Page(5))
    assert not any("GROUP BY i, path" in sql or "GROUP BY path" in sql for sql in seen)
    # A pageview of /p/6 fed for visit 4's day: that day and its neighbours are read again.
    con.execute(
        "INSERT INTO events SELECT site_id, time + 1, (SELECT max(id) + 1 FROM events), visitor, visit, "
        "name, '/p/6', props, visit_start, source, utm_source, utm_medium, utm_campaign, browser, os, "
        "device, country, region, city FROM events WHERE visit = 4 LIMIT 1"
    )
    _visits(con)
    seen = []
    assert pages(ledger, seen, queries.Page(10)) == pages(None, [], queries.Page(10))
    assert any("GROUP BY i, path" in sql for sql in seen)


class _KeptRun:
    """A run with the store's kept selections (``store.kept``), as the store process answers."""

    def __init__(self, con: duckdb.DuckDBPyConnection, seen: list[str], kept: Kept) -> None:
        self.run = logged_run(con, seen)
        self.keep = kept.keep

    def __call__(self, sql: str, params: dict[str, object]) -> list[tuple[object, ...]]:
        return self.run(sql, params)


FILTERED = [
    Filters(page="/pricing"),
    Filters(rules=(Filter("page", IS_NOT, "/pricing"),)),
    Filters(page="/pricing", source="(none)"),
    Filters(event="signup"),
]


@pytest.mark.parametrize("filters", FILTERED, ids=["page", "not page", "page and source", "event"])
@pytest.mark.parametrize("keeps", [False, True], ids=["selecting", "kept selection"])
def test_a_filtered_pages_table_ranks_by_day_counts_of_the_visits_started_each_day_as_reading_them(
    con: duckdb.DuckDBPyConnection, filters: Filters, keeps: bool
) -> None:
    con.execute("UPDATE events SET path = '/p/' || (visit % 7) WHERE id % 3 = 0")
    con.execute("UPDATE events SET path = '/pricing' WHERE id % 3 = 1 AND visit % 5 = 0")
    con.execute("UPDATE events SET name = 'signup' WHERE id % 3 = 1 AND visit % 4 = 0")
    # The last pageview of the visits of 23:00 two hours later: it falls in the next day.
    con.execute("UPDATE events SET time = time + 7200000000 WHERE id % 3 = 0 AND visit % 24 = 0")
    _visits(con)
    ledger = series_days.Ledger()
    whole = (SPANS[0][0], SPANS[-1][1])
    selections = Kept(con.cursor)

    def pages(kept: series_days.Ledger | None, seen: list[str], page: queries.Page) -> object:
        run = _KeptRun(con, seen, selections) if keeps else logged_run(con, seen)
        return tables.breakdown(
            run, DUCKDB, SITE, whole, filters, "page", "pageviews", page, None, kept, SPANS
        )

    for page in (queries.Page(3), queries.Page(3, 3), queries.Page(10)):
        first: list[str] = []
        assert pages(ledger, first, page) == pages(None, [], page)
    seen: list[str] = []
    found = pages(ledger, seen, queries.Page(10))
    assert found == pages(None, [], queries.Page(10))
    assert not any("v_day" in sql for sql in seen)  # every day kept
    assert any("bitstring_agg" in sql for sql in seen)  # the shown paths' visitors, estimated
    # A pageview of /pricing (and a signup) fed for visit 7, which had neither: its day is read again.
    con.execute(
        "INSERT INTO events SELECT site_id, time + 1, (SELECT max(id) + 1 FROM events), visitor, visit, "
        "'pageview', '/pricing', props, visit_start, source, utm_source, utm_medium, utm_campaign, browser, "
        "os, device, country, region, city FROM events WHERE visit = 7 LIMIT 1"
    )
    con.execute(
        "INSERT INTO events SELECT site_id, time + 2, (SELECT max(id) + 1 FROM events), visitor, visit, "
        "'signup', path, props, visit_start, source, utm_source, utm_medium, utm_campaign, browser, "
        "os, device, country, region, city FROM events WHERE visit = 7 LIMIT 1"
    )
    _visits(con)
    selections.changed()  # as the store does after every write
    seen = []
    again = pages(ledger, seen, queries.Page(10))
    assert again == pages(None, [], queries.Page(10))
    assert again != found
    assert any("v_day" in sql for sql in seen)


def test_a_filtered_pages_tables_day_counts_follow_its_visits_start_not_its_events_time(
    con: duckdb.DuckDBPyConnection,
) -> None:
    con.execute("UPDATE events SET path = '/pricing' WHERE id % 3 = 1")  # every visit's first pageview
    # The last pageview of the visits of 23:00 (125 of the last day's 500) two hours later, past the
    # period's end.
    con.execute("UPDATE events SET time = time + 7200000000 WHERE id % 3 = 0 AND visit % 24 = 0")
    _visits(con)
    rows, _ = tables.breakdown(
        logged_run(con, []),
        DUCKDB,
        SITE,
        SPANS[-1],
        Filters(page="/pricing"),
        "page",
        "pageviews",
        queries.Page(10),
        None,
        series_days.Ledger(),
        SPANS[-1:],
    )
    assert {row["value"]: row["pageviews"] for row in rows} == {"/pricing": 500, "/": 1000}
