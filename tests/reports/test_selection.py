"""A filter on events of a past span reads events only up to the last event of the span's visits,
and still selects a visit whose matching event came after the span's end."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import pytest

from sightline.reports import counting, queries, tables, timeseries
from sightline.reports.filters import Filters
from sightline.store import schema
from sightline.store.changes import Changes
from sightline.store.dialects import DUCKDB
from sightline.store.feed import key_of, micros
from sightline.store.kept_selections import Kept, Span
from tests.reports.logged import logged_run
from tests.support.store_rows import EVENTS, VISITS

SITE = 1
DAY = datetime(2026, 3, 2, tzinfo=UTC)  # long past: the span is bounded
MINUTE = 60_000_000
TABLES = [
    ("page", "pageviews"),
    ("source", "visits"),
    ("entry", "visits"),
    ("browser", "visitors"),
    ("event", "events"),
]


def _store() -> duckdb.DuckDBPyConnection:
    """Three visits: one inside the day that views /pricing; one that begins ten minutes before the
    day ends and views /pricing twenty minutes after it; one the next day, also on /pricing."""
    con = duckdb.connect()
    for statement in schema.DUCKDB:
        con.execute(statement)
    end = micros(DAY + timedelta(days=1))
    visits = {
        "inside": [(end - 600 * MINUTE, "/"), (end - 590 * MINUTE, "/pricing")],
        "across": [(end - 10 * MINUTE, "/"), (end + 20 * MINUTE, "/pricing")],
        "after": [(end + 600 * MINUTE, "/pricing")],
    }
    n = 0
    for number, (name, views) in enumerate(visits.items(), 1):
        key = key_of(SITE, name)
        for at, path in views:
            n += 1
            con.execute(
                f"INSERT INTO {EVENTS} VALUES ($site, $t, $n, $k, $v, 'pageview', $path, [], $s, '(none)', "
                "'', '', '', 'Chrome', 'Linux', 'desktop', '(none)', '', '', 'direct')",
                {"site": SITE, "t": at, "n": n, "k": key, "v": number, "path": path, "s": views[0][0]},
            )
        start, last = views[0][0], views[-1][0]
        con.execute(
            f"INSERT INTO {VISITS} VALUES ($site, $v, $k, $k, $s, $s, $last, $pv, 0, '/', $s, '/pricing', "
            "$last, "
            "'(none)', '', '', '', 'Chrome', 'Linux', 'desktop', '(none)', '', '', $n, 'direct')",
            {"site": SITE, "v": number, "k": key, "s": start, "last": last, "pv": len(views), "n": n},
        )
    return con


def test_a_past_spans_page_filter_keeps_a_visit_whose_page_came_after_the_span_and_reads_no_further() -> None:
    con = _store()
    seen: list[str] = []
    span = (DAY, DAY + timedelta(days=1))
    figures = queries.totals(logged_run(con, seen), DUCKDB, SITE, span, Filters(page="/pricing"))
    assert figures["visits"] == 2  # inside and across; after began the next day
    assert figures["visitors"] == 2
    assert figures["pageviews"] == 4
    assert any("time <= $" in sql for sql in seen)  # bounded by the last event of the day's visits
    points = timeseries.series(logged_run(con, []), DUCKDB, SITE, [span], Filters(page="/pricing"))
    assert points[0]["visits"] == 2
    assert points[0]["visitors"] == 2


def test_a_span_reaching_now_is_not_bounded() -> None:
    con = _store()
    seen: list[str] = []
    now = datetime.now(UTC)
    queries.totals(
        logged_run(con, seen), DUCKDB, SITE, (now - timedelta(days=1), now), Filters(page="/pricing")
    )
    assert not any("time <= $" in sql for sql in seen)


def test_reports_under_an_event_filter_read_one_kept_selection_and_count_as_without_it() -> None:
    con = _store()
    span = (DAY, DAY + timedelta(days=1))
    only = Filters(page="/pricing")
    kept = Kept(con.cursor, Changes())
    seen: list[str] = []
    asked: list[str] = []

    class Keeping:
        def __call__(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
            return logged_run(con, seen)(sql, params)

        def keep(
            self, sql: str, params: dict[str, Any], site_id: int | None = None, span: Span | None = None
        ) -> str | None:
            asked.append(sql)
            return kept.keep(sql, params, site_id, span)

    def every(run: queries.Run) -> list[Any]:
        return [
            queries.totals(run, DUCKDB, SITE, span, only),
            timeseries.series(run, DUCKDB, SITE, [span], only),
            *(
                tables.breakdown(run, DUCKDB, SITE, span, only, dim, order, queries.Page(10))
                for dim, order in TABLES
            ),
        ]

    assert every(Keeping()) == every(logged_run(con, []))
    assert len(asked) == 2 + len(TABLES)
    assert len(kept) == 1  # one selection, read once
    assert sum("kept." in sql for sql in seen) >= 2 + len(TABLES)  # every report read the kept rows
    assert not any("path = $" in sql for sql in seen)  # no report query selected by itself


def test_a_big_filtered_props_table_ranks_by_exact_counts_and_estimates_the_shown_rows_visitors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    con = _store()
    end = micros(DAY + timedelta(days=1))
    for n, (visit, kv) in enumerate(
        [(1, ["plan\x1fpro"]), (2, ["plan\x1fpro", "seats\x1f5"]), (2, ["plan\x1ffree"])]
    ):
        con.execute(
            f"INSERT INTO {EVENTS} SELECT site_id, $t, 100 + $n, visitor, visit, 'signup', path, $props, "
            "visit_start, source, utm_source, utm_medium, utm_campaign, browser, os, device, country, "
            "region, city, channel FROM events WHERE visit = $v LIMIT 1",
            {"t": end - 300 * MINUTE + n, "n": n, "props": kv, "v": visit},
        )
    span = (DAY, DAY + timedelta(days=1))
    only = Filters(page="/pricing")

    def props(run: queries.Run) -> list[tuple[str, int, int]]:
        rows, _ = tables.breakdown(
            run, DUCKDB, SITE, span, only, "prop", "events", queries.Page(10), "signup"
        )
        return [(row["value"], row["events"], row["visitors"]) for row in rows]

    exact_sql: list[str] = []
    exact = props(logged_run(con, exact_sql))
    assert exact == [("plan\x1fpro", 2, 2), ("plan\x1ffree", 1, 1), ("seats\x1f5", 1, 1)]
    assert not any("bitstring_agg" in sql for sql in exact_sql)
    monkeypatch.setattr(counting, "EXACT_BELOW", 1)
    seen: list[str] = []
    assert props(logged_run(con, seen)) == exact
    assert any("bitstring_agg" in sql and "unnest(props)" in sql for sql in seen)
