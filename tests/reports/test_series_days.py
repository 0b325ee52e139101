"""A big period's time series keeps its ended spans between requests (``reports.kept_figures``), with the
same figures as reading them, and reads a span again once the store recorded a write touching it
(``store.changes``: here recorded by hand for the rows the tests write)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import duckdb
import pytest

from sightline.reports import counting, day_visitors, queries, series_days, table_days, tables, timeseries
from sightline.reports.filters import IS_NOT, Filter, Filters
from sightline.reports.kept_figures import Kept as Layer
from sightline.reports.queries import Span
from sightline.store import schema
from sightline.store.changes import Changes, hours_of
from sightline.store.dialects import DUCKDB
from sightline.store.feed import micros
from sightline.store.kept_selections import Kept
from tests.reports.logged import logged_run
from tests.support.store_rows import EVENTS, VISITS

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
        "utm_source, utm_medium, utm_campaign, browser, os, device, country, region, city, channel) "
        "SELECT $site, $start + (i % $days) * 86400000000 + (i % 24) * 3600000000 + j * $minute, "
        "i * 3 + j + 1, hash(i), i + 1, 'pageview', '/', [], 0, '(none)', '', '', '', 'Chrome', 'Linux', "
        "'desktop', '(none)', '', '', 'direct' FROM range($n) AS r(i), range(3) AS s(j)",
        {"site": SITE, "start": micros(START), "days": DAYS, "minute": MINUTE, "n": VISITORS},
    )
    _visits(opened)
    yield opened
    opened.close()


def _visits(con: duckdb.DuckDBPyConnection) -> None:
    """The visits table and the watermark as the feed would leave them."""
    con.execute("DELETE FROM visits")
    con.execute(
        f"INSERT INTO {VISITS} SELECT site_id, visit, min(visitor), min(visitor), min(time), min(time), "
        "max(time), count(*), 0, '/', min(time), '/', max(time), '(none)', '', '', '', 'Chrome', 'Linux', "
        "'desktop', '(none)', '', '', max(id), 'direct' FROM events GROUP BY site_id, visit"
    )
    con.execute("UPDATE events SET visit_start = v.start FROM visits AS v WHERE events.visit = v.visit")
    con.execute(
        "INSERT INTO store_state SELECT 'watermark', max(id) FROM events "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value"
    )


def _layer() -> tuple[Layer, Changes]:
    changes = Changes()
    return Layer(changes.since), changes


def _wrote(con: duckdb.DuckDBPyConnection, changes: Changes, where: str) -> None:
    """Records a write of the events ``where`` picks, as the store records its writes: the hours
    of the events and of their visits' starts."""
    rows = con.execute(
        f"SELECT time FROM events WHERE {where} UNION ALL SELECT visit_start FROM events WHERE {where}"
    ).fetchall()
    changes.record(hours_of([SITE] * len(rows), [int(r[0]) for r in rows]))


def _series(con: duckdb.DuckDBPyConnection, ledger: Layer | None, seen: list[str]) -> list[dict[str, int]]:
    return timeseries.series(logged_run(con, seen), DUCKDB, SITE, SPANS, Filters(), ledger)


def _reads_visits(seen: list[str]) -> int:
    """Queries that read the period's visits row by row (the count of the period aside)."""
    return sum("bitstring_agg" in sql for sql in seen)


def test_ended_spans_are_kept_with_the_figures_reading_them_gives(con: duckdb.DuckDBPyConnection) -> None:
    ledger, _ = _layer()
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


def test_an_event_fed_into_a_kept_span_makes_that_span_alone_read_again(
    con: duckdb.DuckDBPyConnection,
) -> None:
    ledger, changes = _layer()
    _series(con, ledger, [])
    # A late pageview of visit 1 (day 0), fed after the spans were kept.
    con.execute(
        f"INSERT INTO {EVENTS} SELECT site_id, time + 2 * $minute, (SELECT max(id) + 1 FROM events), "
        "visitor, visit, name, path, props, visit_start, source, utm_source, utm_medium, utm_campaign, "
        "browser, os, device, country, region, city, channel FROM events WHERE id = 1",
        {"minute": MINUTE},
    )
    _visits(con)
    _wrote(con, changes, "id = (SELECT max(id) FROM events)")
    seen: list[str] = []
    figures = _series(con, ledger, seen)
    assert figures == _series(con, None, [])
    assert figures[0]["pageviews"] == 3 * VISITORS // DAYS + 1
    assert _reads_visits(seen) == 1  # day 0 again
    assert len(ledger) == DAYS
    seen = []
    assert _series(con, ledger, seen) == figures
    assert _reads_visits(seen) == 0


def test_deleted_events_make_the_spans_they_were_in_read_again(con: duckdb.DuckDBPyConnection) -> None:
    ledger, changes = _layer()
    _series(con, ledger, [])
    _wrote(con, changes, "visit = 2")  # recorded before: the rows are gone after
    con.execute("DELETE FROM events WHERE visit = 2")
    _visits(con)
    seen: list[str] = []
    figures = _series(con, ledger, seen)
    assert figures == _series(con, None, [])
    assert figures[1]["visits"] == VISITORS // DAYS - 1


def test_a_write_unrecorded_leaves_a_kept_span_as_it_was(con: duckdb.DuckDBPyConnection) -> None:
    """What the drop rests on: a write the store did not record is not seen (the test above
    fails without its record)."""
    ledger, _ = _layer()
    kept = _series(con, ledger, [])
    con.execute("DELETE FROM events WHERE visit = 2")
    _visits(con)
    assert _series(con, ledger, []) == kept != _series(con, None, [])


def test_a_span_still_going_on_is_read_at_every_request() -> None:
    ledger, _ = _layer()
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    spans = [(now - timedelta(hours=3 - i), now - timedelta(hours=2 - i)) for i in range(3)]
    spans[-1] = (spans[-1][0], now + timedelta(hours=1))  # this hour, until its end
    asked: list[int] = []

    def read(part: Sequence[Span]) -> list[dict[str, int]]:
        asked.append(len(part))
        return [{"visits": micros(a)} for a, _ in part]

    first = series_days.series(ledger, SITE, spans, "counted", read)
    assert series_days.series(ledger, SITE, spans, "counted", read) == first
    assert asked == [3, 1]  # every span, then the one still going on
    assert len(ledger) == 2


def test_a_span_written_while_it_was_read_is_read_again_at_the_next_request() -> None:
    ledger, changes = _layer()
    asked: list[int] = []

    def read(part: Sequence[Span]) -> list[dict[str, int]]:
        asked.append(len(part))
        if len(asked) == 1:  # a feed step of day 2 commits while the first request reads
            changes.record({SITE: [(micros(SPANS[2][0]), micros(SPANS[2][0]) + 1)]}, removed=False)
        return [{"visits": 1} for _ in part]

    series_days.series(ledger, SITE, SPANS, "counted", read)
    series_days.series(ledger, SITE, SPANS, "counted", read)
    assert asked == [DAYS, 1]


def test_a_write_of_another_site_or_time_leaves_the_spans_and_a_new_store_process_drops_them() -> None:
    changes = Changes()
    ledger = Layer(lambda site, after: changes.since(site, after))
    asked: list[int] = []

    def read(part: Sequence[Span]) -> list[dict[str, int]]:
        asked.append(len(part))
        return [{"visits": 1} for _ in part]

    series_days.series(ledger, SITE, SPANS, "counted", read)
    changes.record({SITE + 1: [(micros(SPANS[0][0]), micros(SPANS[-1][1]))]})
    changes.record({SITE: [(micros(SPANS[-1][1]), micros(SPANS[-1][1]) + 1)]}, removed=False)
    series_days.series(ledger, SITE, SPANS, "counted", read)
    assert asked == [DAYS]
    changes = Changes()  # the store process started again: numbers start again
    series_days.series(ledger, SITE, SPANS, "counted", read)
    assert asked == [DAYS, DAYS]


def test_the_pages_table_ranks_by_kept_day_counts_as_by_reading_them(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("UPDATE events SET path = '/p/' || (visit % 7) WHERE id % 3 = 0")  # seven more pages
    ledger, changes = _layer()
    whole = (SPANS[0][0], SPANS[-1][1])

    def pages(kept: Layer | None, seen: list[str], page: queries.Page) -> object:
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
    assert not any("GROUP BY i, value" in sql or "GROUP BY path" in sql for sql in seen)
    # A pageview of /p/6 fed for visit 4's day: that day is read again.
    con.execute(
        f"INSERT INTO {EVENTS} SELECT site_id, time + 1, (SELECT max(id) + 1 FROM events), visitor, visit, "
        "name, '/p/6', props, visit_start, source, utm_source, utm_medium, utm_campaign, browser, os, "
        "device, country, region, city, channel FROM events WHERE visit = 4 LIMIT 1"
    )
    _visits(con)
    _wrote(con, changes, "id = (SELECT max(id) FROM events)")
    seen = []
    assert pages(ledger, seen, queries.Page(10)) == pages(None, [], queries.Page(10))
    assert any("GROUP BY i, value" in sql for sql in seen)


class _KeptRun:
    """A run with the store's kept selections (``store.kept_selections``), as the store process answers."""

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
    ledger, changes = _layer()
    whole = (SPANS[0][0], SPANS[-1][1])
    selections = Kept(con.cursor, changes)

    def pages(kept: Layer | None, seen: list[str], page: queries.Page) -> object:
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
    assert not any("v_day" in sql for sql in seen)  # every day's counts and bitmaps kept
    # A pageview of /pricing (and a signup) fed for visit 7, which had neither: its day is read again.
    con.execute(
        f"INSERT INTO {EVENTS} SELECT site_id, time + 1, (SELECT max(id) + 1 FROM events), visitor, visit, "
        "'pageview', '/pricing', props, visit_start, source, utm_source, utm_medium, utm_campaign, browser, "
        "os, device, country, region, city, channel FROM events WHERE visit = 7 LIMIT 1"
    )
    con.execute(
        f"INSERT INTO {EVENTS} SELECT site_id, time + 2, (SELECT max(id) + 1 FROM events), visitor, visit, "
        "'signup', path, props, visit_start, source, utm_source, utm_medium, utm_campaign, browser, "
        "os, device, country, region, city, channel FROM events WHERE visit = 7 LIMIT 1"
    )
    _visits(con)
    _wrote(con, changes, "visit = 7")  # as the store records its writes
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
        _layer()[0],
        SPANS[-1:],
    )
    assert {row["value"]: row["pageviews"] for row in rows} == {"/pricing": 500, "/": 1000}


@pytest.mark.parametrize("filters", [Filters(), Filters(page="/pricing")], ids=["unfiltered", "page"])
def test_the_pages_tables_kept_day_bitmaps_lose_an_erased_visitor_and_nothing_else(
    con: duckdb.DuckDBPyConnection, filters: Filters
) -> None:
    con.execute("UPDATE events SET path = '/p/' || (visit % 7) WHERE id % 3 = 0")
    con.execute("UPDATE events SET path = '/pricing' WHERE id % 3 = 1 AND visit % 5 = 0")
    _visits(con)
    ledger, changes = _layer()
    whole = (SPANS[0][0], SPANS[-1][1])
    selections = Kept(con.cursor, changes)

    def pages(kept: Layer | None, seen: list[str]) -> list[dict[str, object]]:
        run = _KeptRun(con, seen, selections) if kept is not None else logged_run(con, seen)
        rows, _ = tables.breakdown(
            run, DUCKDB, SITE, whole, filters, "page", "pageviews", queries.Page(10), None, kept, SPANS
        )
        return rows

    pages(ledger, [])  # ranked and counted in one read of every day
    found = pages(ledger, [])  # each day's bitmaps of the shown pages read and kept
    seen: list[str] = []
    assert pages(ledger, seen) == found == pages(None, [])
    assert not any("bitstring_agg" in sql for sql in seen)  # the shown pages' visitors: kept days
    # Visit 10 (day 4, a view of /pricing) erased: its visitor leaves /pricing, / and /p/3.
    _wrote(con, changes, "visit = 10")  # recorded before: the rows are gone after
    con.execute("DELETE FROM events WHERE visit = 10")
    _visits(con)
    seen = []
    again = pages(ledger, seen)
    assert again == pages(None, [])
    visitors = [(row["value"], row["visitors"]) for row in again]
    assert visitors != [(row["value"], row["visitors"]) for row in found]
    assert any("bitstring_agg" in sql for sql in seen)  # that day's bitmaps read again


def test_the_props_table_ranks_by_kept_day_counts_and_unites_kept_day_bitmaps(
    con: duckdb.DuckDBPyConnection,
) -> None:
    con.execute(
        "UPDATE events SET name = 'signup', props = ['plan' || chr(31) || (visit % 5)] WHERE id % 3 = 0"
    )
    _visits(con)
    ledger, changes = _layer()
    whole = (SPANS[0][0], SPANS[-1][1])

    def props(kept: Layer | None, seen: list[str]) -> list[dict[str, object]]:
        rows, _ = tables.breakdown(
            logged_run(con, seen),
            DUCKDB,
            SITE,
            whole,
            Filters(),
            "prop",
            "events",
            queries.Page(10),
            "signup",
            kept,
            SPANS,
        )
        return rows

    def figures(rows: list[dict[str, object]]) -> dict[object, tuple[object, object]]:
        return {row["value"]: (row["events"], row["visitors"]) for row in rows}

    exact = figures(props(None, []))  # no layer: counted exactly in one pass
    first = figures(props(ledger, []))
    assert {value: n for value, (n, _) in first.items()} == {value: n for value, (n, _) in exact.items()}
    for value, (_, people) in first.items():  # estimated from the days' bitmaps
        assert abs(int(str(people)) - int(str(exact[value][1]))) <= 0.01 * int(str(exact[value][1]))
    seen: list[str] = []
    assert figures(props(ledger, seen)) == first
    assert not any("GROUP BY i, value" in sql or "bitstring_agg" in sql or "DISTINCT" in sql for sql in seen)
    # A signup of a new plan fed on visit 4's day: that day alone is read again, and counted.
    con.execute(
        f"INSERT INTO {EVENTS} SELECT site_id, time + 1, (SELECT max(id) + 1 FROM events), visitor, visit, "
        "'signup', path, ['plan' || chr(31) || 'new'], visit_start, source, utm_source, utm_medium, "
        "utm_campaign, browser, os, device, country, region, city, channel "
        "FROM events WHERE visit = 4 LIMIT 1"
    )
    _visits(con)
    _wrote(con, changes, "id = (SELECT max(id) FROM events)")
    seen = []
    again = figures(props(ledger, seen))
    assert again["plan\x1fnew"] == (1, 1)
    assert again == figures(props(_layer()[0], []))
    assert sum("GROUP BY i, value" in sql for sql in seen) == 1


def test_a_tables_day_bitmaps_bigger_than_their_share_of_the_layer_are_kept_as_one_span_or_read_each_time(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger, _ = _layer()
    ledger.most_bytes = 6 * (1 << 16) // 8 * 4  # four times the bitmaps of six days' one page
    whole = (SPANS[0][0], SPANS[-1][1])

    def pages(kept: Layer | None, seen: list[str]) -> object:
        return tables.breakdown(
            logged_run(con, seen),
            DUCKDB,
            SITE,
            whole,
            Filters(),
            "page",
            "pageviews",
            queries.Page(10),
            None,
            kept,
            SPANS,
        )

    # Half the share: the days before the last kept as one span; an eighth: not even those.
    for share, reads in ((day_visitors.SHARE, 0), (day_visitors.SHARE / 2, 0), (day_visitors.SHARE / 8, 1)):
        monkeypatch.setattr(day_visitors, "SHARE", share)
        pages(ledger, [])
        pages(ledger, [])
        seen: list[str] = []
        assert pages(ledger, seen) == pages(None, [])
        assert sum("bitstring_agg" in sql for sql in seen) == reads


@pytest.mark.parametrize("dim", ["browser", "entry"])
def test_an_unfiltered_visit_table_ranks_by_kept_day_figures_and_bitmaps_as_by_reading_them(
    con: duckdb.DuckDBPyConnection, dim: str
) -> None:
    con.execute("UPDATE visits SET browser = 'B' || (visit % 7), entry = '/e/' || (visit % 5)")
    ledger, changes = _layer()
    whole = (SPANS[0][0], SPANS[-1][1])

    def table(kept: Layer | None, seen: list[str], page: queries.Page) -> object:
        return tables.breakdown(
            logged_run(con, seen), DUCKDB, SITE, whole, Filters(), dim, "visits", page, None, kept, SPANS
        )

    for page in (queries.Page(3), queries.Page(3, 3), queries.Page(10)):
        assert table(ledger, [], page) == table(None, [], page)
    seen: list[str] = []
    found = table(ledger, seen, queries.Page(10))
    assert found == table(None, [], queries.Page(10))
    assert not any("FROM visits" in sql for sql in seen)  # every day's figures and bitmaps kept
    # Visit 10 (day 4) moved to another value: its day is read again, the others are not.
    con.execute(f"UPDATE visits SET {dim} = 'Z' WHERE visit = 10")
    _wrote(con, changes, "visit = 10")
    seen = []
    again = table(ledger, seen, queries.Page(10))
    assert again == table(None, [], queries.Page(10))
    assert again != found
    assert any("FROM visits" in sql for sql in seen)


def _pricing_fed(con: duckdb.DuckDBPyConnection, changes: Changes, visitor: str) -> None:
    """A pageview of /pricing fed for visit 7 (by ``visitor``: a column or a code), its visit's row
    updated and the write recorded as the store records its writes."""
    con.execute(
        f"INSERT INTO {EVENTS} SELECT site_id, time + 1, (SELECT max(id) + 1 FROM events), {visitor}, "
        "visit, 'pageview', '/pricing', props, visit_start, source, utm_source, utm_medium, utm_campaign, "
        "browser, os, device, country, region, city, channel FROM events WHERE visit = 7 LIMIT 1"
    )
    con.execute("UPDATE visits SET pageviews = pageviews + 1 WHERE visit = 7")
    _wrote(con, changes, "visit = 7")


@pytest.mark.parametrize(
    "filters",
    [Filters(source="(none)"), Filters(page="/pricing"), Filters(page="/pricing", source="(none)")],
    ids=["source", "page", "page and source"],
)
@pytest.mark.parametrize("dim", ["browser", "entry"])
def test_a_filtered_visit_table_ranks_by_kept_day_figures_and_reads_only_a_day_a_write_changed(
    con: duckdb.DuckDBPyConnection, filters: Filters, dim: str
) -> None:
    """Under a filter, a visit table's next request reads no ended day again (the selected visits'
    figures and bitmaps kept per day); a visit entering the selection makes its day read again."""
    con.execute("UPDATE events SET path = '/pricing' WHERE id % 3 = 1 AND visit % 5 = 0")
    _visits(con)
    con.execute("UPDATE visits SET browser = 'B' || (visit % 7), entry = '/e/' || (visit % 5)")
    ledger, changes = _layer()
    whole = (SPANS[0][0], SPANS[-1][1])
    selections = Kept(con.cursor, changes)

    def table(kept: Layer | None, seen: list[str], page: queries.Page) -> object:
        run = _KeptRun(con, seen, selections)
        return tables.breakdown(run, DUCKDB, SITE, whole, filters, dim, "visits", page, None, kept, SPANS)

    for page in (queries.Page(3), queries.Page(3, 3), queries.Page(10)):
        assert table(ledger, [], page) == table(None, [], page)
    seen: list[str] = []
    found = table(ledger, seen, queries.Page(10))
    assert found == table(None, [], queries.Page(10))
    assert not any(" AS i, " in sql or "bitstring_agg" in sql for sql in seen)  # figures, bitmaps kept
    # A pageview of /pricing fed for visit 7 (day 0), which had none: its day alone is read again.
    _pricing_fed(con, changes, "visitor")
    seen = []
    again = table(ledger, seen, queries.Page(10))
    assert again == table(None, [], queries.Page(10))
    if filters.page:
        assert again != found
    assert any(" AS i, " in sql for sql in seen)


@pytest.mark.parametrize(
    ("dim", "filters"),
    [("page", Filters()), ("page", Filters(page="/pricing")), ("browser", Filters(page="/pricing"))],
    ids=["pages", "pages under a page", "browsers under a page"],
)
def test_a_tables_exact_visitors_are_kept_as_keys_per_span_and_a_write_makes_its_day_read_again(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch, dim: str, filters: Filters
) -> None:
    """A table whose visitors are counted exactly keeps each span's visitor keys per shown value:
    its next request reads no ended day, and a visitor fed into day 0 is counted again there."""
    monkeypatch.setattr(counting, "EXACT_BELOW", 10**9)
    con.execute("UPDATE events SET path = '/p/' || (visit % 7) WHERE id % 3 = 0")
    con.execute("UPDATE events SET path = '/pricing' WHERE id % 3 = 1 AND visit % 5 = 0")
    _visits(con)
    con.execute("UPDATE visits SET browser = 'B' || (visit % 7)")
    ledger, changes = _layer()
    whole = (SPANS[0][0], SPANS[-1][1])
    selections = Kept(con.cursor, changes)
    order = "visits" if dim == "browser" else "pageviews"

    def table(kept: Layer | None, seen: list[str]) -> object:
        run = _KeptRun(con, seen, selections)
        return tables.breakdown(
            run, DUCKDB, SITE, whole, filters, dim, order, queries.Page(10), None, kept, SPANS
        )

    first: list[str] = []
    found = table(ledger, first)
    assert found == table(None, [])
    assert any("SELECT DISTINCT v_day" in sql for sql in first)
    seen: list[str] = []
    assert table(ledger, seen) == found
    assert not any("v_day" in sql or " AS i, " in sql or "DISTINCT" in sql for sql in seen)
    # Visit 7 (day 0, no /pricing) gets a pageview of /pricing by a new visitor's code.
    _pricing_fed(con, changes, "77")
    seen = []
    again = table(ledger, seen)
    assert again == table(None, [])
    assert again != found
    assert any("SELECT DISTINCT v_day" in sql for sql in seen)


def test_todays_ended_hours_are_a_span_of_their_own_when_the_hour_began_inside_the_last_one() -> None:
    day = (START, START + timedelta(days=1))
    now = START + timedelta(hours=5, minutes=20)
    hour = START + timedelta(hours=5)
    assert table_days.hours_apart([day], now) == [(START, hour), (hour, day[1])]
    assert table_days.hours_apart([day], START + timedelta(minutes=20)) == [day]  # the first hour
    assert table_days.hours_apart([day], START + timedelta(days=2)) == [day]  # an ended day


def test_a_tables_union_of_days_stays_kept_when_the_hour_going_on_moves(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """Bitmaps over their share of the layer are kept as the union of the days before today's two
    spans (its ended hours, the hour going on): a request in the next hour reads today's spans, not
    the earlier days again."""
    ledger, _ = _layer()
    ledger.most_bytes = 6 * (1 << 16) // 8 * 4  # four times the bitmaps of six days' one page
    whole = (SPANS[0][0], SPANS[-1][1])
    today = SPANS[-1][0]
    read: list[dict[str, object]] = []

    def run(sql: str, params: dict[str, object]) -> list[tuple[object, ...]]:
        if "bitstring_agg" in sql:
            read.append(dict(params))
        return con.cursor().execute(sql, params).fetchall()

    def pages(kept: Layer | None, hour: int) -> object:
        cut = today + timedelta(hours=hour)
        spans = [*SPANS[:-1], (today, cut), (cut, SPANS[-1][1])]
        return tables.breakdown(
            run, DUCKDB, SITE, whole, Filters(), "page", "pageviews", queries.Page(10), None, kept, spans
        )

    pages(ledger, 5)
    pages(ledger, 5)
    read.clear()
    served = pages(ledger, 6)
    reads = list(read)
    assert served == pages(None, 6)
    assert reads  # today's two spans
    assert not any(micros(SPANS[0][0]) in bound.values() for bound in reads)  # the union: kept


@pytest.mark.parametrize(
    "filters", [Filters(source="(none)"), Filters(page="/pricing")], ids=["source", "page"]
)
def test_a_filtered_tables_first_request_keeps_its_bitmaps_and_the_next_reads_no_day_again(
    con: duckdb.DuckDBPyConnection, filters: Filters
) -> None:
    """The first request of a filtered table reads the bitmaps it keeps (not only its visitors'
    count): the next one, on a live site the one after a feed step, reads no ended day again."""
    con.execute("UPDATE events SET path = '/pricing' WHERE id % 3 = 1 AND visit % 5 = 0")
    _visits(con)
    ledger, changes = _layer()
    whole = (SPANS[0][0], SPANS[-1][1])
    selections = Kept(con.cursor, changes)

    def pages(kept: Layer | None, seen: list[str]) -> object:
        return tables.breakdown(
            _KeptRun(con, seen, selections), DUCKDB, SITE, whole, filters, "page", "pageviews",
            queries.Page(10), None, kept, SPANS,
        )  # fmt: skip

    first: list[str] = []
    found = pages(ledger, first)
    assert found == pages(None, [])
    assert any("bitstring_agg" in sql for sql in first)
    seen: list[str] = []
    assert pages(ledger, seen) == found
    assert not any("v_day" in sql for sql in seen)


def test_a_tables_bitmaps_of_more_than_three_days_are_kept_as_the_union_of_all_but_the_last_two(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """The layer has room for a bitmap per day, yet keeps three: one read of 30 days' bitmaps
    sends a tenth of the bytes, and the union stays kept until the period moves to another day."""
    ledger, _ = _layer()
    whole = (SPANS[0][0], SPANS[-1][1])
    assert day_visitors.keeps_visitors(SPANS, 11, counting.Visitors("", counting.exact, 1 << 16), ledger)

    def pages(kept: Layer | None) -> object:
        return tables.breakdown(
            logged_run(con, []), DUCKDB, SITE, whole, Filters(), "page", "pageviews",
            queries.Page(10), None, kept, SPANS,
        )  # fmt: skip

    assert pages(ledger) == pages(None)
    bitmaps = sorted(
        (key[1], key[2])
        for key in ledger._kept
        if isinstance(key[3], tuple) and str(key[3][1]).startswith("bitmaps")
    )
    spans = [(micros(SPANS[0][0]), micros(SPANS[-2][0])), *((micros(a), micros(b)) for a, b in SPANS[-2:])]
    assert bitmaps == spans
