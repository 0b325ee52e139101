"""The store's self-check: a store that lost events, holds some twice, or never got some the log
holds at ids below its watermark is put right from the log, visits as a first feed makes them,
on DuckDB and on ClickHouse's SQL (chDB), from SQLite and PostgreSQL logs; events only the store
has (a trimmed log) are kept and counted; the log's next id is kept past the watermark."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from sqlalchemy import delete, insert, select, text

from sightline.database import Database
from sightline.database.schema import events
from sightline.store import check as check_module
from sightline.store.check import DAY, Figures, SelfCheck
from sightline.store.dialects import Params
from sightline.store.engines import Engine
from sightline.store.feed import Feeder
from tests.reports import helpers
from tests.store.test_feed import _count, _expected_visits, _seed, _visits


def _fed(db: Database, engine: Engine) -> tuple[int, list[helpers.Event], Feeder]:
    site, rows = _seed(db)
    feeder = Feeder(db, engine)
    feeder.catch_up()
    return site, rows, feeder


def _delete_ids(engine: Engine, ids: list[int]) -> None:
    p = Params(engine.dialect)
    engine.execute(f"DELETE FROM events WHERE {p.dialect.contains(p.bind(ids), 'id')}", p.values)


def _ids(db: Database) -> list[int]:
    with db.read() as conn:
        return [int(i) for i in conn.execute(select(events.c.id).order_by(events.c.id)).scalars()]


def test_the_self_check_feeds_again_what_the_store_lost_or_doubled_and_names_the_days(
    db: Database, engine: Engine
) -> None:
    site, rows, feeder = _fed(db, engine)
    ids = _ids(db)
    _delete_ids(engine, ids[10:40])  # events lost, their visits' rows left as they were
    doubled = ids[100:103]
    p = Params(engine.dialect)
    engine.execute(
        f"INSERT INTO events SELECT * FROM events WHERE {p.dialect.contains(p.bind(doubled), 'id')}",
        p.values,
    )
    assert _count(engine, "events") == len(rows) - 30 + 3
    check = SelfCheck(db, engine, feeder, None)
    check.check_all()
    stored = engine.query("SELECT count(*), count(DISTINCT id) FROM events", {})[0]
    assert tuple(stored) == (len(rows), len(rows))
    assert _visits(engine, site) == _expected_visits(site, rows)
    found = check.found.as_dict()
    assert found["ranges_repaired"] >= 1
    # The 30 lost events are counted; the 3 doubled ones too, unless a repair of another day already
    # replaced their visits (which day an event falls on moves with the time the test runs).
    assert 30 <= found["events_fed"] <= 33
    assert found["unrepaired"] == []
    assert all(f"site {site}, " in line for line in found["repaired"])
    assert found["last_check"] is not None
    again = SelfCheck(db, engine, feeder, None)
    again.check_all()
    assert again.found.ranges_repaired == 0


def test_events_the_log_gave_at_or_below_the_watermark_are_fed_and_its_next_id_moves_past_it(
    db: Database, engine: Engine
) -> None:
    """The broken state of an install whose log handed out ids again: the store's watermark is
    above events it never fed."""
    site, rows, feeder = _fed(db, engine)
    watermark = engine.watermark()
    newest = [e for e in rows if e.visitor_id == rows[-1].visitor_id]
    with db.begin() as conn:  # the newest visitor erased from the log (the store keeps them here)
        conn.execute(delete(events).where(events.c.visitor_id == newest[0].visitor_id))
    now = datetime.now(UTC).replace(microsecond=0)
    late = [
        helpers.pageview(site, now - timedelta(seconds=i), "visitor-late", f"/late/{i}") for i in range(4)
    ]
    gone = {e.visitor_id for e in newest}
    free = sorted(set(range(1, watermark + 1)) - set(_ids(db)))[:4]  # ids the store has seen
    with db.begin() as conn:
        conn.execute(insert(events), [{**e.row(), "id": i} for e, i in zip(late, free, strict=True)])
    assert feeder.step() == 0  # the feed reads after its watermark: these are skipped
    check = SelfCheck(db, engine, feeder, None)
    check.check_all()
    held = engine.query(
        f"SELECT count(*) FROM events WHERE site_id = {engine.dialect.param('s', 'Int64')}", {"s": site}
    )[0][0]
    kept = [e for e in rows if e.visitor_id not in gone]
    assert held == len(kept) + len(newest) + len(late)  # the erased visitor stays: no task asked
    assert (
        _visits(engine, site)[next(iter(_expected_visits(site, late)))]
        == _expected_visits(site, late)[next(iter(_expected_visits(site, late)))]
    )
    with db.begin() as conn:
        conn.execute(insert(events), [{**helpers.pageview(site, now, "visitor-next", "/next").row()}])
    assert max(_ids(db)) > watermark
    assert feeder.step() == 1


def test_events_only_the_store_holds_are_kept_and_counted(db: Database, engine: Engine) -> None:
    site, rows, feeder = _fed(db, engine)
    with db.begin() as conn:  # as the log's trim does, without a retention the check knows of
        conn.execute(delete(events).where(events.c.id <= 50))
    check = SelfCheck(db, engine, feeder, None)
    check.check_all()
    assert _count(engine, "events") == len(rows)
    assert check.found.store_only == 50
    assert check.found.ranges_repaired == 0
    assert _visits(engine, site) == _expected_visits(site, rows)


def test_with_a_retention_the_check_covers_the_days_the_trim_has_not_touched(
    db: Database, engine: Engine
) -> None:
    _, _, feeder = _fed(db, engine)
    check = SelfCheck(db, engine, feeder, 2)
    check.check_all()
    found = check.found.as_dict()
    first = (datetime.now(UTC) - timedelta(days=2)).date() + timedelta(days=1)
    assert found["covers_from"] == first.isoformat()
    assert found["note"] is not None
    assert first.isoformat() in found["note"]


def test_a_log_put_back_behind_the_store_gives_its_next_id_past_the_watermark(
    db: Database, engine: Engine
) -> None:
    """A log restored from an older backup beside a newer store, or an install whose SQLite log
    gave ids again: the store process moves the log's sequence past its watermark at start."""
    site, _, feeder = _fed(db, engine)
    watermark = engine.watermark()
    with db.begin() as conn:
        conn.execute(delete(events).where(events.c.id > 5))
        if db.dialect == "sqlite":
            conn.execute(text("UPDATE sqlite_sequence SET seq = 5 WHERE name = 'events'"))
        else:
            conn.execute(text("SELECT setval(pg_get_serial_sequence('events', 'id'), 5)"))
    check = SelfCheck(db, engine, feeder, None)
    check.keep_positions()
    assert check.found.sequence_moved is not None
    assert f"watermark {watermark}" in check.found.sequence_moved
    helpers.insert_events(db, [helpers.pageview(site, datetime.now(UTC), "after", "/after")])
    assert _ids(db)[-1] == watermark + 1
    assert feeder.step() == 1
    check.keep_positions()  # past already: nothing moves
    assert _ids(db)[-1] == watermark + 1


def test_a_day_whose_repair_failed_is_not_read_again_until_its_figures_change(
    db: Database, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repair holds the feed while it runs (a busy day's takes seconds): one that cannot succeed
    is listed by every pass, not tried again by each, until the log or the store changes."""
    site, _, feeder = _fed(db, engine)
    held = engine.query(f"SELECT id, visit, time FROM events WHERE site_id = {int(site)}", {})
    by_visit: dict[tuple[int, int], list[int]] = {}
    for event_id, visit, at in held:
        by_visit.setdefault((int(visit), int(at) // DAY), []).append(int(event_id))
    trimmed, doubled = next(sorted(ids)[:2] for ids in by_visit.values() if len(ids) >= 2)
    with db.begin() as conn:  # the log no longer has one of the visit's events ...
        conn.execute(delete(events).where(events.c.id == trimmed))
    p = Params(engine.dialect)  # ... and the store holds another one twice: not repairable
    engine.execute(f"INSERT INTO events SELECT * FROM events WHERE id = {p.bind(doubled)}", p.values)
    check = SelfCheck(db, engine, feeder, None)
    tried: list[int] = []
    refeed = check._refeed

    def counted(site_id: int, day: int) -> tuple[int, int]:
        tried.append(day)
        return refeed(site_id, day)

    monkeypatch.setattr(check, "_refeed", counted)
    check.check_all()
    assert len(check.found.unrepaired) == 1
    assert "in the store twice" in check.found.unrepaired[0]
    first = len(tried)
    check.check_all()
    assert len(tried) == first  # nothing read again
    assert len(check.found.unrepaired) == 1  # still said
    _delete_ids(engine, [doubled])  # the store changed: the day is read again
    check.check_all()
    assert len(tried) > first
    assert check.found.unrepaired == []


def test_days_with_events_only_the_store_holds_are_counted_again_without_reading_them(
    db: Database, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, feeder = _fed(db, engine)
    with db.begin() as conn:  # as the log's trim does, without a retention the check knows of
        conn.execute(delete(events).where(events.c.id <= 50))
    check = SelfCheck(db, engine, feeder, None)
    check.check_all()
    assert check.found.store_only == 50
    monkeypatch.setattr(check, "_refeed", lambda *_: pytest.fail("a day read again unchanged"))
    check.check_all()
    assert check.found.store_only == 50
    assert check.found.passes == 2


def test_the_self_check_rests_nineteen_times_as_long_as_each_round_took(
    db: Database, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside the feed and the reports' queries the check takes at most a twentieth of the
    process's time, however long one step of a busy day takes."""
    _, _, feeder = _fed(db, engine)
    clock = [1000.0]
    now = lambda: clock[0]  # noqa: E731
    monkeypatch.setattr(
        check_module, "time", SimpleNamespace(monotonic=now, perf_counter=now, time=time.time)
    )
    check = SelfCheck(db, engine, feeder, None)
    compare = check._compare

    def slow(site: int, low: int, high: int) -> list[tuple[int, Figures]]:
        clock[0] += 0.2  # every step of a round takes 200 ms
        return compare(site, low, high)

    monkeypatch.setattr(check, "_compare", slow)
    check.run()
    assert check.found.rounds == 1
    assert check.found.last_round_ms == pytest.approx(200, abs=1)
    checked = check.found.days_checked
    clock[0] += 0.2 * 19 - 0.01  # not yet: 3.8 s of rest
    check.run()
    assert (check.found.rounds, check.found.days_checked) == (1, checked)
    clock[0] += 0.02
    check.run()
    assert check.found.rounds == 2
    assert check.found.days_checked > checked


def test_a_pass_looks_for_a_sites_days_before_the_logs_first_only_after_checking_its_other_days(
    db: Database, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Looking for them scans the site's events in the store (8 ms a site at 100 M events): done
    for every site at a pass's start, it held the store process 1.7 s with 200 sites, right when
    a server's first requests arrive."""
    _, _, feeder = _fed(db, engine)
    check = SelfCheck(db, engine, feeder, None)
    looked: list[int] = []
    first_day = check._store_first_day

    def counted(site: int, otherwise: int) -> int:
        looked.append(site)
        return first_day(site, otherwise)

    monkeypatch.setattr(check, "_store_first_day", counted)
    clock = [1000.0]
    now = lambda: clock[0]  # noqa: E731
    monkeypatch.setattr(
        check_module, "time", SimpleNamespace(monotonic=now, perf_counter=now, time=time.time)
    )
    compare = check._compare

    def slow(site: int, low: int, high: int) -> list[tuple[int, Figures]]:
        clock[0] += 0.2  # a round is one step: one day at first
        return compare(site, low, high)

    monkeypatch.setattr(check, "_compare", slow)
    check.run()
    assert check.found.days_checked == 1
    assert looked == []
    check.check_all()
    assert len(looked) == 1  # once the site's days were checked
