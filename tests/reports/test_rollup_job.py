"""The rollup job: any batch size gives the same rollups, it is idempotent, survives a failure
halfway through a batch, and catches up after the server restarts."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Connection, select

from sightline.reports import localdays, writes
from sightline.reports.params import parse
from sightline.reports.rollup import RollupJob
from sightline.reports.service import Report
from sightline.reports.sketch import Sketch
from sightline.storage import Database, open_database
from sightline.storage.schema import (
    events,
    report_daily,
    report_hourly,
    report_state,
    report_visits,
    sites,
)
from tests.conftest import StartServer
from tests.reports import helpers

NOW = datetime.now(UTC)


_site = helpers.create_site


def _state(conn: Connection) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for table in (report_hourly, report_daily):
        rows = conn.execute(select(table).order_by(*table.primary_key.columns)).all()
        # visitors sketches are compared by the count they give, counters exactly
        out[table.name] = [
            (r.site_id, r.dim, r.bucket, r.value, r.pageviews, r.events, r.visits, r.bounces, r.duration)
            for r in rows
            if (r.pageviews, r.events, r.visits) != (0, 0, 0)
        ]
        out[table.name + "_visitors"] = {
            (r.site_id, r.dim, r.bucket, r.value): Sketch.load(r.visitors).count() for r in rows if r.visitors
        }
    out["visits"] = conn.execute(select(report_visits).order_by(report_visits.c.session_id)).all()
    return out


def _seed(db: Database, site: int, visits: int = 150, seed: int = 7) -> list[helpers.Event]:
    rows = helpers.generate(site, NOW - timedelta(minutes=5), visits=visits, days=6, seed=seed)
    # Interleave visits the way real traffic arrives: by time, not by visit.
    rows.sort(key=lambda e: e.time)
    helpers.insert_events(db, rows)
    return rows


def test_folding_in_small_batches_gives_the_same_rollups_as_one_big_batch(db: Database) -> None:
    _, site = _site(db)
    _seed(db, site)
    assert RollupJob(db, batch=7).catch_up() > 0
    with db.read() as conn:
        by_seven = _state(conn)
    # Start over and fold everything at once.
    with db.begin() as conn:
        for table in (report_hourly, report_daily, report_visits, report_state):
            conn.execute(table.delete())
    assert RollupJob(db, batch=100_000).fold() > 0
    with db.read() as conn:
        at_once = _state(conn)
    assert by_seven == at_once
    assert by_seven["visits"]


def test_the_job_is_idempotent_and_a_failed_batch_changes_nothing(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner, site = _site(db)
    rows = _seed(db, site)
    job = RollupJob(db, batch=50)
    assert job.fold() == 50
    with db.read() as conn:
        before = _state(conn)

    def broken(*_: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(writes, "apply", broken)
    with pytest.raises(RuntimeError, match="disk on fire"):
        job.fold()
    with db.read() as conn:
        assert _state(conn) == before
    monkeypatch.undo()
    job.catch_up()
    assert job.fold() == 0
    with db.read() as conn:
        after = _state(conn)
        mark = conn.execute(select(report_state.c.last_event_id)).scalar_one()
        assert mark == conn.execute(select(events.c.id).order_by(events.c.id.desc()).limit(1)).scalar_one()
    assert RollupJob(db).catch_up() == 0
    with db.read() as conn:
        assert _state(conn) == after
        query = parse([("range", "7d")], ["range"])
        summary = Report.open(conn, owner, site, query).summary()
        span = (
            datetime.fromisoformat(summary["range"]["start"]),
            datetime.fromisoformat(summary["range"]["end"]),
        )
    assert summary["current"] == helpers.expected_summary(rows, span)


def _watermark(db: Database) -> int:
    with db.read() as conn:
        return int(conn.execute(select(report_state.c.last_event_id)).scalar() or 0)


def _newest(db: Database) -> int:
    with db.read() as conn:
        return int(conn.execute(select(events.c.id).order_by(events.c.id.desc()).limit(1)).scalar_one())


def _wait_for(db: Database, mark: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while _watermark(db) < mark:
        assert time.monotonic() < deadline, "the server's rollup job did not catch up"
        time.sleep(0.2)


def test_the_servers_job_catches_up_after_a_killed_process_restarts(
    start_server: StartServer, database_url: str
) -> None:
    db = open_database(database_url)
    owner, site = _site(db)
    first = start_server(database_url, env={"SIGHTLINE_REPORT_ROLLUP_SECONDS": "1"})
    rows = _seed(db, site, visits=100, seed=1)
    _wait_for(db, _newest(db))
    first.kill()
    rows += _seed(db, site, visits=120, seed=2)
    assert _watermark(db) < _newest(db)
    start_server(database_url, env={"SIGHTLINE_REPORT_ROLLUP_SECONDS": "1"})
    _wait_for(db, _newest(db))
    with db.read() as conn:
        query = parse([("range", "7d")], ["range"])
        summary = Report.open(conn, owner, site, query).summary()
    span = (
        datetime.fromisoformat(summary["range"]["start"]),
        datetime.fromisoformat(summary["range"]["end"]),
    )
    assert summary["current"] == helpers.expected_summary(rows, span)
    db.dispose()


def _daily(db: Database, owner: int, site: int, first: str, last: str) -> list[dict[str, Any]]:
    with db.read() as conn:
        query = parse([("range", "custom"), ("from", first), ("to", last)], ["range", "from", "to"])
        points: list[dict[str, Any]] = Report.open(conn, owner, site, query).timeseries()["points"]
    return points


def test_daily_charts_follow_a_change_of_the_sites_time_zone(db: Database) -> None:
    owner, site = _site(db)
    with db.begin() as conn:
        conn.execute(sites.update().where(sites.c.id == site).values(timezone="America/New_York"))
    rows = _seed(db, site, visits=200, seed=5)
    RollupJob(db).catch_up()
    today = datetime.now(UTC).date()
    first, last = today - timedelta(days=5), today - timedelta(days=1)

    def expected(zone: str) -> list[dict[str, Any]]:
        out = []
        for i in range((last - first).days + 1):
            day = first + timedelta(days=i)
            out.append(
                {"time": day.isoformat(), **helpers.expected_summary(rows, helpers.span_of(day, day, zone))}
            )
        return out

    with db.read() as conn:
        assert localdays.valid(conn, site, "America/New_York")
    assert _daily(db, owner, site, first.isoformat(), last.isoformat()) == expected("America/New_York")
    with db.begin() as conn:
        conn.execute(sites.update().where(sites.c.id == site).values(timezone="Asia/Tokyo"))
    # Until new events arrive, the local days of the old zone are not used.
    assert _daily(db, owner, site, first.isoformat(), last.isoformat()) == expected("Asia/Tokyo")
    late = helpers.generate(site, NOW, visits=1, days=1, seed=9)
    helpers.insert_events(db, late)
    RollupJob(db).catch_up()
    rows += late
    with db.read() as conn:
        assert localdays.valid(conn, site, "Asia/Tokyo")
        assert not localdays.valid(conn, site, "America/New_York")
    assert _daily(db, owner, site, first.isoformat(), last.isoformat()) == expected("Asia/Tokyo")
