"""The Goals panel's kept days (``reports.goal_days``), straight on a DuckDB store built from
generated events: a warm panel reads only today's events and answers as a cold one does, and every
change to what a kept day was derived from (a late event, an edited, deleted or new goal, the
site's time zone, a visitor's erasure, a retention cut, a deleted site whose id comes back, a
store rebuilt) gives the oracle's figures over the changed events, never the kept ones. The store's
record of each write (``store.changes``) is made here as the store makes it, for the rows the
tests write by hand."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import duckdb
import pytest

from sightline.reports import counting, goal_bitmaps, goal_days, goals, queries
from sightline.reports.filters import Filters, Goal
from sightline.reports.goal_days import Days
from sightline.reports.goal_days import Ledger as GoalLedger
from sightline.reports.kept_figures import Kept
from sightline.reports.period import period_of
from sightline.store import schema
from sightline.store.changes import EVERYTHING, Changes, hours_of
from sightline.store.dialects import DUCKDB
from sightline.store.feed import key_of, micros, props_of
from tests.reports import helpers, oracle
from tests.reports.conversions_world import GOALS, with_purchases
from tests.reports.helpers import Event
from tests.reports.logged import logged_run
from tests.reports.test_goal_bitmaps import _goal
from tests.support.store_rows import EVENTS

SITE = 1
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)  # New York left summer time on 1 November
ZONE = ZoneInfo("America/New_York")
RULES = {i + 1: g for i, g in enumerate(GOALS)}
CHANGES = [Changes()]  # the store's change records, new for each test (``store`` fixture)


def Ledger(background: bool = True) -> GoalLedger:
    """The Goals panel's days in a layer of kept figures dropped by the test store's records."""
    return GoalLedger(Kept(lambda site, after: CHANGES[0].since(site, after)), background)


def _erased(con: duckdb.DuckDBPyConnection, where: str, params: dict[str, Any]) -> None:
    """Deletes the events and visits ``where`` picks, recording the hours of the events as the
    store's maintenance does."""
    found = con.execute(f"SELECT time FROM events WHERE {where}", params).fetchall()
    for table in ("events", "visits"):
        con.execute(f"DELETE FROM {table} WHERE {where}", params)
    CHANGES[0].record(hours_of([SITE] * len(found), [int(r[0]) for r in found]))


def _load(con: duckdb.DuckDBPyConnection, rows: list[Event], first_id: int) -> None:
    """The rows as the feed writes them (ids from ``first_id`` on), and the watermark."""
    starts: dict[str, datetime] = {}
    for e in rows:
        starts[e.session_id] = min(starts.get(e.session_id, e.time), e.time)
    columns: dict[str, list[Any]] = {
        "time": [micros(e.time) for e in rows],
        "visitor": [key_of(SITE, e.visitor_id) for e in rows],
        "visit": [key_of(SITE, e.session_id) >> 32 for e in rows],  # a 32-bit number per visit
        "name": [e.name for e in rows],
        "path": [e.path for e in rows],
        "props": [props_of(json.dumps(e.props)) if e.props else [] for e in rows],
        "start": [micros(starts[e.session_id]) for e in rows],
    }
    con.execute(
        f"INSERT INTO {EVENTS} SELECT {SITE}, unnest($time), {first_id - 1} + row_number() OVER (), "
        "unnest($visitor), unnest($visit), unnest($name), unnest($path), unnest($props), unnest($start), "
        "'(none)', '', '', '', 'Chrome', 'Linux', 'desktop', '(none)', '', '', 'direct'",
        columns,
    )
    con.execute("DELETE FROM store_state")
    con.execute("INSERT INTO store_state SELECT 'watermark', coalesce(max(id), 0) FROM events")
    times = columns["time"] + columns["start"]
    CHANGES[0].record(hours_of([SITE] * len(times), times), removed=False)


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[duckdb.DuckDBPyConnection, list[Event]]]:
    monkeypatch.setattr(counting, "EXACT_BELOW", 1_000)
    rows = with_purchases(helpers.generate(SITE, NOW, 6_000, 24, seed=11), 3)
    CHANGES[0] = Changes()
    con = duckdb.connect(config={"threads": 2})
    for statement in schema.DUCKDB:
        con.execute(statement)
    _load(con, rows, 1)
    yield con, rows
    con.close()


def _span(zone: ZoneInfo = ZONE) -> tuple[datetime, datetime]:
    period = period_of("30d", None, None, zone, NOW)
    return period.start, period.end


def _panel(
    con: duckdb.DuckDBPyConnection,
    ledger: GoalLedger,
    rules: dict[int, dict[str, Any]] = RULES,
    zone: ZoneInfo = ZONE,
    seen: list[str] | None = None,
) -> dict[int, dict[str, Any]]:
    chosen = [_goal(i, g) for i, g in rules.items()]
    run = logged_run(con, seen if seen is not None else [])
    days = Days(ledger, zone, NOW)
    found, _ = goals.breakdown(
        run, DUCKDB, SITE, _span(zone), Filters(), chosen, queries.Page(limit=100), days
    )
    return {row["goal_id"]: row for row in found}


def _agrees(
    got: dict[int, dict[str, Any]],
    rows: list[Event],
    rules: dict[int, dict[str, Any]] = RULES,
    zone: ZoneInfo = ZONE,
) -> None:
    """Conversions and revenue exact, converting visitors within 1 % (bitmaps)."""
    want = oracle.expected_goals(rows, _span(zone), rules, {})
    assert set(got) == set(want)
    for goal_id, expected in want.items():
        have = got[goal_id]
        assert have["conversions"] == expected["conversions"], (rules[goal_id]["name"], have, expected)
        assert have.get("revenue") == expected.get("revenue")
        assert abs(have["visitors"] - expected["visitors"]) <= 0.01 * expected["visitors"], (have, expected)


def _warm(
    con: duckdb.DuckDBPyConnection, rows: list[Event], rules: dict[int, dict[str, Any]] = RULES
) -> GoalLedger:
    ledger = Ledger(background=False)
    _agrees(_panel(con, ledger, rules), rows, rules)
    assert len(ledger) == 29 * len(rules)  # every complete day of the 30, for each goal
    return ledger


def _late(rows: list[Event], day: int, path: str, count: int) -> list[Event]:
    """``count`` pageviews of ``path`` ``day`` days ago (new visitors), as they arrive late."""
    at = NOW - timedelta(days=day)
    return [
        replace(
            rows[0],
            time=at + timedelta(seconds=i),
            visitor_id=f"late-{i}",
            session_id=f"late-{i}",
            name="pageview",
            path=path,
            props={},
        )
        for i in range(count)
    ]


def test_a_warm_panel_reads_only_todays_events_and_answers_as_the_cold_one(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]],
) -> None:
    con, rows = store
    ledger = Ledger(background=False)
    cold = _panel(con, ledger)
    seen: list[str] = []
    warm = _panel(con, ledger, seen=seen)
    assert warm == cold
    _agrees(warm, rows)
    assert len([sql for sql in seen if "SELECT day" in sql or sql.startswith("SELECT bitstring_agg")]) == 2


def test_a_warm_panel_binds_todays_start_only(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]],
) -> None:
    con, _ = store
    ledger = Ledger(background=False)
    _panel(con, ledger)
    values: list[dict[str, Any]] = []

    def run(sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        if "SELECT day" in sql:
            values.append(params)
        return con.cursor().execute(sql, params).fetchall()

    chosen = [_goal(i, g) for i, g in RULES.items()]
    goals.breakdown(
        run, DUCKDB, SITE, _span(), Filters(), chosen, queries.Page(limit=100), Days(ledger, ZONE, NOW)
    )
    today = micros(datetime(2026, 11, 20, tzinfo=ZONE).astimezone(UTC))
    assert len(values) == 1
    assert today in values[0].values()
    assert micros(_span()[0]) not in values[0].values()


def test_a_late_event_for_a_kept_day_is_counted(store: tuple[duckdb.DuckDBPyConnection, list[Event]]) -> None:
    con, rows = store
    ledger = _warm(con, rows)
    late = _late(rows, 10, "/pricing", 40)
    _load(con, late, 10_000_000)
    _agrees(_panel(con, ledger), rows + late)
    assert len(ledger) == 29 * len(RULES)  # the day read again is kept again


def test_an_edited_goal_counts_its_new_rule_on_kept_days(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]],
) -> None:
    con, rows = store
    ledger = _warm(con, rows)
    edited = {**RULES, 1: {"name": "Pricing page", "kind": "page", "match": "prefix", "path": "/docs"}}
    _agrees(_panel(con, ledger, edited), rows, edited)


def test_a_deleted_goal_and_a_new_one_of_its_name_count_the_new_rule(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]],
) -> None:
    con, rows = store
    ledger = _warm(con, rows)
    rules = {i: g for i, g in RULES.items() if i != 4}
    rules[99] = {"name": "Signup", "kind": "event", "event": "download"}
    got = _panel(con, ledger, rules)
    _agrees(got, rows, rules)
    assert 4 not in got


def test_a_changed_time_zone_splits_the_span_into_its_own_days(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]],
) -> None:
    con, rows = store
    ledger = _warm(con, rows)
    tokyo = ZoneInfo("Asia/Tokyo")
    _agrees(_panel(con, ledger, zone=tokyo), rows, zone=tokyo)


def test_an_erased_visitor_leaves_the_kept_days(store: tuple[duckdb.DuckDBPyConnection, list[Event]]) -> None:
    con, rows = store
    ledger = _warm(con, rows)
    # The visitor with the most pricing pageviews in the span before today.
    counts: dict[str, int] = {}
    for e in rows:
        if e.path == "/pricing" and e.name == "pageview" and e.time < NOW - timedelta(days=1):
            counts[e.visitor_id] = counts.get(e.visitor_id, 0) + 1
    visitor = max(counts, key=lambda v: counts[v])
    _erased(con, "site_id = $s AND visitor = $v", {"s": SITE, "v": key_of(SITE, visitor)})
    _agrees(_panel(con, ledger), [e for e in rows if e.visitor_id != visitor])


def test_an_event_fed_while_a_day_is_read_and_then_erased_is_not_kept_in_it(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]],
) -> None:
    """A late event for a kept day makes the next request read that day again; a second late
    event fed between that request's sync and its read, then erased before the next request: the
    day kept with it is dropped by the erasure's record."""
    con, rows = store
    ledger = _warm(con, rows)
    first = _late(rows, 10, "/pricing", 5)
    _load(con, first, 10_000_000)
    second = [replace(e, visitor_id=f"erased-{i}", session_id=f"erased-{i}") for i, e in enumerate(first)]
    fed: list[bool] = []

    def run(sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        answer = con.cursor().execute(sql, params).fetchall()
        if not fed:  # the first read, after the sync: the second batch arrives right after it
            fed.append(True)
            _load(con, second, 20_000_000)
        return answer

    chosen = [_goal(i, g) for i, g in RULES.items()]
    days = Days(ledger, ZONE, NOW)
    goals.breakdown(run, DUCKDB, SITE, _span(), Filters(), chosen, queries.Page(limit=100), days)
    assert fed
    # the erasure, as the store's maintenance applies it
    _erased(
        con,
        "site_id = $s AND list_contains($v, visitor)",
        {"s": SITE, "v": [key_of(SITE, e.visitor_id) for e in second]},
    )
    _agrees(_panel(con, ledger), rows + first)


def test_a_retention_cut_leaves_the_kept_days(store: tuple[duckdb.DuckDBPyConnection, list[Event]]) -> None:
    con, rows = store
    ledger = _warm(con, rows)
    cut = NOW - timedelta(days=12)
    con.execute("DELETE FROM events WHERE site_id = $s AND time < $t", {"s": SITE, "t": micros(cut)})
    CHANGES[0].record({SITE: [(EVERYTHING[0], micros(cut))]})
    _agrees(_panel(con, ledger), [e for e in rows if e.time >= cut])


def test_a_deleted_site_whose_id_comes_back_counts_the_new_sites_events(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]],
) -> None:
    con, rows = store
    ledger = _warm(con, rows)
    con.execute("DELETE FROM events WHERE site_id = $s", {"s": SITE})  # the maintenance's purge
    CHANGES[0].record({SITE: [EVERYTHING]})
    other = with_purchases(helpers.generate(SITE, NOW, 5_000, 24, seed=12), 4)
    _load(con, other, 10_000_000)
    _agrees(_panel(con, ledger), other)


def test_a_rebuilt_store_is_read_again(store: tuple[duckdb.DuckDBPyConnection, list[Event]]) -> None:
    """Rebuilt from a log that kept fewer events (with their ids): first half way through, then
    whole."""
    con, rows = store
    ledger = _warm(con, rows)
    gone = sorted({e.visitor_id for e in rows})[::5]
    keys = [key_of(SITE, v) for v in gone]
    cut = micros(NOW - timedelta(days=8))
    con.execute("CREATE TABLE old AS SELECT * FROM events WHERE NOT list_contains($k, visitor)", {"k": keys})
    con.execute("DELETE FROM events")
    CHANGES[0].record(None)
    con.execute("INSERT INTO events SELECT * FROM old WHERE time < $c", {"c": cut})
    CHANGES[0].record({SITE: [(EVERYTHING[0], cut)]}, removed=False)
    kept = [e for e in rows if e.visitor_id not in set(gone)]
    _agrees(_panel(con, ledger), [e for e in kept if micros(e.time) < cut])
    con.execute("INSERT INTO events SELECT * FROM old WHERE time >= $c", {"c": cut})
    CHANGES[0].record({SITE: [(cut, EVERYTHING[1])]}, removed=False)
    _agrees(_panel(con, ledger), kept)


def test_a_cold_panel_answers_from_one_read_and_keeps_its_days_in_the_background(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]],
) -> None:
    con, rows = store
    ledger = Ledger()
    seen: list[str] = []
    cold = _panel(con, ledger, seen=seen)
    ledger.wait()
    assert len(ledger) == 29 * len(RULES)
    warm = _panel(con, ledger)
    assert warm == cold
    _agrees(warm, rows)


def test_a_bitmap_folds_into_the_one_a_smaller_size_would_set() -> None:
    con = duckdb.connect()
    hashes = list(range(1, 1 << 40, (1 << 40) // 5_000 + 12_345))
    made = {
        size: int.from_bytes(
            con.execute(
                f"SELECT bitstring_agg((h & {size - 1})::UBIGINT, 0, {size - 1})::BLOB "
                "FROM (SELECT unnest($h) AS h)",
                {"h": hashes},
            ).fetchone()[0],  # type: ignore[index]
            "big",
        )
        for size in (1 << 16, 1 << 18, 1 << 20)
    }
    assert goal_bitmaps.fold(made[1 << 20], 1 << 20, 1 << 16) == made[1 << 16]
    assert goal_bitmaps.fold(made[1 << 18], 1 << 18, 1 << 16) == made[1 << 16]
    assert goal_bitmaps.fold(made[1 << 20], 1 << 20, 1 << 20) == made[1 << 20]


def test_an_events_piece_is_its_local_day_across_a_clock_change() -> None:
    days = Days(Ledger(), ZONE, NOW)
    span = _span()
    bounds = days.bounds(span)
    assert len(bounds) == 31  # 29 whole days, today until the next hour
    con = duckdb.connect()
    index = goal_bitmaps.index_of(bounds)
    times = [b + d for b in bounds[:-1] for d in (0, 1, 3_600_000_000 - 1, 23 * 3_600_000_000)]
    times = [t for t in times if t < bounds[-1]]
    got = con.execute(
        f"SELECT list({index} ORDER BY time) FROM (SELECT unnest($t) AS time)", {"t": times}
    ).fetchone()
    want = [max(i for i, b in enumerate(bounds[:-1]) if b <= t) for t in sorted(times)]
    assert got is not None
    assert got[0] == want
    assert any(bounds[i + 1] - bounds[i] == 25 * 3_600_000_000 for i in range(len(bounds) - 2))


def test_goals_with_the_same_rule_share_their_kept_days() -> None:
    a = Goal(1, "A", "page", "exact", "/x")
    b = Goal(2, "B", "page", "exact", "/x", currency="EUR")
    assert goal_days.rule_of(a) == goal_days.rule_of(b)
    assert goal_days.rule_of(a) != goal_days.rule_of(replace(a, path="/y"))


def test_a_smaller_bitmap_of_a_kept_day_never_replaces_a_bigger_one() -> None:
    ledger = Ledger(background=False)
    rule = goal_days.rule_of(Goal(1, "A", "page", "exact", "/x"))
    big = goal_bitmaps.Piece([3], [None], [0b1011 << 100], 1 << 19)
    small = goal_bitmaps.Piece([3], [None], [0b11], 1 << 18)
    seen = ledger.kept.sync(SITE)
    ledger.keep(SITE, (0, 1), [rule], seen, big)
    ledger.keep(SITE, (0, 1), [rule], seen, small)
    kept = ledger.get(SITE, (0, 1), rule, 1 << 18, seen)
    assert kept is not None
    assert kept.size == 1 << 19
    assert ledger.get(SITE, (0, 1), rule, 1 << 20, seen) is None


def test_a_panel_whose_days_are_being_read_for_a_longer_one_reads_none_again(
    store: tuple[duckdb.DuckDBPyConnection, list[Event]],
) -> None:
    """The 7-day panel right after a cold 30-day one: its days come with the 30 days' being read."""
    con, _ = store
    ledger = Ledger()
    started: list[int] = []
    original = goal_bitmaps.pieces

    def slow(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "sightline-goal-days":
            started.append(len(args[4]))
            gate.wait(30)
        return original(*args, **kwargs)

    gate = threading.Event()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(goal_bitmaps, "pieces", slow)
        _panel(con, ledger)  # 30 days: the days are read in the background, held at the gate
        week = period_of("7d", None, None, ZONE, NOW)
        chosen = [_goal(i, g) for i, g in RULES.items()]
        goals.breakdown(
            logged_run(con, []),
            DUCKDB,
            SITE,
            (week.start, week.end),
            Filters(),
            chosen,
            queries.Page(limit=100),
            Days(ledger, ZONE, NOW),
        )
        gate.set()
        ledger.wait()
    assert sorted(started) == [1, 7, 7, 7, 7]  # one reader, a week at a time; none for the 7 days
    assert len(ledger) == 29 * len(RULES)
