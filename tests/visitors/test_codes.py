"""Cookieless visitor codes: daily salts with a controllable clock, on both engines."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from sightline.database import Database
from sightline.database.tables.privacy import visitor_salts
from sightline.visitors.codes import VISIT_GAP_US, DailySalts, Visits, purge, visitor_code

UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0.0.0 Safari/537.36"


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _days(db: Database) -> list[str]:
    with db.read() as conn:
        return list(conn.execute(select(visitor_salts.c.day).order_by(visitor_salts.c.day)).scalars())


def test_one_visitor_keeps_one_code_all_day_and_gets_another_the_next_day(db: Database) -> None:
    clock = Clock(datetime(2026, 11, 23, 0, 5, tzinfo=UTC))
    salts = DailySalts(db, clock)
    morning = visitor_code(salts.current(), 1, "81.2.69.160", UA)
    clock.now += timedelta(hours=23)
    assert visitor_code(salts.current(), 1, "81.2.69.160", UA) == morning
    # Another site, address or browser is another visitor.
    assert visitor_code(salts.current(), 2, "81.2.69.160", UA) != morning
    assert visitor_code(salts.current(), 1, "81.2.69.161", UA) != morning
    assert visitor_code(salts.current(), 1, "81.2.69.160", UA + " Edg/131") != morning
    clock.now += timedelta(hours=1)  # 2026-11-24 00:05
    assert visitor_code(salts.current(), 1, "81.2.69.160", UA) != morning
    assert _days(db) == ["2026-11-23", "2026-11-24"]


def test_a_days_salt_is_gone_48_hours_after_the_day_began(db: Database) -> None:
    clock = Clock(datetime(2026, 11, 23, 12, 0, tzinfo=UTC))
    salts = DailySalts(db, clock)
    salts.current()
    clock.now = datetime(2026, 11, 24, 23, 59, tzinfo=UTC)  # under 48 h since the 23rd began
    salts.current()
    assert _days(db) == ["2026-11-23", "2026-11-24"]
    clock.now = datetime(2026, 11, 25, 0, 0, tzinfo=UTC)  # 48 h since the 23rd began
    salts.current()
    assert _days(db) == ["2026-11-24", "2026-11-25"]
    # The background purge does the same without traffic.
    assert purge(db, datetime(2026, 11, 27, 0, 0, tzinfo=UTC)) == 2
    assert _days(db) == []


def test_two_writers_on_one_database_share_the_days_salt(db: Database) -> None:
    clock = Clock(datetime(2026, 11, 23, 8, 0, tzinfo=UTC))
    assert DailySalts(db, clock).current() == DailySalts(db, clock).current()


def test_a_visit_ends_after_30_idle_minutes() -> None:
    visits = Visits()
    start = 1_700_000_000_000_000
    first = visits.visit("a", start)
    assert visits.visit("a", start + VISIT_GAP_US) == first
    assert visits.visit("b", start) != first
    assert visits.visit("a", start + 2 * VISIT_GAP_US + 1) != first
    visits.forget(start + 10 * VISIT_GAP_US)
    assert len(visits) == 0
