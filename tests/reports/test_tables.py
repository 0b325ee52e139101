"""A table ranked by visitors counts the visitors of few values yet ranks exactly as a full count."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import duckdb
import pytest

from sightline.reports import queries, tables
from sightline.reports.filters import Filters
from sightline.store import schema
from sightline.store.dialects import DUCKDB
from sightline.store.feed import micros
from tests.reports.logged import logged_run
from tests.support.store_rows import VISITS

SITE = 1
START = datetime(2026, 11, 1, tzinfo=UTC)
SPAN = (START, START + timedelta(days=1))


@pytest.fixture(scope="module")
def store() -> Iterator[duckdb.DuckDBPyConnection]:
    """300 sources whose visits and visitors disagree: some bring many visits from few visitors."""
    con = duckdb.connect(config={"threads": 2})
    for statement in schema.DUCKDB:
        con.execute(statement)
    chance = random.Random(7)
    visitors: list[int] = []
    sources: list[str] = []
    for s in range(300):
        people = chance.randint(1, 60)
        loyal = chance.random() < 0.3  # a few people coming back many times
        for n in range(chance.randint(people, people * (8 if loyal else 1))):
            visitors.append(s * 1000 + n % people)
            sources.append(f"s{s:03}")
    con.execute(
        f"INSERT INTO {VISITS} SELECT $site, i, i, visitor, t, t, t, 1, 0, '/', t, '/', t, source, "
        "'', '', '', 'Chrome', 'Linux', 'desktop', '(none)', '', '', i, 'referral' "
        "FROM (SELECT unnest($visitors) AS visitor, "
        "unnest($sources) AS source, unnest(range(1, $n + 1)) AS i, $start + i * 1000000 AS t)",
        {"site": SITE, "visitors": visitors, "sources": sources, "n": len(visitors), "start": micros(START)},
    )
    yield con
    con.close()


@pytest.mark.parametrize("fetch", [8, tables.FETCH])
@pytest.mark.parametrize(("offset", "limit"), [(0, 1), (0, 10), (7, 10), (0, 100), (290, 20)])
def test_a_table_ranked_by_visitors_shows_the_rows_a_full_count_would(
    store: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch, fetch: int, offset: int, limit: int
) -> None:
    monkeypatch.setattr(tables, "FETCH", fetch)
    seen: list[str] = []
    run = logged_run(store, seen)
    page = queries.Page(limit, offset)
    rows, more = tables.breakdown(run, DUCKDB, SITE, SPAN, Filters(), "source", "visitors", page)
    full = store.execute(
        "SELECT source, count(DISTINCT visitor) AS v, count(*) FROM visits "
        "GROUP BY source ORDER BY v DESC, source"
    ).fetchall()
    assert [(r["value"], r["visitors"], r["visits"]) for r in rows] == full[offset : offset + limit]
    assert more == (len(full) > offset + limit)


def test_a_short_table_ranked_by_visitors_counts_the_visitors_of_only_some_values(
    store: duckdb.DuckDBPyConnection,
) -> None:
    seen: list[str] = []
    run = logged_run(store, seen)
    tables.breakdown(run, DUCKDB, SITE, SPAN, Filters(), "source", "visitors", queries.Page(5))
    counted = [sql for sql in seen if "DISTINCT" in sql]
    assert counted, seen
    assert all(" IN (" in sql for sql in counted)  # never every value's visitors at once
    assert sum(sql.count("$") for sql in counted) < 300  # far fewer values bound than the 300 sources


def test_a_table_that_many_values_could_still_enter_counts_every_value_in_one_query(
    store: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables, "FETCH", 8)
    seen: list[str] = []
    run = logged_run(store, seen)
    rows, _ = tables.breakdown(run, DUCKDB, SITE, SPAN, Filters(), "source", "visitors", queries.Page(10))
    assert any("DISTINCT" in sql and " IN (" not in sql for sql in seen), seen
    full = store.execute(
        "SELECT source, count(DISTINCT visitor) AS v FROM visits "
        "GROUP BY source ORDER BY v DESC, source LIMIT 10"
    ).fetchall()
    assert [(r["value"], r["visitors"]) for r in rows] == full
