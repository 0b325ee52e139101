"""The store's record of what each write changed (``store.changes``): the feed records the hours of
its events and of its visits' starts, old and new; an erasure the visitor's; a retention cut
everything before it; a deleted site and a rebuild everything; the log's trim nothing. A figure
kept between requests (``reports.kept_figures``) is dropped by these records alone, whatever the age of
a late event or the length of a visit."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import insert

from sightline.database import Database
from sightline.database.schema import deleted_sites, store_tasks
from sightline.database.types import utcnow
from sightline.reports import timeseries
from sightline.reports.filters import Filters
from sightline.reports.kept_figures import Kept
from sightline.store import changes as changes_module
from sightline.store.changes import EVERYTHING, HOUR, Changes
from sightline.store.dialects import DUCKDB
from sightline.store.engines import Embedded
from sightline.store.feed import Feeder, key_of, micros
from sightline.store.maintenance import Maintenance
from tests.reports import helpers

NOW = datetime.now(UTC).replace(minute=30, second=0, microsecond=0) - timedelta(hours=1)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Embedded]:
    opened = Embedded(tmp_path / "data", 256)
    yield opened
    opened.close()


def _hours(engine: Embedded, site: int, after: int) -> set[int]:
    found = engine.changes.since(site, after)
    assert not found["everything"]
    return {low // HOUR for _, low, _ in found["spans"]}


def _event(site: int, at: datetime, visitor: str, session: str, path: str = "/") -> helpers.Event:
    return helpers.Event(
        site, at, visitor, session, "pageview", path, None, None, None, None, "Chrome", "Linux", "desktop"
    )


def test_a_fed_batch_records_its_events_hours_and_the_start_a_late_event_moved(
    db: Database, engine: Embedded
) -> None:
    _, site = helpers.create_site(db, "changes.example.com")
    start = NOW - timedelta(hours=5)
    helpers.insert_events(
        db, [_event(site, start, "a", "s1"), _event(site, start + timedelta(hours=2), "a", "s1")]
    )
    feeder = Feeder(db, engine)
    feeder.catch_up()
    first = engine.changes.number
    assert _hours(engine, site, 0) == {micros(start) // HOUR, micros(start) // HOUR + 2}
    # A late event of the same visit, 3 hours before its start: the visit's start moves from the
    # hour of ``start`` to the late event's, and both hours are recorded (and only those).
    helpers.insert_events(db, [_event(site, start - timedelta(hours=3), "a", "s1")])
    feeder.catch_up()
    assert _hours(engine, site, first) == {micros(start) // HOUR - 3, micros(start) // HOUR}
    assert engine.changes.since(site, first)["removed"] == 0  # the feed only adds
    assert _hours(engine, site + 1, 0) == set()  # another site: nothing
    feeder.close()


def test_an_erasure_records_the_visitors_hours_and_a_cut_and_a_deleted_site_everything(
    db: Database, engine: Embedded
) -> None:
    _, site = helpers.create_site(db, "changes.example.com")
    start = NOW - timedelta(days=3)
    helpers.insert_events(db, [_event(site, start, "a", "s1"), _event(site, NOW, "b", "s2")])
    feeder = Feeder(db, engine)
    feeder.catch_up()
    maintenance = Maintenance(db, engine, feeder, None)
    mark = engine.changes.number
    with db.begin() as conn:
        conn.execute(
            insert(store_tasks).values(
                site_id=site, kind="erase_visitor", visitor_id="a", created_at=utcnow()
            )
        )
    maintenance.apply_tasks()
    assert _hours(engine, site, mark) == {micros(start) // HOUR}
    assert engine.changes.since(site, mark)["removed"] > mark
    mark = engine.changes.number
    with db.begin() as conn:
        conn.execute(
            insert(store_tasks).values(site_id=site, kind="prune_before", before=NOW, created_at=utcnow())
        )
    maintenance.apply_tasks()
    spans = engine.changes.since(site, mark)["spans"]
    assert {(low, high) for _, low, high in spans} == {(EVERYTHING[0], micros(NOW))}
    mark = engine.changes.number
    with db.begin() as conn:
        conn.execute(insert(deleted_sites).values(id=site, deleted_at=utcnow()))
    maintenance.purge_deleted_sites()
    assert {(low, high) for _, low, high in engine.changes.since(site, mark)["spans"]} == {EVERYTHING}
    mark = engine.changes.number
    maintenance.days = 0  # the log's trim deletes from the log only
    maintenance.trim()
    assert engine.changes.number == mark
    engine.reset()
    assert engine.changes.since(site, mark)["everything"]
    feeder.close()


def test_records_past_what_is_remembered_answer_everything() -> None:
    changes = Changes()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(changes_module, "MOST_HOURS", 3)
        for hour in range(5):
            changes.record({1: [(hour * HOUR, hour * HOUR + 1)]}, removed=False)
    assert changes.since(1, 0)["everything"]  # hours 0 and 1 were forgotten
    assert not changes.since(1, 2)["everything"]
    assert {low // HOUR for _, low, _ in changes.since(1, 2)["spans"]} == {2, 3, 4}
    assert Changes().epoch != changes.epoch


def test_a_kept_span_is_dropped_by_an_event_older_than_ingest_accepts_and_a_visit_past_the_look_back(
    db: Database, engine: Embedded
) -> None:
    """The limits a kept figure once rested on (ingest accepts events up to a day old; a visit is
    continued when it began within the feed's 2-day look-back) broken on purpose: an event of
    five days ago written straight into the log, and an event of a visit begun three days before
    it. The kept days they fall in are read again, and the series equals the one read cold."""
    _, site = helpers.create_site(db, "changes.example.com")
    day = NOW.replace(hour=0, minute=0) - timedelta(days=7)
    spans = [(day + timedelta(days=i), day + timedelta(days=i + 1)) for i in range(7)]
    rows = [_event(site, a + timedelta(hours=1), f"v{i}", f"s{i}") for i, (a, _) in enumerate(spans)]
    helpers.insert_events(db, rows)
    feeder = Feeder(db, engine)
    feeder.catch_up()
    d = replace(DUCKDB, exact_below=1)  # every span takes the kept path
    kept = Kept(engine.changes.since)

    def series(layer: Kept | None) -> list[dict[str, int]]:
        return timeseries.series(engine.query, d, site, spans, Filters(), layer)

    assert series(kept) == series(None)
    assert len(kept) == len(spans)
    old = _event(site, spans[2][0] + timedelta(hours=5), "late", "late")  # five days old
    longer = _event(site, spans[0][0] + timedelta(days=3, hours=2), "v0", "s0")  # s0 began 3 days before
    helpers.insert_events(db, [old, longer])
    feeder.catch_up()
    cold = series(None)
    assert series(kept) == cold
    assert cold[2]["pageviews"] == 2
    assert cold[3]["pageviews"] == 2
    feeder.close()


def test_a_fed_batch_records_the_keys_of_every_visit_it_touched_and_other_writes_record_none(
    db: Database, engine: Embedded
) -> None:
    _, site = helpers.create_site(db, "changes.example.com")
    start = NOW - timedelta(hours=5)
    helpers.insert_events(db, [_event(site, start, "a", "s1"), _event(site, start, "b", "s2")])
    feeder = Feeder(db, engine)
    feeder.catch_up()
    first = engine.changes.number
    # A late event of s1 (its start moves back an hour) and a new visit s3; s2 is not touched.
    helpers.insert_events(
        db, [_event(site, start - timedelta(hours=1), "a", "s1"), _event(site, NOW, "c", "s3")]
    )
    feeder.catch_up()
    touched = engine.changes.touched(site, first)
    assert touched is not None
    keys, earliest = touched
    assert set(keys.tolist()) == {key_of(site, "s1"), key_of(site, "s3")}
    assert earliest == micros(start - timedelta(hours=1))
    assert set(engine.changes.touched(site, 0)[0].tolist()) == {key_of(site, s) for s in ("s1", "s2", "s3")}  # type: ignore[index]
    assert len(engine.changes.touched(site, engine.changes.number)[0]) == 0  # type: ignore[index]
    # An erasure records spans alone: a selection of an earlier change is selected by spans again.
    with db.begin() as conn:
        conn.execute(
            insert(store_tasks).values(
                site_id=site, kind="erase_visitor", visitor_id="b", created_at=utcnow()
            )
        )
    Maintenance(db, engine, feeder, None).apply_tasks()
    assert engine.changes.touched(site, first) is None
    mark = engine.changes.number
    helpers.insert_events(db, [_event(site, NOW, "c", "s3")])
    feeder.catch_up()
    assert set(engine.changes.touched(site, mark)[0].tolist()) == {key_of(site, "s3")}  # type: ignore[index]
    engine.refill(site, [], *feeder.build(feeder.parsed(feeder.log.read(0, None, 1)), continuing=False))
    assert engine.changes.touched(site, mark) is None  # the self-check's refill: spans alone
    feeder.close()


def test_keys_past_what_is_remembered_are_answered_by_spans_alone() -> None:
    changes = Changes()

    def keys(*values: int) -> dict[int, tuple[Any, int]]:
        return {1: (np.array(values, np.uint64), 0)}

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(changes_module, "MOST_KEYS", 4)
        patch.setattr(changes_module, "STEP_KEYS", 3)
        one = changes.record({1: [(0, 1)]}, removed=False, touched=keys(1))
        two = changes.record({1: [(0, 1)]}, removed=False, touched=keys(2, 3))
        assert changes.touched(1, 0)[0].tolist() == [1, 2, 3]  # type: ignore[index]
        changes.record({1: [(0, 1)]}, removed=False, touched=keys(4, 5))  # 5 keys: the first record's go
        assert changes.keys == 4
        assert changes.touched(1, 0) is None  # forgotten
        assert changes.touched(1, one) is None  # 4 keys: more than a refresh selects by keys
        assert changes.touched(1, two)[0].tolist() == [4, 5]  # type: ignore[index]
        big = changes.record({1: [(0, 1)]}, removed=False, touched=keys(6, 7, 8, 9))  # over STEP_KEYS
        assert changes.touched(1, two) is None
        assert len(changes.touched(1, big)[0]) == 0  # type: ignore[index]
        assert changes.touched(2, 0) is not None  # a site without changes: nothing to select again
        changes.record(None)
        assert changes.keys == 0
        assert changes.touched(1, big) is None


PRICING = (  # a kept selection as the reports ask it: the visits with a /pricing pageview
    "SELECT * FROM visits WHERE site_id = $site AND start >= $low AND start < $high "
    "AND start >= $kept_low AND start < $kept_high AND visit IN (SELECT visit FROM events "
    "WHERE site_id = $site AND time >= $low AND time >= $kept_low "
    "AND name = 'pageview' AND path = '/pricing')"
)


def test_a_kept_selection_brought_up_to_date_by_a_feeds_keys_equals_the_selection_read_cold(
    db: Database, engine: Embedded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the selection was kept, a batch: a visit comes to match (a /pricing pageview), a
    matching visit gets another pageview (its row changes), a new matching visit, a matching
    visit's start moves before the span (a late event), and another site's visit. The table is
    brought up to date in place by the batch's keys alone (selecting by spans fails here), and
    holds exactly the rows of a cold read."""
    _, site = helpers.create_site(db, "changes.example.com")
    _, other = helpers.create_site(db, "other.example.com")
    low, high = NOW - timedelta(hours=6), NOW + timedelta(hours=2)
    at = low + timedelta(hours=1)
    helpers.insert_events(
        db,
        [
            _event(site, at, "a", "joins", "/"),
            _event(site, at, "b", "grows", "/pricing"),
            _event(site, at, "c", "moves", "/pricing"),
            _event(site, at, "d", "stays", "/pricing"),
            _event(site, at + timedelta(hours=2), "e", "plain", "/"),
        ],
    )
    feeder = Feeder(db, engine)
    feeder.catch_up()
    params = {"site": site, "low": micros(low), "high": micros(high)}
    span = (micros(low), micros(high))
    kept = engine.keep(PRICING, params, site, span)

    def rows(name: str) -> list[tuple[Any, ...]]:
        return sorted(engine.query(f"SELECT * FROM {name}", {}))

    assert len(rows(kept)) == 3  # type: ignore[arg-type]
    helpers.insert_events(
        db,
        [
            _event(site, at + timedelta(minutes=5), "a", "joins", "/pricing"),
            _event(site, at + timedelta(minutes=5), "b", "grows", "/pricing"),
            _event(site, NOW, "f", "new", "/pricing"),
            _event(site, low - timedelta(minutes=5), "c", "moves", "/"),
            _event(other, at, "g", "elsewhere", "/pricing"),
        ],
    )
    feeder.catch_up()

    def spans_refused(*_: Any) -> bool:
        raise AssertionError("selected again by spans")

    monkeypatch.setattr(engine.kept, "_refresh", spans_refused)
    assert engine.keep(PRICING, params, site, span) == kept  # the same table, brought up to date
    assert engine.kept.by_keys == 1
    cursor = engine._con.cursor()
    cold = sorted(cursor.execute(PRICING, {**params, "kept_low": span[0], "kept_high": span[1]}).fetchall())
    cursor.close()
    assert rows(kept) == cold  # type: ignore[arg-type]
    assert {row[0] for row in cold} == {site}
    assert len(cold) == 4  # joins, grows, stays, new; moves began before the span
    feeder.close()
