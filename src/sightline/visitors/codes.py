"""Cookieless visitor codes: a keyed hash of a daily secret salt, the site, address and user agent.

Used by ingest's writer process for sites with ``cookieless`` on, where the SDK keeps nothing on
the device and sends ``ANONYMOUS`` as its visitor code. The code is
``HMAC-SHA256(salt of the UTC day, site id | client address | user agent)``, cut to 32 hex
digits. Each UTC day has its own random 32-byte salt (table ``visitor_salts``); the row of a day
is deleted 48 hours after that day began (``purge``), and the writer only ever holds today's
salt, so once it is gone nobody, the operator included, can link a code to an address or to
the codes of another day. Visits are cut on 30 minutes of inactivity by ``Visits``, in the
writer's memory only.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError

from sightline.database import Database
from sightline.database.tables.privacy import visitor_salts

ANONYMOUS = "-"  # the visitor code a cookieless SDK sends: "derive it on the server"
SALT_LIFETIME = timedelta(hours=48)
VISIT_GAP_US = 30 * 60 * 1_000_000  # a visit ends after 30 minutes without an event
MAX_VISITS = 200_000  # live visits kept in memory; beyond it the oldest are forgotten first

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def day_of(moment: datetime) -> str:
    return moment.astimezone(UTC).date().isoformat()


def purge(db: Database, now: datetime) -> int:
    """Delete every salt whose day began 48 hours ago or more; returns how many."""
    first_kept = (now.astimezone(UTC) - SALT_LIFETIME + timedelta(days=1)).date().isoformat()
    with db.engine.begin() as conn:
        result = conn.execute(delete(visitor_salts).where(visitor_salts.c.day < first_kept))
    return int(result.rowcount or 0)


class DailySalts:
    """Today's salt, created on first use and cached until the day changes."""

    def __init__(self, db: Database, clock: Clock = utc_now) -> None:
        self.db = db
        self.clock = clock
        self._day = ""
        self._salt = b""

    def current(self) -> bytes:
        now = self.clock()
        day = day_of(now)
        if day != self._day:
            self._day, self._salt = "", b""  # yesterday's salt leaves memory first
            purge(self.db, now)
            self._salt = self._load(day, now)
            self._day = day
        return self._salt

    def _load(self, day: str, now: datetime) -> bytes:
        query = select(visitor_salts.c.salt).where(visitor_salts.c.day == day)
        with self.db.engine.begin() as conn:
            found = conn.execute(query).scalar()
        if found is not None:
            return bytes(found)
        try:
            with self.db.engine.begin() as conn:
                conn.execute(
                    insert(visitor_salts).values(day=day, salt=secrets.token_bytes(32), created_at=now)
                )
        except IntegrityError:
            pass  # another process made today's salt a moment ago: use that one
        with self.db.engine.begin() as conn:
            return bytes(conn.execute(query).scalar_one())


def visitor_code(salt: bytes, site_id: int, address: str | None, user_agent: str | None) -> str:
    message = f"{site_id}|{address or ''}|{user_agent or ''}".encode()
    return hmac.new(salt, message, hashlib.sha256).hexdigest()[:32]


class Visits:
    """Server-side visits of cookieless visitors: a new random visit id after 30 idle minutes."""

    def __init__(self) -> None:
        self._live: dict[str, tuple[str, int]] = {}  # visitor code -> (visit id, last event µs)

    def visit(self, code: str, at_us: int) -> str:
        live = self._live
        found = live.pop(code, None)  # re-inserted below: the dict stays ordered by last use
        visit_id = (
            found[0] if found is not None and at_us - found[1] <= VISIT_GAP_US else secrets.token_urlsafe(16)
        )
        live[code] = (visit_id, max(at_us, found[1]) if found is not None else at_us)
        if len(live) > MAX_VISITS:
            self.forget(at_us)
        return visit_id

    def forget(self, now_us: int) -> None:
        """Drop ended visits (and, over the cap, the least recently used)."""
        live = self._live
        for code in [c for c, (_, last) in live.items() if now_us - last > VISIT_GAP_US]:
            del live[code]
        while len(live) > MAX_VISITS:
            del live[next(iter(live))]

    def __len__(self) -> int:
        return len(self._live)
