"""The overview's days read once the server has started, so that the first owner to open the
console after a start finds them kept (``overview_days``) instead of waiting for them.

A background job: once the analytics store answers, and only when it keeps figures between
requests and holds at least ``WARM_FROM`` events (below that, the first request reads every day
itself in well under a second), it reads every site's ``RANGES`` (the sites list asks 7 days, the
All sites page 30 days by default) and the periods before them, as the first overview request
would, in each site's time zone: 30 days only when 7 days' pieces show that theirs would fit the
kept figures' room (``FITS``). It reads in parts and lets the requests that ask the store
meanwhile go first between two parts (``GIVE_WAY``): what a start costs the dashboards is the
store's time for one part. An overview request arriving meanwhile waits for it (overview
requests take turns) and then finds every day kept. It reads once per start; what a write changes
later is read by the request after it, as always.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from sqlalchemy import select

from sightline.database import Database
from sightline.database.tables.sites import sites
from sightline.reports.kept_figures import kept_of
from sightline.reports.period import period_of
from sightline.store.dialects import Params
from sightline.store.epoch import micros

if TYPE_CHECKING:
    from sightline.reports.overview_days import Store

WARM_FROM = 1_000_000  # events in the store from which the overview's days are read at the start
RANGES = ("7d", "30d")  # in this order: the first one's pieces tell what the next ones' would take
# A range after the first is read only if its pieces would take at most this share of the kept
# figures' room (the first one's bytes per event, times the events since its earliest start):
# else they would push out each other and every other report's kept figures.
FITS = 0.6
# The read goes in parts of this many events (about half a second of the store's CPU each), and
# between two parts waits up to GIVE_WAY seconds while requests are asking the store.
PART_EVENTS = 2_000_000
GIVE_WAY = 1.0
log = logging.getLogger("sightline.reports")


class Warmer:
    """Reads every site's overview days once, in a thread of its own (``running``)."""

    def __init__(
        self,
        store: Store,  # the store client (it keeps figures between requests: ``kept_figures``)
        db: Database,
        ready: Callable[[float], bool],
        from_events: int = WARM_FROM,
        busy: Callable[[], bool] = lambda: False,
    ) -> None:
        self.store = store
        self.db = db
        self.ready = ready  # waits up to that many seconds for the store; whether it answers
        self.from_events = from_events
        self.busy = busy  # whether requests are asking the store now (the read gives way to them)
        self.stopping = threading.Event()
        self.seconds: float | None = None  # how long the read took (None: nothing read)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        thread = threading.Thread(target=self._run, name="sightline-overview-warm", daemon=True)
        thread.start()
        try:
            yield
        finally:
            self.stopping.set()

    def _run(self) -> None:
        try:
            # The overview's modules (NumPy) load here while the store process starts, rather
            # than on the path of the first overview request after it (0.24 s of one core).
            from sightline.reports import overview_days  # noqa: F401
            from sightline.store import kept_files  # noqa: F401

            while not self.stopping.is_set() and not self.ready(1.0):
                self.stopping.wait(1.0)  # a store that failed to start: it is started again
            if not self.stopping.is_set():
                self.warm(datetime.now(UTC))
        except Exception:  # a store that went away meanwhile: the first request reads the days
            if not self.stopping.is_set():
                log.exception("the overview's days could not be read at the start")

    def warm(self, now: datetime) -> bool:
        """Reads the days of every site's ``RANGES`` into the kept figures; whether it did."""
        if kept_of(self.store) is None:
            return False
        stored = self.store.query("SELECT count(*) FROM events", {})
        if int(stored[0][0]) < self.from_events:
            return False
        from sightline.reports import overview_days  # loaded at the start of ``_run``

        ledger = overview_days.ledger_of(self.store)
        if ledger is None:
            return False
        with self.db.read() as conn:
            rows = list(conn.execute(select(sites.c.id, sites.c.timezone)))
        started = time.perf_counter()
        per_event = 0.0  # the kept bytes after the first range, per event of its spans
        for name in RANGES:
            if self.stopping.is_set():
                return False
            periods = {}
            for site_id, zone in rows:
                period = period_of(name, None, None, ZoneInfo(zone), now, "previous")
                periods[int(site_id)] = (period, period.previous())
            if not periods:
                break
            held = self._events_since(min(previous.start for _, previous in periods.values()))
            if per_event and per_event * held > ledger.kept.most_bytes * FITS:
                log.info(
                    "the overview's %s of every site would not fit the kept figures' room "
                    "(--reports-kept-mb): read by the first request that asks for them",
                    name,
                )
                break
            ledger.answer(self.store, periods, micros(now), PART_EVENTS, self._give_way)
            per_event = per_event or ledger.kept.used / max(1, held)  # every kept figure: the most
        self.seconds = time.perf_counter() - started
        log.info("read the overview's days of %d sites in %.1f s", len(rows), self.seconds)
        return True

    def _give_way(self) -> None:
        """Between two parts of the read: lets the requests asking the store now go first (up to
        ``GIVE_WAY`` seconds), so that the read delays them by one part at most."""
        deadline = time.monotonic() + GIVE_WAY
        while self.busy() and time.monotonic() < deadline and not self.stopping.is_set():
            time.sleep(0.01)

    def _events_since(self, start: datetime) -> int:
        params = Params(self.store.dialect)
        low = params.bind(micros(start))
        found = self.store.query(f"SELECT count(*) FROM events WHERE time >= {low}", params.values)  # noqa: S608
        return int(found[0][0])
