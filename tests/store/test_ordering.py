"""The embedded store rewrites settled spans of time in site order, losing and doubling nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sightline.store import ordering
from sightline.store.engines import Embedded
from sightline.store.ordering import DAY, HOUR, Ordering
from tests.support.store_rows import EVENTS, VISITS

NOW = 1_790_000_000_000_000 // HOUR * HOUR  # microseconds, on a whole hour
SITES = (1, 2, 3)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Embedded]:
    opened = Embedded(tmp_path / "data", 256)
    yield opened
    opened.close()


def _fill(store: Embedded, first: int, hours: int, per_hour: int) -> None:
    """Events of the three sites interleaved, as the feed writes them (one visit per event)."""
    store.execute(
        f"INSERT INTO {EVENTS} SELECT (n % 3) + 1, $first + n * ($hour // $per), n, hash(n), n // 3 + 1, "
        "'pageview', '/', [], $first + n * ($hour // $per), '(none)', '', '', '', 'Chrome', 'Linux', "
        "'desktop', '(none)', '', '', 'direct' FROM range($count) t(n)",
        {"first": first, "hour": HOUR, "per": per_hour, "count": hours * per_hour},
    )
    store.execute(
        f"INSERT INTO {VISITS} SELECT site_id, visit, hash(id), visitor, time, time, time, 1, 0, '/', time, "
        "'/', time, "
        "source, utm_source, utm_medium, utm_campaign, browser, os, device, country, region, city, id, "
        "channel FROM events WHERE time >= $first",
        {"first": first},
    )


def _rows(store: Embedded, table: str, column: str) -> list[tuple[int, int]]:
    """(site, time) of every row in the table's own order."""
    return [(int(s), int(t)) for s, t in store.query(f"SELECT site_id, {column} FROM {table}", {})]


def test_a_settled_span_is_written_again_sorted_by_site_and_time_with_the_same_rows(store: Embedded) -> None:
    _fill(store, NOW - 10 * HOUR, 10, 300)  # 3,000 events over the last 10 hours
    before = sorted(store.query("SELECT * FROM events", {}))
    visits_before = sorted(store.query("SELECT * FROM visits", {}))
    job = Ordering(store, chunk=1_000)
    moved = job.run(NOW)
    assert moved >= 1_000
    end = store.ordered_until()
    assert end % HOUR == 0
    assert end <= NOW - ordering.SETTLE
    assert sorted(store.query("SELECT * FROM events", {})) == before  # nothing lost, nothing doubled
    assert sorted(store.query("SELECT * FROM visits", {})) == visits_before
    for table, column in (("events", "time"), ("visits", "born")):
        rows = _rows(store, table, column)
        span = [row for row in rows if row[1] < end]
        assert span == sorted(span)  # site by site, each in time order
        assert len({site for site, _ in span}) == len(SITES)
    interleaved = [site for site, t in _rows(store, "events", "time") if t >= end]
    assert interleaved[:3] == [1, 2, 3]  # the span still to settle stays as it was fed


def test_spans_follow_each_other_until_only_unsettled_or_too_few_recent_events_are_left(
    store: Embedded,
) -> None:
    _fill(store, NOW - 10 * HOUR, 10, 300)
    job = Ordering(store, chunk=1_000)
    ends = []
    while (span := job.due(NOW)) is not None:
        assert span[0] == store.ordered_until()
        store.rewrite_in_order(*span)
        ends.append(store.ordered_until())
    assert ends == sorted(ends)
    assert len(ends) >= 2
    unsorted = store.query("SELECT count(*) FROM events WHERE time >= $t", {"t": store.ordered_until()})[0][0]
    assert 0 < unsorted < 1_000 + 300  # the last hour, and a part-chunk that is still recent
    assert store.ordered_until() <= NOW - ordering.SETTLE


def test_a_part_chunk_is_sorted_once_it_is_more_than_a_day_old(store: Embedded) -> None:
    _fill(store, NOW - 3 * DAY, 2, 100)  # 200 events, three days ago
    job = Ordering(store, chunk=1_000)
    assert job.due(NOW - 2 * DAY - 23 * HOUR) is None  # under a day old then, and too few
    span = job.due(NOW)
    assert span is not None
    store.rewrite_in_order(*span)
    assert store.ordered_until() == NOW - ordering.SETTLE
    rows = _rows(store, "events", "time")
    assert rows == sorted(rows)
    assert len(rows) == 200
    assert job.due(NOW) is None  # nothing new since


def test_a_rewrite_that_fails_leaves_every_row_and_the_mark_where_they_were(
    store: Embedded, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(store, NOW - 10 * HOUR, 10, 300)
    before = sorted(store.query("SELECT * FROM events", {}))
    real = store._con.cursor

    class Failing:
        def __init__(self) -> None:
            self.inner = real()

        def execute(self, sql: str, params: object = None) -> object:
            if sql.startswith("INSERT INTO visits SELECT * FROM sorted_visits"):
                raise RuntimeError("the disk is full")
            return self.inner.execute(sql, params) if params is not None else self.inner.execute(sql)

        def close(self) -> None:
            self.inner.close()

    monkeypatch.setattr(store, "_con", type("Con", (), {"cursor": lambda self: Failing()})())
    with pytest.raises(RuntimeError, match="disk is full"):
        store.rewrite_in_order(NOW - 10 * HOUR, NOW - 2 * HOUR)
    monkeypatch.undo()
    assert sorted(store.query("SELECT * FROM events", {})) == before
    assert store.query("SELECT count(*) FROM visits", {})[0][0] == 3_000
    assert store.ordered_until() == 0


def test_a_failed_rewrite_is_logged_and_tried_again_a_minute_later_without_stopping_the_feed(
    store: Embedded, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _fill(store, NOW - 10 * HOUR, 10, 300)
    job = Ordering(store, chunk=1_000)
    calls = []

    def failing(low: int, high: int) -> int:
        calls.append((low, high))
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(store, "rewrite_in_order", failing)
    assert job.run(NOW) == 0
    assert job.run(NOW) == 0  # not again at once
    assert len(calls) == 1
    assert "could not be put in site order (the disk is full)" in caplog.text
    monkeypatch.undo()
    job._next = 0.0  # a minute later
    assert job.run(NOW) >= 1_000


def test_a_span_of_one_site_is_left_as_it_is_and_only_the_mark_moves(store: Embedded) -> None:
    _fill(store, NOW - 10 * HOUR, 10, 300)
    store.execute("DELETE FROM events WHERE site_id != 1")
    store.execute("DELETE FROM visits WHERE site_id != 1")
    blocks = store.query("PRAGMA database_size", {})[0][3]
    assert store.rewrite_in_order(NOW - 10 * HOUR, NOW - 2 * HOUR) == 0
    assert store.ordered_until() == NOW - 2 * HOUR
    assert store.query("PRAGMA database_size", {})[0][3] == blocks  # nothing written again
