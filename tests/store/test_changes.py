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
from sightline.store.feed import Feeder, micros
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
