"""The Goals panel on DuckDB (``reports.goal_bitmaps``), straight on a store built from generated
events, against the oracle over the same raw events: exact below the size threshold, unique
visitors within 1 % by bitmaps above it (the threshold lowered here), conversions and revenue
exact either way, and the rate's denominator the dashboard summary's own figure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import pytest

from sightline.reports import counting, goal_bitmaps, goals, queries
from sightline.reports.filters import IS_NOT, Filter, Filters, Goal
from sightline.store import schema
from sightline.store.dialects import DUCKDB
from sightline.store.feed import key_of, micros, props_of
from tests.reports import helpers, oracle
from tests.reports.conversions_world import GOALS, with_purchases
from tests.reports.helpers import Event
from tests.reports.logged import logged_run
from tests.support.store_rows import EVENTS, VISITS

SITE = 1
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
SPAN = (NOW - timedelta(days=20), NOW - timedelta(days=2))
# GOALS, plus a goal on a prop of pageviews and a glob that matches every page.
MORE: list[dict[str, Any]] = [
    {"name": "Pro pageview", "kind": "event", "event": "pageview", "prop": {"key": "plan", "value": "pro"}},
    {"name": "Any page", "kind": "page", "match": "glob", "path": "/**"},
]


def _goal(goal_id: int, g: dict[str, Any]) -> Goal:
    prop, revenue = g.get("prop") or {}, g.get("revenue") or {}
    return Goal(
        goal_id,
        g["name"],
        g["kind"],
        g.get("match"),
        g.get("path"),
        g.get("event"),
        prop.get("key"),
        prop.get("value"),
        revenue.get("prop"),
        revenue.get("currency"),
    )


RULES = {i + 1: g for i, g in enumerate(GOALS + MORE)}
CHOSEN = [_goal(i, g) for i, g in RULES.items()]


def _rows() -> list[Event]:
    rows = with_purchases(helpers.generate(SITE, NOW, 9_000, 24, seed=5), 5)
    # Some pageviews carry a plan, for the pageview prop goal.
    return [
        replace(e, props={"plan": "pro"}) if e.name == "pageview" and i % 7 == 0 else e
        for i, e in enumerate(rows)
    ]


@pytest.fixture(scope="module")
def store() -> Iterator[tuple[duckdb.DuckDBPyConnection, list[Event]]]:
    rows = _rows()
    con = duckdb.connect(config={"threads": 2})
    for statement in schema.DUCKDB:
        con.execute(statement)
    starts: dict[str, datetime] = {}
    numbers: dict[str, int] = {}
    for e in rows:
        numbers.setdefault(e.session_id, len(numbers) + 1)
        starts[e.session_id] = min(starts.get(e.session_id, e.time), e.time)
    columns: dict[str, list[Any]] = {
        "time": [micros(e.time) for e in rows],
        "visitor": [key_of(SITE, e.visitor_id) for e in rows],
        "visit": [numbers[e.session_id] for e in rows],
        "name": [e.name for e in rows],
        "path": [e.path for e in rows],
        "props": [props_of(json.dumps(e.props)) if e.props else [] for e in rows],
        "start": [micros(starts[e.session_id]) for e in rows],
        "source": [e.referrer_source or "(none)" for e in rows],
        "browser": [e.browser for e in rows],
    }
    con.execute(
        f"INSERT INTO {EVENTS} SELECT 1, unnest($time), row_number() OVER (), unnest($visitor), "
        "unnest($visit), unnest($name), unnest($path), unnest($props), unnest($start), unnest($source), "
        "'', '', '', unnest($browser), 'Linux', 'desktop', '(none)', '', '', 'referral'",
        columns,
    )
    con.execute(
        f"INSERT INTO {VISITS} SELECT site_id, visit, visit, min(visitor), min(time), min(time), max(time), "
        "sum(CASE WHEN name = 'pageview' THEN 1 ELSE 0 END), "
        "sum(CASE WHEN name = 'pageview' THEN 0 ELSE 1 END), "
        "NULL, NULL, NULL, NULL, arg_min(source, time), '', '', '', min(browser), min(os), min(device), "
        "'(none)', '', '', max(id), min(channel) FROM events GROUP BY site_id, visit"
    )
    yield con, rows
    con.close()


def _panel(con: duckdb.DuckDBPyConnection, filters: Filters, seen: list[str]) -> dict[int, dict[str, Any]]:
    run = logged_run(con, seen)
    found, more = goals.breakdown(run, DUCKDB, SITE, SPAN, filters, CHOSEN, queries.Page(limit=100))
    assert not more
    return {row["goal_id"]: row for row in found}


def test_below_the_threshold_every_goal_is_counted_exactly(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]],
) -> None:
    con, rows = store
    seen: list[str] = []
    got = _panel(con, Filters(), seen)
    assert got == oracle.expected_goals(rows, SPAN, RULES, {})
    assert seen
    assert not any("bitstring_agg" in sql for sql in seen)
    assert all(row["visitors"] > 0 for i, row in got.items() if RULES[i]["name"] != "Never")


def test_a_filtered_panel_below_the_threshold_counts_the_selected_visits_exactly(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]],
) -> None:
    con, rows = store
    filters = Filters(rules=(Filter("browser", "is", "Chrome"),))
    got = _panel(con, filters, [])
    assert got == oracle.expected_goals(rows, SPAN, RULES, {"browser": "Chrome"})


def test_above_the_threshold_visitors_are_estimated_within_one_percent_and_the_rest_is_exact(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]], monkeypatch: pytest.MonkeyPatch
) -> None:
    con, rows = store
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    seen: list[str] = []
    got = _panel(con, Filters(), seen)
    assert any("bitstring_agg" in sql and "::BLOB" in sql for sql in seen)
    expected = oracle.expected_goals(rows, SPAN, RULES, {})
    for goal_id, want in expected.items():
        have = got[goal_id]
        assert {k: v for k, v in have.items() if k not in ("visitors", "conversion_rate")} == {
            k: v for k, v in want.items() if k not in ("visitors", "conversion_rate")
        }
        assert abs(have["visitors"] - want["visitors"]) <= 0.01 * want["visitors"], (have, want)
        assert abs(have["conversion_rate"] - want["conversion_rate"]) <= 0.01 * want["conversion_rate"] + 1e-4
    assert expected[9]["visitors"] > 1_000  # the bitmaps count thousands of visitors
    assert got[7]["visitors"] == 0  # "Never"


def test_a_filtered_panel_above_the_threshold_is_one_exact_query(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter's selection of visits is read once (the bitmaps' passes would each read it again)."""
    con, rows = store
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    seen: list[str] = []
    got = _panel(con, Filters(rules=(Filter("browser", IS_NOT, "Safari"),)), seen)
    assert len(seen) == 1
    assert got == oracle.expected_goals(rows, SPAN, RULES, {"browser": "!Safari"})


def test_the_rates_denominator_is_the_dashboard_summarys_visitors(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]], monkeypatch: pytest.MonkeyPatch
) -> None:
    con, _ = store
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    run = logged_run(con, [])
    summary = queries.totals(run, DUCKDB, SITE, SPAN, Filters())["visitors"]
    found = goal_bitmaps.figures(run, DUCKDB, SITE, SPAN, Filters(), CHOSEN)
    assert found.everyone == summary
    assert found.visitors[CHOSEN.index(next(g for g in CHOSEN if g.name == "Any page"))] <= summary * 1.01


@pytest.mark.parametrize("total", [1 << 18, 1 << 20])
def test_too_many_goal_classes_for_the_bitmaps_are_counted_exactly(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]], monkeypatch: pytest.MonkeyPatch, total: int
) -> None:
    """Known before the tally (the custom events' groups alone pass the bound: the tally makes no
    bitmaps) or after it (the pageviews' 8 classes of 2^18 bits pass it: a tally without bitmaps
    follows)."""
    con, rows = store
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    monkeypatch.setattr(goal_bitmaps, "MAX_TOTAL", total)
    seen: list[str] = []
    got = _panel(con, Filters(), seen)
    # The tally's groups' bitmaps (4 x 2^18 bits).
    assert any("::BLOB" in sql for sql in seen[:-2]) == (total > 1 << 18)
    assert "::BLOB" not in seen[-2]  # the exact count's tally
    assert "count(DISTINCT visitor)" in seen[-1]
    assert "::BLOB" not in seen[-1]
    want = oracle.expected_goals(rows, SPAN, RULES, {})
    assert {i: {k: v for k, v in r.items() if k != "conversion_rate"} for i, r in got.items()} == {
        i: {k: v for k, v in r.items() if k != "conversion_rate"} for i, r in want.items()
    }


@pytest.mark.parametrize("threshold", [counting.EXACT_BELOW, 1_000])
def test_a_goal_narrowed_by_a_prop_of_events_the_span_lacks_leaves_the_panel_answering(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]], monkeypatch: pytest.MonkeyPatch, threshold: int
) -> None:
    """Pageviews convert, no custom event does: the reach pass reads pageviews only, and binds
    no value of the custom events' rules it does not read (DuckDB refuses unused parameters)."""
    con, rows = store
    monkeypatch.setattr(counting, "EXACT_BELOW", threshold)
    rules: dict[int, dict[str, Any]] = {
        1: {"name": "Pricing page", "kind": "page", "match": "exact", "path": "/pricing"},
        2: {
            "name": "Pro upgrade",
            "kind": "event",
            "event": "upgrade",
            "prop": {"key": "plan", "value": "pro"},
        },
    }
    run = logged_run(con, [])
    found, _ = goals.breakdown(
        run, DUCKDB, SITE, SPAN, Filters(), [_goal(i, g) for i, g in rules.items()], queries.Page(limit=100)
    )
    got = {row["goal_id"]: row for row in found}
    want = oracle.expected_goals(rows, SPAN, rules, {})
    assert got[2] == want[2]
    assert got[1]["conversions"] == want[1]["conversions"] > 0
    assert abs(got[1]["visitors"] - want[1]["visitors"]) <= 0.01 * want[1]["visitors"]


def test_above_the_threshold_custom_events_are_read_once_and_their_goals_counted_from_the_tally(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tally groups the goals' custom events with a bitmap of visitors per group; the reach
    pass reads pageviews only."""
    con, rows = store
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    seen: list[str] = []
    got = _panel(con, Filters(), seen)
    custom = [sql for sql in seen if "name IN (" in sql or "name != 'pageview'" in sql]
    assert len(custom) == 1
    assert "bitstring_agg" in custom[0]
    assert len([sql for sql in seen if "JOIN (SELECT unnest(" in sql]) == 1  # the pageviews' reach
    expected = oracle.expected_goals(rows, SPAN, RULES, {})
    for goal_id in (4, 5, 6):  # Signup, Pro signup, Purchase: custom event goals
        want, have = expected[goal_id], got[goal_id]
        assert have["conversions"] == want["conversions"]
        assert abs(have["visitors"] - want["visitors"]) <= 0.01 * want["visitors"], (have, want)
