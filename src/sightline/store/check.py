"""The store checks itself against the log, per site and day, and feeds again what differs.

A **pass** walks every site's days the log holds, newest first, a few days of one site per step
(the sites in turn, so every site's newest days come first):
for the events up to the watermark it compares, per UTC day, the log's count and sum of ids with
the store's. A day that differs is **repaired**: the events the log holds that the store lacks
(or holds twice) are found by id, the store's rows of the visits they belong to are deleted, and
those visits' events are fed again from the log (visit numbers, attributes, entry and exit as a
first feed gives them), in one transaction on DuckDB. When the store holds events of those visits
that the log no longer has (a trimmed log), the visits are kept and only the missing events are
fed into them. Events the store holds and the log does not (the log's trim, an erasure not yet
applied, a log restored from an older backup) are never deleted by the check: they are counted
and said.

A pass starts when the store process starts and then every ``PASS_EVERY`` seconds; its steps run
between feeding steps, never while a backlog is fed or a privacy task waits, each round stops
after ``ROUND_MS`` (the days per step adapt to it), and after a round the check rests 19 times as
long, so that it takes at most ``SHARE`` of the process's time beside the feed and the reports'
queries: one step of a busy day can take longer than a round (a 166,000-event day of a 10 M
store: 150-250 ms while fed), and without the rest the check ran at every feeding look. A site's
days before the log's first (a trim, a deletion) are looked for in the store once its other days
are checked, a step of its own. A repair itself is not cut short, and one of a busy day can take
many seconds, the feed waiting: so a day whose repair failed, or that differs only by events the
store alone holds, is read again only once its figures in the log or the store changed (a failed
one also after ``RETRY_FAILED`` seconds: its cause may have been passing); until then each pass
lists or counts it as before without reading it. With ``--event-log-retention-days`` a pass
covers the days the trim has not touched, and says from which day.

Each pass also keeps the log's next id past the watermark (``log.LogPositions``).
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from sqlalchemy import String, func, select

from sightline.database import Database
from sightline.database.reclaim import StepSize
from sightline.database.schema import deleted_sites, events, sites, store_tasks
from sightline.store.changes import merged
from sightline.store.dialects import Params
from sightline.store.engines import Engine
from sightline.store.epoch import EPOCH
from sightline.store.feed import LOOK_BACK, Feeder, key_of
from sightline.store.log import LogPositions

log = logging.getLogger("sightline.store")
DAY = 86_400_000_000  # microseconds
PASS_EVERY = 60.0  # seconds from the start of one pass to the start of the next
ROUND_MS = 20.0  # a round stops after this long (one step at least)
SHARE = 0.05  # of the store process's time, the most the check's rounds take (it rests 19 times a round)
SPAN = (1, 1, 64)  # days per step: at first, at least, at most (doubled while a step is quick)
SHOWN = 10  # repairs and failures health lists (the newest)
RETRY_FAILED = 3600.0  # seconds before a failed repair is tried again on unchanged figures
Figures = tuple[tuple[int, int] | None, tuple[int, int] | None]  # a day's (count, sum of ids): log, store


def day_of(text: str) -> int:
    """Days since the epoch of a 'YYYY-MM-DD' date."""
    return (date.fromisoformat(text) - EPOCH.date()).days


def moment(day: int) -> datetime:
    return EPOCH + timedelta(days=day)


@dataclass
class Findings:
    """What the check did, for health (``as_dict``) and the log."""

    passes: int = 0
    last_check: float | None = None  # when the last whole pass ended
    covers_from: str | None = None  # the first day a pass covers when the log was trimmed
    days_checked: int = 0
    ranges_repaired: int = 0
    events_fed: int = 0  # events the check fed (the store lacked them)
    store_only: int = 0  # events of the last pass the store holds and the log no longer has
    rounds: int = 0
    pass_seconds: float | None = None  # how long the last whole pass took, its rounds and the waits between
    last_round_ms: float = 0.0
    longest_round_ms: float = 0.0
    repaired: list[str] = field(default_factory=list)
    unrepaired: list[str] = field(default_factory=list)
    sequence_moved: str | None = None

    def add(self, kind: list[str], text: str) -> None:
        kind.append(text)
        del kind[:-SHOWN]

    def as_dict(self) -> dict[str, Any]:
        note = None
        if self.covers_from is not None:
            note = (
                f"the log keeps events for --event-log-retention-days: the check covers the days "
                f"from {self.covers_from}; older events are only in the store"
            )
        return {
            "passes": self.passes,
            "last_check": datetime.fromtimestamp(self.last_check, UTC).isoformat()
            if self.last_check
            else None,
            "covers_from": self.covers_from,
            "note": note,
            "days_checked": self.days_checked,
            "ranges_repaired": self.ranges_repaired,
            "events_fed": self.events_fed,
            "store_only_events": self.store_only,
            "repaired": list(self.repaired),
            "unrepaired": list(self.unrepaired),
            "sequence_moved": self.sequence_moved,
            "pass_seconds": self.pass_seconds,
            "last_round_ms": self.last_round_ms,
            "longest_round_ms": self.longest_round_ms,
        }


class SelfCheck:
    def __init__(self, db: Database, engine: Engine, feeder: Feeder, log_retention_days: int | None) -> None:
        self.db = db
        self.engine = engine
        self.feeder = feeder
        self.days = log_retention_days
        self.positions = LogPositions(db)
        self.found = Findings()
        self.span = StepSize(*SPAN, ROUND_MS)
        # (site, first day, last day, whether the store's earlier days were looked for) left, in turn
        self._queue: list[tuple[int, int, int, bool]] = []
        self._first_whole: int | None = None  # the first day a pass covers (a trimmed log)
        self._next = 0.0  # when the next pass starts
        self._began = 0.0  # when the pass under way started
        self._rest_until = 0.0  # no round before then (``SHARE``)
        self._watermark = 0
        self._store_only = 0
        # (site, day) -> its figures in the log and the store when its repair failed (and why) or
        # found only events the store alone holds (how many)
        self._known: dict[tuple[int, int], tuple[Figures, str | int, float]] = {}  # ..., until when

    # -- the log's positions -----------------------------------------------------------------

    def keep_positions(self) -> None:
        """Moves the log's next id past the store's watermark when it is not (said once per move)."""
        watermark = self.engine.watermark()
        given = self.positions.keep_past(watermark)
        if given is not None:
            self.found.sequence_moved = (
                f"the events log would have given ids from {given + 1}, at or below the store's "
                f"watermark {watermark}: its next id now follows {watermark}"
            )
            log.warning("%s; the self-check feeds the events it gave before", self.found.sequence_moved)

    # -- passes and rounds -------------------------------------------------------------------

    def run(self) -> None:
        """One round of the pass under way, or a new pass when one is due; none until the rest
        the last round earned has passed (``SHARE``)."""
        if time.monotonic() < self._rest_until:
            return
        started = time.perf_counter()
        if not self._queue:
            if time.monotonic() < self._next:
                return
            self._start()
            if not self._queue:
                self._finish()
                return
        if self.engine.pending_range() is not None or self._tasks_waiting():
            return
        self._step()  # one step at least, whatever the pass's start took
        while self._queue and (time.perf_counter() - started) * 1000 < ROUND_MS:
            self._step()
        took = round((time.perf_counter() - started) * 1000, 1)
        self._rest_until = time.monotonic() + took / 1000 * (1 / SHARE - 1)
        self.found.rounds += 1
        self.found.last_round_ms = took
        self.found.longest_round_ms = max(self.found.longest_round_ms, took)
        if not self._queue:
            self._finish()

    def check_all(self) -> None:
        """A whole pass now, without rests (tests, and ``sightline`` commands that check the store)."""
        self._next = 0.0
        self._rest_until = 0.0
        self.run()
        while self._queue:
            self._rest_until = 0.0
            self.run()

    def _start(self) -> None:
        self._next = time.monotonic() + PASS_EVERY
        self._began = time.monotonic()
        self.keep_positions()
        self._watermark = self.engine.watermark()
        self._store_only = 0
        self.found.unrepaired.clear()  # what still cannot be repaired is found again by this pass
        today = (datetime.now(UTC) - EPOCH).days
        first_whole = None
        if self.days is not None:
            first_whole = (datetime.now(UTC) - timedelta(days=self.days) - EPOCH).days + 1
        self._first_whole = first_whole
        self.found.covers_from = None if first_whole is None else moment(first_whole).date().isoformat()
        columns = events.c
        with self.db.read() as conn:
            gone = select(deleted_sites.c.id)
            chosen = [int(r[0]) for r in conn.execute(select(sites.c.id).where(sites.c.id.not_in(gone)))]
            queue = []
            for site in sorted(chosen):
                # Two queries: each is one look into the (site, time) index, where SQLite answers
                # min and max asked together by reading every entry of the site (3 s at 10 M).
                mine = columns.site_id == site
                low = conn.execute(select(func.min(columns.time)).where(mine)).scalar()
                high = conn.execute(select(func.max(columns.time)).where(mine)).scalar()
                if low is None or high is None:
                    continue
                first = (low - EPOCH).days if first_whole is None else max((low - EPOCH).days, first_whole)
                last = min((high - EPOCH).days, today + 1)
                if first <= last:
                    queue.append((site, first, last, False))
        self._queue = queue

    def _earlier(self, site: int, first: int) -> None:
        """Once a site's days from the log's first are checked: the store's days before it, if it
        holds any (a trim, a deletion), are checked too, so that what only the store holds is
        counted. Looked for here, a step of its own, rather than for every site at a pass's start
        (a scan of the site's events: 8 ms each at 100 M events, 1.7 s for 200 sites at once)."""
        earliest = self._store_first_day(site, first)
        if self._first_whole is not None:
            earliest = max(earliest, self._first_whole)
        if earliest < first:
            self._queue.append((site, earliest, first - 1, True))

    def _store_first_day(self, site: int, otherwise: int) -> int:
        """The day of the store's earliest event of ``site`` (``otherwise`` when it holds none)."""
        params = Params(self.engine.dialect)
        found = self.engine.query(
            f"SELECT min(time) FROM events WHERE site_id = {params.bind(site)}", params.values
        )
        earliest = found[0][0] if found else None  # ClickHouse gives 0 for no rows, DuckDB NULL
        return otherwise if not earliest else min(otherwise, int(earliest) // DAY)

    def _finish(self) -> None:
        self.found.passes += 1
        self.found.last_check = time.time()
        self.found.pass_seconds = round(time.monotonic() - self._began, 1)
        self.found.store_only = self._store_only

    def _tasks_waiting(self) -> bool:
        """A privacy task the store has not applied yet: the log and the store differ on purpose."""
        with self.db.read() as conn:
            return (
                conn.execute(select(store_tasks.c.id).where(store_tasks.c.done_at.is_(None)).limit(1)).first()
                is not None
            )

    def _step(self) -> None:
        site, first, last, looked = self._queue.pop(0)
        low = max(first, last - self.span.value + 1)
        started = time.perf_counter()
        differ = self._compare(site, low, last)
        self.span.took((time.perf_counter() - started) * 1000)
        self.found.days_checked += last - low + 1
        if low > first:  # the site's older days after the other sites' newer ones
            self._queue.append((site, first, low - 1, looked))
        elif not looked:
            self._earlier(site, first)
        for day, figures in differ:
            self._repair(site, day, figures)

    def _compare(self, site: int, low: int, high: int) -> list[tuple[int, Figures]]:
        """The days of ``[low, high]`` whose events up to the watermark differ (count, sum of ids),
        newest first, with their figures in the log and in the store."""
        columns = events.c
        if self.db.dialect == "sqlite":  # times are UTC text: the day is its first ten characters
            day = func.substr(columns.time, 1, 10, type_=String)
        else:
            day = func.to_char(func.timezone("UTC", columns.time), "YYYY-MM-DD", type_=String)
        query = (
            select(day, func.count(), func.sum(columns.id))
            .where(
                columns.site_id == site,
                columns.time >= moment(low),
                columns.time < moment(high + 1),
                columns.id <= self._watermark,
            )
            .group_by(day)
        )
        with self.db.read() as conn:
            in_log = {day_of(str(d)): (int(n), int(s)) for d, n, s in conn.execute(query)}
        params = Params(self.engine.dialect)
        bucket = params.dialect.div("time", str(DAY))
        sql = (
            f"SELECT {bucket} AS d, count(*), sum(id) FROM events WHERE site_id = {params.bind(site)} "
            f"AND time >= {params.bind(low * DAY)} AND time < {params.bind((high + 1) * DAY)} "
            f"AND id <= {params.bind(self._watermark)} GROUP BY d"
        )
        in_store = {int(d): (int(n), int(s)) for d, n, s in self.engine.query(sql, params.values)}
        return [
            (d, (in_log.get(d), in_store.get(d)))
            for d in sorted(in_log.keys() | in_store.keys(), reverse=True)
            if in_log.get(d) != in_store.get(d)
        ]

    # -- repairs -----------------------------------------------------------------------------

    def _repair(self, site: int, day: int, figures: Figures) -> None:
        when = moment(day).date().isoformat()
        known = self._known.get((site, day))
        if known is not None and known[0] == figures and time.monotonic() < known[2]:  # as last read
            if isinstance(known[1], str):
                self.found.add(self.found.unrepaired, known[1])
            else:
                self._store_only += known[1]
            return
        try:
            fed, store_only = self._refeed(site, day)
        except Exception as error:
            log.exception("the store's self-check could not repair site %d on %s", site, when)
            said = f"site {site}, {when}: the repair failed ({error})"
            self._known[(site, day)] = (figures, said, time.monotonic() + RETRY_FAILED)
            self.found.add(self.found.unrepaired, said)
            return
        self._known.pop((site, day), None)
        if not fed:
            self._known[(site, day)] = (figures, store_only, float("inf"))
        self._store_only += store_only
        if fed:
            self.found.ranges_repaired += 1
            self.found.events_fed += fed
            text = f"site {site}, {when}: {fed} events the store lacked (or held twice) were fed from the log"
            self.found.add(self.found.repaired, text)
            log.warning("the store's self-check repaired %s", text)

    def _refeed(self, site: int, day: int) -> tuple[int, int]:
        """Feeds the day's events the store lacks; returns (events fed, events only the store has)."""
        reader = self.feeder.log
        watermark = self._watermark
        rows = reader.read_span(site, moment(day), moment(day + 1), watermark)
        params = Params(self.engine.dialect)
        sql = (
            f"SELECT id, visit FROM events WHERE site_id = {params.bind(site)} "
            f"AND time >= {params.bind(day * DAY)} "
            f"AND time < {params.bind((day + 1) * DAY)} AND id <= {params.bind(watermark)}"
        )
        held = self.engine.query(sql, params.values)
        counts = Counter(int(i) for i, _ in held)
        in_log = {int(i) for i in rows.column("id").to_pylist()}
        missing = in_log - counts.keys()
        twice = {i for i, n in counts.items() if n > 1}
        store_only = len(counts.keys() - in_log)
        if not missing and not twice:
            return 0, store_only
        sessions = {
            key_of(site, s)
            for i, s in zip(rows.column("id").to_pylist(), rows.column("session_id").to_pylist(), strict=True)
            if i in missing
        }
        doubled = sorted({int(v) for i, v in held if int(i) in twice})
        visits = self._visits(site, sessions, doubled)
        sessions |= {int(row[1]) for row in visits}
        numbers = sorted({int(row[0]) for row in visits})
        low = min([day * DAY, *(int(row[2]) for row in visits)]) - LOOK_BACK
        high = max([(day + 1) * DAY, *(int(row[3]) + 1 for row in visits)]) + LOOK_BACK
        wide = reader.read_span(site, _at(low), _at(high), watermark)
        keys = pa.array(
            [key_of(site, s) in sessions for s in wide.column("session_id").to_pylist()], pa.bool_()
        )
        wanted = wide.filter(keys)
        theirs = self._events_of(site, numbers)
        lost = theirs - {int(i) for i in wanted.column("id").to_pylist()}
        if lost:  # the log no longer has some of these visits' events: keep the visits, add the missing
            if twice:
                raise RuntimeError(
                    f"{len(twice)} events are in the store twice, in visits whose other events the log "
                    "no longer has; run `sightline rebuild-store` with a backup of the store at hand"
                )
            only = wanted.filter(pc.is_in(wanted.column("id"), pa.array(sorted(missing), pa.int64())))
            event_rows, visit_rows, changed = self.feeder.build(self.feeder.parsed(only))
            self.engine.refill(site, [], event_rows, visit_rows, merged(changed, {site: [(low, high)]}))
            return only.num_rows, store_only
        event_rows, visit_rows, changed = self.feeder.build(self.feeder.parsed(wanted), continuing=False)
        # The visits replaced and dropped lie within [low, high) (their starts and last events).
        self.engine.refill(site, numbers, event_rows, visit_rows, merged(changed, {site: [(low, high)]}))
        return len(missing) + sum(counts[i] - 1 for i in twice), store_only

    def _visits(self, site: int, sessions: set[int], numbers: list[int]) -> list[tuple[Any, ...]]:
        """(visit, session, start, last) of the store's visits with these sessions or numbers."""
        if not sessions and not numbers:
            return []
        params = Params(self.engine.dialect)
        dialect = params.dialect
        keys = dialect.contains(params.bind(sorted(sessions) or [0]), "session")
        chosen = dialect.contains(params.bind(numbers or [0]), "visit")
        site_is = f"site_id = {params.bind(site)}"
        sql = (
            f"SELECT visit, session, start, last FROM {dialect.visits} "
            f"WHERE {site_is} AND ({keys} OR {chosen})"
        )
        return self.engine.query(sql, params.values)

    def _events_of(self, site: int, numbers: list[int]) -> set[int]:
        if not numbers:
            return set()
        params = Params(self.engine.dialect)
        chosen = params.dialect.contains(params.bind(numbers), "visit")
        sql = f"SELECT id FROM events WHERE site_id = {params.bind(site)} AND {chosen}"
        return {int(row[0]) for row in self.engine.query(sql, params.values)}


def _at(micros: int) -> datetime:
    return EPOCH + timedelta(microseconds=micros)
