"""Under filters on visit attributes only, the pages, custom events and props tables test each
event's own row; a visit whose start an earlier event moved later (its first-fed events keep the
start they were fed with) is still counted by its visit row, at either edge of the span."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import duckdb

from sightline.reports import tables
from sightline.reports.filters import Filters
from sightline.reports.queries import Page
from sightline.store import schema
from sightline.store.dialects import DUCKDB
from sightline.store.feed import key_of, micros
from tests.reports.logged import logged_run
from tests.support.store_rows import EVENTS, VISITS

SITE = 1
DAY = datetime(2026, 3, 2, tzinfo=UTC)
MINUTE = 60_000_000


def _store() -> duckdb.DuckDBPyConnection:
    """Three google.com visits and a direct one, with each event's fed ``visit_start``:
    - ``inside`` began in the day, fed in order;
    - ``before`` began ten minutes before the day: its events in the day were fed first (their
      rows say it began at 00:05), its first event came later and moved the visit's start back;
    - ``across`` began ten minutes before the day's end: its events after midnight were fed first
      (their rows say it began the next day), then its first event;
    - ``direct`` began in the day from no source."""
    con = duckdb.connect()
    for statement in schema.DUCKDB:
        con.execute(statement)
    a, b = micros(DAY), micros(DAY + timedelta(days=1))
    visits = {  # name: (source, [(time, path, fed visit_start)], born)
        "inside": ("google.com", [(a + 60 * MINUTE, "/", a + 60 * MINUTE)], a + 60 * MINUTE),
        "before": (
            "google.com",
            [(a - 10 * MINUTE, "/", a - 10 * MINUTE), (a + 5 * MINUTE, "/early", a + 5 * MINUTE)],
            a + 5 * MINUTE,
        ),
        "across": (
            "google.com",
            [(b - 10 * MINUTE, "/", b - 10 * MINUTE), (b + 5 * MINUTE, "/late", b + 5 * MINUTE)],
            b + 5 * MINUTE,
        ),
        "direct": ("(none)", [(a + 90 * MINUTE, "/", a + 90 * MINUTE)], a + 90 * MINUTE),
    }
    n = 0
    for number, (name, (source, views, born)) in enumerate(visits.items(), 1):
        key = key_of(SITE, name)
        for at, path, fed_start in views:
            n += 1
            con.execute(
                f"INSERT INTO {EVENTS} VALUES ($site, $t, $n, $k, $v, 'pageview', $path, [], $s, $src, "
                "'', '', '', 'Chrome', 'Linux', 'desktop', '(none)', '', '', 'referral')",
                {
                    "site": SITE,
                    "t": at,
                    "n": n,
                    "k": key,
                    "v": number,
                    "path": path,
                    "s": fed_start,
                    "src": source,
                },
            )
        start, last = views[0][0], views[-1][0]
        con.execute(
            f"INSERT INTO {VISITS} VALUES ($site, $v, $k, $k, $born, $s, $last, $pv, 0, $entry, $s, $exit, "
            "$last, "
            "$src, '', '', '', 'Chrome', 'Linux', 'desktop', '(none)', '', '', $n, 'referral')",
            {
                "site": SITE,
                "v": number,
                "k": key,
                "born": born,
                "s": start,
                "last": last,
                "pv": len(views),
                "entry": views[0][1],
                "exit": views[-1][1],
                "src": source,
                "n": n,
            },
        )
    return con


def test_a_source_filtered_pages_table_counts_visits_begun_in_the_span_however_their_events_arrived() -> None:
    con = _store()
    seen: list[str] = []
    span = (DAY, DAY + timedelta(days=1))
    rows, _ = tables.breakdown(
        logged_run(con, seen), DUCKDB, SITE, span, Filters(source="google.com"), "page", "pageviews", Page(10)
    )
    counted = {row["value"]: (row["pageviews"], row["visitors"]) for row in rows}
    # inside's and across's pageviews, across's after midnight too (a visit counts whole where it
    # began); before began the day before: its /early is not the day's, though its row says so.
    assert counted == {"/": (2, 2), "/late": (1, 1)}
    assert any("visit_start >= $" in sql for sql in seen)  # the rows were tested, not a semi-join


def test_a_source_filter_with_no_moved_visit_reads_no_visits_in_the_table_query() -> None:
    con = _store()
    con.execute("DELETE FROM events WHERE visit IN (SELECT visit FROM visits WHERE start < born)")
    con.execute("DELETE FROM visits WHERE start < born")
    seen: list[str] = []
    span = (DAY, DAY + timedelta(days=1))
    rows, _ = tables.breakdown(
        logged_run(con, seen), DUCKDB, SITE, span, Filters(source="google.com"), "page", "pageviews", Page(10)
    )
    assert [(row["value"], row["pageviews"]) for row in rows] == [("/", 1)]
    tables_query = [sql for sql in seen if "GROUP BY path" in sql]
    assert tables_query
    assert all("FROM visits" not in sql for sql in tables_query)
