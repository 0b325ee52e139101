"""The realtime report's kept figures (``reports.realtime``), straight on a DuckDB store: a warm
ledger reads only the events fed since its last request and answers exactly as the plain queries
over every event of the window do, through new minutes, late events, sub-second window edges, a
visitor's erasure, a deleted site, a rebuilt store and requests for an older moment."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta

import duckdb
import pytest

from sightline.reports import realtime
from sightline.reports.kept_figures import Kept
from sightline.reports.realtime import Ledger as RealtimeLedger
from sightline.reports.realtime import plain
from sightline.reports.service import REALTIME_MINUTES, REALTIME_WINDOW
from sightline.store import schema
from sightline.store.changes import EVERYTHING, Changes, hours_of
from sightline.store.dialects import CLICKHOUSE, DUCKDB
from sightline.store.epoch import micros
from tests.reports.logged import logged_run
from tests.support.store_rows import EVENTS

SITE = 1
START = datetime(2026, 11, 20, 12, 0, 0, 250_000, tzinfo=UTC)
PATHS = ("/", "/docs", "/pricing", "/blog/a", "/blog/b")
CHANGES = [Changes()]  # the store's change records, new for each test (``store`` fixture)


def Ledger() -> RealtimeLedger:
    """Realtime figures in a layer of kept figures dropped by the test store's records."""
    return RealtimeLedger(Kept(lambda site, after: CHANGES[0].since(site, after)))


class Store:
    """A DuckDB store fed the way the feed feeds: ids in order, the watermark with them, each write
    recorded as the store records it (``store.changes``)."""

    def __init__(self) -> None:
        self.con = duckdb.connect(config={"threads": 2})
        for statement in schema.DUCKDB:
            self.con.execute(statement)
        self.con.execute("INSERT INTO store_state VALUES ('watermark', 0)")
        self.next_id = 1
        self.rng = random.Random(7)

    def feed(self, rows: list[tuple[int, datetime, int, str, str]]) -> None:
        """(site, time, visitor, name, path) rows."""
        for site, moment, visitor, name, path in rows:
            self.con.execute(
                f"INSERT INTO {EVENTS} VALUES ($site, $time, $id, $visitor, 1, $name, $path, [], 0, "
                "'', '', '', '', '', '', '', '', '', '', '')",
                {"site": site, "time": micros(moment), "id": self.next_id, "visitor": visitor, "name": name}
                | {"path": path},
            )
            self.next_id += 1
        mark = {"w": self.next_id - 1}
        self.con.execute("UPDATE store_state SET value = $w WHERE name = 'watermark'", mark)
        fed = hours_of([r[0] for r in rows], [micros(r[1]) for r in rows])
        CHANGES[0].record(fed, removed=False, watermark=self.next_id - 1)

    def delete(self, where: str, params: Mapping[str, object], site: int = SITE) -> None:
        """Events deleted (an erasure, a retention cut, a deleted site), recorded."""
        self.con.execute(f"DELETE FROM events WHERE {where}", dict(params))
        CHANGES[0].record({site: [EVERYTHING]})

    def traffic(self, now: datetime, count: int, back: timedelta = timedelta(seconds=30)) -> None:
        """``count`` events of 40 visitors in the ``back`` before ``now``, a few on another site."""
        rows = []
        for _ in range(count):
            moment = now - timedelta(microseconds=self.rng.randrange(int(back / timedelta(microseconds=1))))
            name = "pageview" if self.rng.random() < 0.8 else "signup"
            site = SITE if self.rng.random() < 0.9 else 2
            rows.append((site, moment, self.rng.randrange(1, 41), name, self.rng.choice(PATHS)))
        self.feed(rows)

    def run(self, sql: str, params: dict[str, object]) -> list[tuple[object, ...]]:
        return self.con.cursor().execute(sql, params).fetchall()


@pytest.fixture
def store() -> Iterator[Store]:
    CHANGES[0] = Changes()
    made = Store()
    yield made
    made.con.close()


def _args(now: datetime) -> tuple[tuple[datetime, datetime], datetime, int]:
    first = now.replace(second=0, microsecond=0) - timedelta(minutes=REALTIME_MINUTES - 1)
    return (now - REALTIME_WINDOW, now + timedelta(minutes=1)), first, REALTIME_MINUTES


def _both(
    store: Store, ledger: RealtimeLedger, now: datetime, seen: list[str] | None = None
) -> realtime.Answer:
    run = logged_run(store.con, seen) if seen is not None else store.run
    window, first, minutes = _args(now)
    got = ledger.answer(run, DUCKDB, SITE, window, first, minutes)
    assert got == plain(store.run, DUCKDB, SITE, window, first, minutes)
    return got


def test_a_warm_ledger_answers_as_the_plain_queries_while_minutes_pass(store: Store) -> None:
    ledger = Ledger()
    now = START
    store.traffic(now, 400, back=timedelta(minutes=40))  # some before the chart's 30 minutes
    first = _both(store, ledger, now)
    assert first.visitors > 0
    assert first.pageviews > 0
    assert first.pages
    for _ in range(12):  # 12 requests 25 s apart: the window and the chart move on
        now += timedelta(seconds=25, microseconds=333)
        store.traffic(now, 60, back=timedelta(seconds=25))
        _both(store, ledger, now)
    assert len(ledger) == 1


def test_a_warm_request_reads_only_the_events_fed_since_the_last(store: Store) -> None:
    ledger = Ledger()
    store.traffic(START, 300)
    _both(store, ledger, START)
    store.traffic(START + timedelta(seconds=1), 50, back=timedelta(seconds=1))
    seen: list[str] = []
    _both(store, ledger, START + timedelta(seconds=1), seen)
    assert len(seen) == 1
    assert "count(DISTINCT" not in seen[0]
    assert "id > $after" in seen[0]


def test_late_events_for_past_minutes_and_the_window_edge_are_counted(store: Store) -> None:
    ledger = Ledger()
    store.traffic(START, 200, back=timedelta(minutes=20))
    _both(store, ledger, START)
    now = START + timedelta(seconds=10)
    since = now - REALTIME_WINDOW
    store.feed(
        [
            (SITE, START - timedelta(minutes=17), 99, "pageview", "/late"),  # a retried batch's event
            (SITE, since - timedelta(microseconds=1), 98, "pageview", "/edge"),  # just before the window
            (SITE, since, 97, "pageview", "/edge"),  # its first moment
            (SITE, since + timedelta(microseconds=400_000), 96, "pageview", "/edge"),  # in its first second
            (SITE, START - timedelta(minutes=45), 95, "pageview", "/old"),  # before the chart
        ]
    )
    got = _both(store, ledger, now)
    assert {"value": "/edge", "visitors": 2} in got.pages


def test_an_erased_visitor_and_a_deleted_site_leave_the_figures(store: Store) -> None:
    ledger = Ledger()
    store.traffic(START, 300)
    _both(store, ledger, START)
    store.delete("site_id = $s AND visitor = 5", {"s": SITE})
    _both(store, ledger, START + timedelta(seconds=1))
    cut = {"s": SITE, "t": micros(START) - 10**7}
    store.delete("site_id = $s AND time < $t", cut)
    got = _both(store, ledger, START + timedelta(seconds=2))
    store.delete("site_id = $s", {"s": SITE})
    assert _both(store, ledger, START + timedelta(seconds=3)).visitors == 0
    assert got.visitors > 0


def test_a_rebuilt_store_is_read_again(store: Store) -> None:
    ledger = Ledger()
    store.traffic(START, 300)
    _both(store, ledger, START)
    store.con.execute("DELETE FROM events")
    CHANGES[0].record(None)  # a rebuild
    store.next_id = 1
    store.traffic(START, 20)
    assert store.run("SELECT value FROM store_state", {})[0][0] == 20
    _both(store, ledger, START + timedelta(seconds=1))


def test_a_request_for_an_older_moment_is_answered_by_the_plain_queries(store: Store) -> None:
    ledger = Ledger()
    store.traffic(START, 300)
    _both(store, ledger, START)
    _both(store, ledger, START - timedelta(minutes=3))  # the spike alert's own clock, say
    _both(store, ledger, START + timedelta(seconds=1))  # the kept figures were not touched
    seen: list[str] = []
    store.traffic(START + timedelta(minutes=2), 5, back=timedelta(seconds=1))
    _both(store, ledger, START + timedelta(minutes=1), seen)  # events after its window: plain
    assert any("count(DISTINCT" in sql for sql in seen)


def test_clickhouse_stores_are_answered_by_the_plain_queries(store: Store) -> None:
    seen: list[str] = []

    def run(sql: str, params: dict[str, object]) -> list[tuple[object, ...]]:
        seen.append(sql)
        return [(0, None)] if "LIMIT" not in sql and "GROUP BY" not in sql else []

    window, first, minutes = _args(START)
    got = Ledger().answer(run, CLICKHOUSE, SITE, window, first, minutes)
    assert got.visitors == 0
    assert len(got.minutes) == minutes
    assert seen
    assert all("count(DISTINCT" in sql for sql in seen)


def test_a_site_over_the_size_bound_is_not_kept(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(realtime, "MAX_ENTRIES", 10)
    ledger = Ledger()
    store.traffic(START, 300)
    _both(store, ledger, START)
    assert len(ledger) == 0
    _both(store, ledger, START + timedelta(seconds=1))
    assert len(ledger) == 0


def test_a_site_with_more_events_in_its_window_than_the_bound_is_answered_without_reading_them_whole(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(realtime, "MAX_ENTRIES", 10)
    ledger = Ledger()
    store.traffic(START, 300)
    seen: list[str] = []
    _both(store, ledger, START, seen)
    assert len(ledger) == 0
    assert not [sql for sql in seen if "WITH fed" in sql], "the window's events were read whole"
    assert any("count(DISTINCT" in sql for sql in seen)  # the plain queries answered


def test_the_least_recently_asked_site_goes_when_the_kept_pairs_pass_the_bound(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = Ledger()
    store.traffic(START, 300)
    store.feed([(3, START - timedelta(seconds=5), 1, "pageview", "/")])
    window, first, minutes = _args(START)
    ledger.answer(store.run, DUCKDB, 3, window, first, minutes)
    _both(store, ledger, START)
    assert len(ledger) == 2
    size = sum(site.size for site in ledger._sites.values())
    monkeypatch.setattr(realtime, "MAX_ENTRIES", size - 1)  # the small site 3 goes, site 1 stays
    _both(store, ledger, START + timedelta(seconds=1))
    assert list(ledger._sites) == [SITE]
