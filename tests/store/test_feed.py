"""Feeding the store from the log: every event exactly once, visits kept up to date across
batches and out-of-order events, a batch cut short written again without doubling, erasures,
retention cuts and deleted sites applied, on DuckDB and on ClickHouse's SQL (chDB)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from sqlalchemy import func, insert, select

from sightline.database import Database
from sightline.database.schema import deleted_sites, events, store_tasks
from sightline.database.types import utcnow
from sightline.store import feed
from sightline.store.engines import ClickHouse, Embedded, Engine, visit_counts
from sightline.store.feed import Feeder, key_of, micros
from sightline.store.maintenance import Maintenance
from tests.reports import helpers

NOW = datetime.now(UTC).replace(microsecond=0)


def _seed(db: Database, visits: int = 150) -> tuple[int, list[helpers.Event]]:
    _, site = helpers.create_site(db, "feed.example.com")
    rows = helpers.generate(site, NOW, visits=visits, days=3, seed=7)
    rows.sort(key=lambda e: e.time)
    helpers.insert_events(db, rows)
    return site, rows


def _count(engine: Engine, table: str) -> int:
    return int(
        engine.query(f"SELECT count(*) FROM {engine.dialect.visits if table == 'visits' else table}", {})[0][
            0
        ]
    )


Facts = tuple[int, int, str | None, str | None]


def _visits(engine: Engine, site: int) -> dict[int, Facts]:
    """Each visit's pageviews, length (microseconds), entry and exit page, as the store holds it."""
    rows = engine.query(
        f"SELECT session, pageviews, last - start, entry, exit FROM {engine.dialect.visits} "
        f"WHERE site_id = {engine.dialect.param('s', 'Int64')}",
        {"s": site},
    )
    return {int(r[0]): (int(r[1]), int(r[2]), r[3], r[4]) for r in rows}


def _expected_visits(site: int, rows: list[helpers.Event]) -> dict[int, Facts]:
    out = {}
    for v in helpers.visits_of(rows):
        views = v.pageviews
        times = [e.time for e in v.events]
        out[key_of(site, v.session_id)] = (
            len(views),
            micros(max(times)) - micros(min(times)),
            views[0].path if views else None,
            views[-1].path if views else None,
        )
    return out


def numbered(db: Database, engine: Engine) -> dict[int, int]:
    """Checks the visit numbers against the log: each site's visits are numbered 1, 2, 3, ... in
    the order of their first event's id (the order the feed first met them), and every event
    carries its visit's number; returns how many visits each site has."""
    with db.read() as conn:
        logged = conn.execute(select(events.c.id, events.c.site_id, events.c.session_id)).all()
    first: dict[tuple[int, str], int] = {}
    for event_id, site, session in logged:
        first[(site, session)] = min(event_id, first.get((site, session), event_id))
    expected: dict[tuple[int, str], int] = {}
    counts = Counter[int]()
    for (site, session), _ in sorted(first.items(), key=lambda item: item[1]):
        counts[site] += 1
        expected[(site, session)] = counts[site]
    stored = engine.query(f"SELECT site_id, session, visit FROM {engine.dialect.visits}", {})
    assert sorted((int(site), int(key), int(n)) for site, key, n in stored) == sorted(
        (site, key_of(site, session), n) for (site, session), n in expected.items()
    )
    carried = dict(engine.query("SELECT id, visit FROM events", {}))
    assert {int(i): int(n) for i, n in carried.items()} == {
        event_id: expected[(site, session)] for event_id, site, session in logged
    }
    given = engine.query("SELECT site_id, max(visits) FROM visit_counts GROUP BY site_id", {})
    assert {int(site): int(n) for site, n in given} == dict(counts)
    return dict(counts)


def test_each_site_numbers_its_visits_densely_in_the_order_they_were_first_fed(
    db: Database, engine: Engine
) -> None:
    _, one = helpers.create_site(db, "one.example.com")
    _, two = helpers.create_site(db, "two.example.com")
    rows = helpers.generate(one, NOW, visits=40, days=2, seed=3) + helpers.generate(
        two, NOW, visits=25, days=2, seed=4
    )
    rows.sort(key=lambda e: e.time)  # the two sites' visits interleaved in the log
    helpers.insert_events(db, rows)
    Feeder(db, engine, batch=23, backlog=23).catch_up()  # many visits' events in two or more batches
    assert numbered(db, engine) == {one: 40, two: 25}
    more = [
        replace(e, session_id=f"later-{e.session_id}")
        for e in helpers.generate(two, NOW + timedelta(minutes=5), visits=5, days=1, seed=5)
    ]
    helpers.insert_events(db, more)
    Feeder(db, engine, batch=7, backlog=7).catch_up()  # a restarted feeder goes on from the stored counts
    assert numbered(db, engine) == {one: 40, two: 30}


def test_the_visit_numbers_survive_a_restart_of_the_embedded_store(db: Database, tmp_path: Path) -> None:
    _, site = helpers.create_site(db, "restart.example.com")
    rows = sorted(helpers.generate(site, NOW, visits=30, days=2, seed=8), key=lambda e: e.time)
    helpers.insert_events(db, rows[:40])
    store = Embedded(tmp_path / "restart", 256)
    Feeder(db, store, batch=15, backlog=15).catch_up()
    store.close()
    helpers.insert_events(db, rows[40:])
    store = Embedded(tmp_path / "restart", 256)  # the counts were written with their batches
    try:
        Feeder(db, store, batch=15, backlog=15).catch_up()
        assert numbered(db, store) == {site: 30}
    finally:
        store.close()


def test_every_event_of_the_log_reaches_the_store_once_however_often_it_is_fed(
    db: Database, engine: Engine
) -> None:
    _, rows = _seed(db)
    feeder = Feeder(db, engine, batch=97, backlog=150)
    assert feeder.catch_up() == len(rows)
    assert feeder.catch_up() == 0
    assert Feeder(db, engine, batch=1000).catch_up() == 0  # a new feeder continues after the watermark
    assert _count(engine, "events") == len(rows)
    ids = engine.query("SELECT count(DISTINCT id) FROM events", {})[0][0]
    assert ids == len(rows)
    assert engine.watermark() == max_id(db)


def test_a_backlog_is_fed_in_bigger_batches_until_the_log_is_read_to_its_end(
    db: Database, engine: Engine
) -> None:
    _, rows = _seed(db)
    feeder = Feeder(db, engine, batch=50, backlog=120)
    steps = []
    while fed := feeder.step():
        steps.append((fed, feeder.behind))
    feeder.close()
    whole, rest = divmod(len(rows) - 50, 120)
    assert steps == [(50, True)] + [(120, True)] * whole + ([(rest, False)] if rest else [])
    assert not feeder.behind
    assert _count(engine, "events") == len(rows)


def test_a_backlog_of_big_rows_is_fed_in_batches_bounded_by_their_bytes(
    db: Database, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, rows = _seed(db)
    monkeypatch.setattr(feed, "BACKLOG_BYTES", 1)  # every row is "too big" to grow the batch
    feeder = Feeder(db, engine, batch=50, backlog=120)
    steps = []
    while fed := feeder.step():
        steps.append(fed)
    feeder.close()
    assert steps == [50] * (len(rows) // 50) + ([len(rows) % 50] if len(rows) % 50 else [])


def test_each_event_keeps_its_time_to_the_microsecond(db: Database, engine: Engine) -> None:
    _, site = helpers.create_site(db, "times.example.com")
    whole = datetime(2026, 3, 29, 1, 30, tzinfo=UTC)  # no fraction, on a clock change in Europe
    moments = [whole, whole + timedelta(microseconds=1), NOW - timedelta(microseconds=999_999), NOW]
    helpers.insert_events(db, [helpers.pageview(site, at, f"v{n}", "/") for n, at in enumerate(moments)])
    Feeder(db, engine).catch_up()
    stored = engine.query("SELECT time FROM events ORDER BY id", {})
    assert [int(row[0]) for row in stored] == [micros(at) for at in moments]


def max_id(db: Database) -> int:
    with db.read() as conn:
        return int(conn.execute(select(func.max(events.c.id))).scalar_one())


def test_visits_are_kept_up_to_date_across_batches_with_events_out_of_order(
    db: Database, engine: Engine
) -> None:
    site, rows = _seed(db)
    late = [
        helpers.Event(
            site,
            v.start - timedelta(seconds=40),
            v.visitor_id,
            v.session_id,
            "pageview",
            "/late",
            None,
            None,
            None,
            None,
            "Chrome",
            "Linux",
            "desktop",
        )
        for v in helpers.visits_of(rows)[:20]
    ]
    Feeder(db, engine, batch=50, backlog=80).catch_up()
    helpers.insert_events(db, late)
    Feeder(db, engine, batch=50, backlog=80).catch_up()  # a fresh feeder: every visit is read back
    assert _visits(engine, site) == _expected_visits(site, rows + late)
    assert _count(engine, "visits") == len(helpers.visits_of(rows))
    numbered(db, engine)


class CutShortError(Exception):
    pass


@pytest.mark.parametrize("reached", ["events", "visits", "visit_counts"])
def test_a_batch_cut_short_is_written_again_without_doubling_anything(
    db: Database, engine: Engine, reached: str
) -> None:
    if reached != "events" and not isinstance(engine, ClickHouse):
        pytest.skip("a DuckDB batch is one transaction: nothing of it arrives before the cut")
    site, rows = _seed(db)
    original = engine.write
    calls = Counter[str]()

    def failing(after: int, last: int, event_rows: pa.Table, visit_rows: pa.Table, changed: Any) -> None:
        calls["write"] += 1
        if calls["write"] == 3:
            if isinstance(engine, ClickHouse):  # some tables arrive, then the process "dies"
                engine._mark(after, after, last)
                written = {
                    "events": event_rows,
                    "visits": visit_rows,
                    "visit_counts": visit_counts(visit_rows),
                }
                for table in list(written)[: list(written).index(reached) + 1]:
                    token = f"sightline-{after}-{last}-{table.replace('_', '-')}"
                    engine._client.insert_arrow(
                        table, written[table], settings={"insert_deduplication_token": token}
                    )
            raise CutShortError
        original(after, last, event_rows, visit_rows, changed)

    engine.write = failing  # type: ignore[method-assign,assignment]
    feeder = Feeder(db, engine, batch=60, backlog=90)
    with pytest.raises(CutShortError):
        feeder.catch_up()
    engine.write = original  # type: ignore[method-assign]
    # The same feeder goes on: the batch it read ahead of the failed one is dropped, not written.
    feeder.catch_up()
    feeder.close()
    assert _count(engine, "events") == len(rows)
    assert engine.query("SELECT count(DISTINCT id) FROM events", {})[0][0] == len(rows)
    assert _visits(engine, site) == _expected_visits(site, rows)
    numbered(db, engine)


def _task(db: Database, site: int, kind: str, **values: Any) -> None:
    with db.begin() as conn:
        conn.execute(insert(store_tasks).values(site_id=site, kind=kind, created_at=utcnow(), **values))


def test_an_erasure_removes_the_visitor_from_the_store_and_forgets_the_code(
    db: Database, engine: Engine
) -> None:
    site, rows = _seed(db)
    feeder = Feeder(db, engine)
    feeder.catch_up()
    gone = rows[0].visitor_id
    _task(db, site, "erase_visitor", visitor_id=gone)
    assert Maintenance(db, engine, feeder, None).apply_tasks() == 1
    key = key_of(site, gone)
    for table in ("events", "visits"):
        left = engine.query(
            f"SELECT count(*) FROM {table} WHERE visitor = {engine.dialect.param('v', 'UInt64')}", {"v": key}
        )
        assert left[0][0] == 0
    assert _count(engine, "events") == len([e for e in rows if e.visitor_id != gone])
    with db.read() as conn:
        task = conn.execute(select(store_tasks)).one()
    assert task.done_at is not None
    assert task.visitor_id is None


def test_a_retention_cut_and_a_deleted_site_leave_the_store(db: Database, engine: Engine) -> None:
    site, rows = _seed(db)
    feeder = Feeder(db, engine)
    feeder.catch_up()
    cut = NOW - timedelta(days=1)
    _task(db, site, "prune_before", before=cut)
    maintenance = Maintenance(db, engine, feeder, None)
    maintenance.apply_tasks()
    assert _count(engine, "events") == len([e for e in rows if e.time >= cut])
    with db.begin() as conn:
        conn.execute(insert(deleted_sites).values(id=site, deleted_at=utcnow()))
    assert maintenance.purge_deleted_sites() == 1
    assert _count(engine, "events") == 0
    assert _count(engine, "visits") == 0


def test_the_log_keeps_events_for_the_retention_after_they_reached_the_store(
    db: Database, engine: Engine
) -> None:
    _, rows = _seed(db)
    feeder = Feeder(db, engine, batch=100)
    feeder.step()  # only the first 100 events reached the store
    trimmed = Maintenance(db, engine, feeder, 1).trim()
    old = [e for e in sorted(rows, key=lambda e: e.time)[:100] if e.time < utcnow() - timedelta(days=1)]
    assert trimmed == len(old)
    with db.read() as conn:
        assert conn.execute(select(func.count()).select_from(events)).scalar_one() == len(rows) - len(old)
    feeder.catch_up()
    assert _count(engine, "events") == len(rows)  # the store keeps what the log let go


def test_countries_are_a_breakdown_with_unknown_places_shown_as_none(db: Database, engine: Engine) -> None:
    from sightline.reports import queries, tables

    site, rows = _seed(db, visits=60)
    places = ["DE", "US", None]
    with db.begin() as conn:
        for n, visit in enumerate(helpers.visits_of(rows)):
            conn.execute(
                events.update()
                .where(events.c.session_id == visit.session_id)
                .values(country=places[n % 3], region="Bavaria" if n % 3 == 0 else None)
            )
    Feeder(db, engine).catch_up()
    span = (NOW - timedelta(days=4), NOW + timedelta(hours=1))
    found, _ = tables.breakdown(
        engine.query, engine.dialect, site, span, queries.Filters(), "country", "visits", queries.Page(10)
    )
    visits = helpers.visits_of(rows)
    expected = Counter(places[n % 3] or "(none)" for n, _ in enumerate(visits))
    assert {r["value"]: r["visits"] for r in found} == dict(expected)
    regions, _ = tables.breakdown(
        engine.query, engine.dialect, site, span, queries.Filters(), "region", "visits", queries.Page(10)
    )
    assert [(r["value"], r["visits"]) for r in regions] == [("Bavaria", expected["DE"])]


def test_a_store_made_before_a_visit_attribute_gains_its_column_in_place(
    db: Database, tmp_path: Path
) -> None:
    """A store whose tables lack an attribute's column (one made before it was registered) is not
    rebuilt: opening it adds the column, empty for the events and visits it holds, and the feed
    fills it from then on."""
    _, rows = _seed(db, visits=30)
    store = Embedded(tmp_path, 256)
    Feeder(db, store).catch_up()
    before = _count(store, "events"), _count(store, "visits")
    store.close()
    with duckdb.connect(str(store.path)) as con:  # the layout of a store made before the column
        con.execute("ALTER TABLE events DROP COLUMN language")
        con.execute("ALTER TABLE visits DROP COLUMN language")
    later = [
        replace(e, time=NOW + timedelta(minutes=5), session_id=f"later-{n}", language="de")
        for n, e in enumerate(rows[:4])
    ]
    helpers.insert_events(db, later)
    reopened = Embedded(tmp_path, 256)
    try:
        Feeder(db, reopened).catch_up()
        assert (_count(reopened, "events"), _count(reopened, "visits")) == (before[0] + 4, before[1] + 4)
        languages = dict(reopened.query("SELECT language, count(*) FROM events GROUP BY language", {}))
        assert languages == {"": len(rows), "de": 4}
        visits = dict(
            reopened.query(f"SELECT language, count(*) FROM {reopened.dialect.visits} GROUP BY language", {})
        )
        assert visits == {"": before[1], "de": 4}
    finally:
        reopened.close()
