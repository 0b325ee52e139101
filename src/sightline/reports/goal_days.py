"""The Goals panel's complete past days, kept between requests: per site, day and goal rule, the
day's conversions, revenue and bitmap of converting visitors (``goal_bitmaps.Piece``), so that a
30-day panel reads today's events and merges 29 kept days instead of reading 30 days of events.

What is kept is derived from the store's events and nothing else, and checked against them at
every request, never kept in step by hand (the feed, erasures and goal edits know nothing of it):

- A kept day is a function of the events in its span of time ``[start, end)`` (UTC microseconds:
  the site's local midnights, so a changed time zone asks for other spans) and of the goal's
  rule (kind, match, path, event, prop, revenue prop: an edited goal is another rule; a deleted
  one is never asked for again).
- Each kept day notes the store's watermark and the site's event count (``basis``) in a snapshot
  taken before its events were read, and is read from the events fed up to that watermark only (``id
  <= watermark``): an event fed while it is read is left for the next request, which sees it fed
  since the basis, so a kept day never holds an event its basis does not count (one fed and then
  erased between two requests would otherwise stay in it). At each request one query (a snapshot of
  its own) reads the watermark, the site's event count and, per hour, the newest id of the site's
  events fed since the oldest basis. A kept day stays when no event fed after its basis falls in its
  span (a late event for a past day has a newer id than any the store held: ids reach the store in
  order) and the site's count is its basis's plus the events fed since (else events were deleted: a
  visitor's erasure, a retention cut, a deleted site: every day of the site goes). A watermark below
  a basis means the store was rebuilt, or is being rebuilt: every day goes. A day that stays takes
  the new snapshot as its basis.
- Only whole local days that ended before the request are kept; today, and a span's partial
  edges, are read at each request. A day kept with bitmaps smaller than a request needs is read
  again; larger ones fold (``goal_bitmaps.fold``).

It lives in the server's memory (one ``Ledger`` per store, at most ``KEEP_BYTES``): lost with the
process, so nothing outlives a restart, an upgrade or a store rebuilt elsewhere, and the first
request after a start (or for a new rule) reads its days from the events like any other.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter or an integer)
from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from sightline.reports import goal_bitmaps
from sightline.reports.filters import Goal
from sightline.reports.goal_bitmaps import Piece
from sightline.reports.per_store import PerStore
from sightline.reports.period import local_midnight
from sightline.reports.queries import Run, Span
from sightline.store.dialects import Dialect
from sightline.store.epoch import EPOCH, MICROSECOND, micros

KEEP_BYTES = 256 << 20  # the kept days' bitmaps together, for every site of a store
HOUR = 3_600_000_000  # microseconds
MAX_BASES = 8  # kept days of more distinct snapshots than this: the oldest go
MOST_MISSING = 1 / 3  # more of a span's complete days not kept: the span is read at once
FILL_DAYS = 7  # days read per query in the background
log = logging.getLogger("sightline.reports")
Rule = tuple[str, str | None, str | None, str | None, str | None, str | None, str | None]


def rule_of(goal: Goal) -> Rule:
    """What a goal's figures depend on (not its name, id or currency)."""
    return (goal.kind, goal.match, goal.path, goal.event, goal.prop_key, goal.prop_value, goal.revenue_prop)


@dataclass
class _Kept:
    basis: tuple[int, int]  # the store's watermark and the site's event count it was read after
    conversions: int
    revenue: tuple[float, int] | None
    bits: int
    size: int


class Ledger:
    """The kept days of one store's sites, least recently used first."""

    def __init__(self, keep_bytes: int = KEEP_BYTES, background: bool = True) -> None:
        self.keep_bytes = keep_bytes
        self.background = background  # read a cold span's days in a thread (tests: in the request)
        self._filling: dict[_Job, threading.Thread] = {}
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[int, int, int, Rule], _Kept] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._kept)

    def check(self, run: Run, site_id: int) -> tuple[int, int]:
        """Drops the site's kept days that the store's events no longer match; returns the
        snapshot ``(watermark, the site's event count)`` read now."""
        with self._lock:
            bases = sorted({k.basis for key, k in self._kept.items() if key[0] == site_id})[-MAX_BASES:]
            for key in [key for key, k in self._kept.items() if key[0] == site_id and k.basis not in bases]:
                self._forget(key)
        since = min((w for w, _ in bases), default=None)
        if since is None:
            row = run(
                "SELECT (SELECT max(value) FROM store_state WHERE name = 'watermark'), "
                "(SELECT count(*) FROM events WHERE site_id = $site)",
                {"site": site_id},
            )[0]
            return int(row[0] or 0), int(row[1] or 0)
        fed = ", ".join(f"count(*) FILTER (WHERE id > {w}) AS n{i}" for i, (w, _) in enumerate(bases))
        row = run(
            "SELECT (SELECT max(value) FROM store_state WHERE name = 'watermark'), "
            "(SELECT count(*) FROM events WHERE site_id = $site), "
            f"(SELECT list([h, m]) FROM (SELECT time // {HOUR} AS h, max(id) AS m FROM events "
            "WHERE site_id = $site AND id > $since GROUP BY h)), "
            f"(SELECT [{', '.join(f'n{i}' for i in range(len(bases)))}] FROM (SELECT {fed} FROM events "
            "WHERE site_id = $site AND id > $since))",
            {"site": site_id, "since": since},
        )[0]
        watermark, count = int(row[0] or 0), int(row[1] or 0)
        hours = [(int(h), int(m)) for h, m in row[2] or []]
        fed_since = dict(zip(bases, [int(n or 0) for n in row[3] or []], strict=False))

        def stale(key: tuple[int, int, int, Rule], k: _Kept) -> bool:
            w, n = k.basis
            if watermark < w or count != n + fed_since.get(k.basis, -1):
                return True
            return any(newest > w and h * HOUR < key[2] and (h + 1) * HOUR > key[1] for h, newest in hours)

        with self._lock:
            for key in [key for key, k in self._kept.items() if key[0] == site_id and stale(key, k)]:
                self._forget(key)
            for key, k in self._kept.items():
                if key[0] == site_id:
                    k.basis = (watermark, count)
        return watermark, count

    def _forget(self, key: tuple[int, int, int, Rule]) -> None:
        gone = self._kept.pop(key)
        self._bytes -= _bytes(gone.size)

    def get(self, site_id: int, span: tuple[int, int], rule: Rule, size: int) -> _Kept | None:
        with self._lock:
            key = (site_id, *span, rule)
            kept = self._kept.get(key)
            if kept is None or kept.size < size:
                return None
            self._kept.move_to_end(key)
            return kept

    def keep(
        self, site_id: int, span: tuple[int, int], rules: Sequence[Rule], basis: tuple[int, int], piece: Piece
    ) -> None:
        """Keeps a complete day's figures of each goal (``rules`` in the piece's order), unless a
        bigger bitmap of the day is kept (it folds into this one: a 7-day panel's days never
        push out a 30-day panel's)."""
        with self._lock:
            for i, rule in enumerate(rules):
                key = (site_id, *span, rule)
                if key in self._kept:
                    if self._kept[key].size > piece.size:
                        continue
                    self._forget(key)
                kept = _Kept(basis, piece.conversions[i], piece.revenue[i], piece.bits[i], piece.size)
                self._kept[key] = kept
                self._bytes += _bytes(piece.size)
            while self._bytes > self.keep_bytes and self._kept:
                self._forget(next(iter(self._kept)))

    def fill(
        self,
        run: Run,
        d: Dialect,
        site_id: int,
        bounds: Sequence[int],
        days: Sequence[int],
        goals: Sequence[Goal],
        own: int,
        basis: tuple[int, int],
    ) -> None:
        """Reads and keeps the complete ``days`` in a thread of its own, unless one already reads
        them for the same goals with bitmaps as big (a request arriving meanwhile reads its span
        at once again: a 7-day panel's days come with the 30-day panel's being read)."""
        rules = [rule_of(g) for g in goals]
        job = _Job(site_id, tuple(rules), own, frozenset((bounds[i], bounds[i + 1]) for i in days))
        with self._lock:
            if any(job.within(other) for other in self._filling):
                return

            def read() -> None:
                try:
                    for at in range(0, len(days), FILL_DAYS):
                        chunk = days[at : at + FILL_DAYS]
                        found = goal_bitmaps.pieces(run, d, site_id, bounds, chunk, goals, own, basis[0])
                        for i, piece in (found or {}).items():
                            self.keep(site_id, (bounds[i], bounds[i + 1]), rules, basis, piece)
                except Exception:  # a report answered without it: the next request reads again
                    log.exception("the Goals panel's days could not be read in the background")
                finally:
                    with self._lock:
                        self._filling.pop(job, None)

            thread = threading.Thread(target=read, name="sightline-goal-days", daemon=True)
            self._filling[job] = thread
        thread.start()

    def wait(self) -> None:
        """Until the days being read in the background are kept (tests)."""
        with self._lock:
            threads = list(self._filling.values())
        for thread in threads:
            thread.join()


@dataclass(frozen=True)
class _Job:
    """Days read in the background: of which site, for which goal rules, at what bitmap size."""

    site_id: int
    rules: tuple[Rule, ...]
    size: int
    spans: frozenset[tuple[int, int]]

    def within(self, other: _Job) -> bool:
        """Whether ``other`` reads all this job would."""
        same = (self.site_id, self.rules) == (other.site_id, other.rules)
        return same and other.size >= self.size and self.spans <= other.spans


def _bytes(size: int) -> int:
    return size // 8 + 100  # the bitmap and the entry around it


ledger_of = PerStore(Ledger)  # the kept days of a store (one per running server)


@dataclass(frozen=True)
class Days:
    """How one request splits its span into the site's days, and where complete ones are kept."""

    ledger: Ledger
    zone: ZoneInfo
    now: datetime

    def bounds(self, span: Span) -> list[int]:
        """The span's pieces: its start, each local midnight inside it, and its end."""
        out = [micros(span[0])]
        day = span[0].astimezone(self.zone).date() + timedelta(days=1)
        while (midnight := local_midnight(day, self.zone)) < span[1]:
            out.append(micros(midnight))
            day += timedelta(days=1)
        out.append(micros(span[1]))
        return out

    def figures(
        self, run: Run, d: Dialect, site_id: int, bounds: Sequence[int], goals: Sequence[Goal], own: int
    ) -> dict[int, Piece] | None:
        """Each piece's figures: kept days from the ledger, the others read (and the complete days
        among them kept). With most complete days not kept (the first request after a start or an
        edit), the whole span is read at once as one piece, the cheapest way, and the complete days
        are read and kept in the background."""
        complete = [i for i in range(len(bounds) - 1) if self._whole(bounds[i], bounds[i + 1])]
        if not complete:  # today only, or a span of hours: nothing to keep
            return goal_bitmaps.pieces(run, d, site_id, bounds, range(len(bounds) - 1), goals, own)
        basis = self.ledger.check(run, site_id)
        rules = [rule_of(g) for g in goals]
        out: dict[int, Piece] = {}
        for i in complete:
            kept = [self.ledger.get(site_id, (bounds[i], bounds[i + 1]), r, own) for r in rules]
            if all(k is not None for k in kept):
                ks = [k for k in kept if k is not None]
                out[i] = Piece(
                    [k.conversions for k in ks],
                    [k.revenue for k in ks],
                    [goal_bitmaps.fold(k.bits, k.size, own) for k in ks],
                    own,
                )
        missing = [i for i in complete if i not in out]
        room = len(complete) * len(goals) * _bytes(own) <= self.ledger.keep_bytes // 2
        cold = len(missing) > MOST_MISSING * len(complete) and self.ledger.background
        if cold or not room:  # the whole span as one piece (and, with room, its days kept later)
            if room:
                self.ledger.fill(run, d, site_id, bounds, missing, goals, own, basis)
            return goal_bitmaps.pieces(run, d, site_id, [bounds[0], bounds[-1]], [0], goals, own)
        wanted = [i for i in range(len(bounds) - 1) if i not in out]
        read = goal_bitmaps.pieces(run, d, site_id, bounds, wanted, goals, own, basis[0]) if wanted else {}
        if read is None:
            return None
        for i, piece in read.items():
            out[i] = piece
            if i in complete:
                self.ledger.keep(site_id, (bounds[i], bounds[i + 1]), rules, basis, piece)
        return out

    def _whole(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` is a whole local day that ended before the request."""
        if end > micros(self.now):
            return False
        day = (EPOCH + start * MICROSECOND).astimezone(self.zone)
        return (
            micros(local_midnight(day.date(), self.zone)) == start
            and micros(local_midnight(day.date() + timedelta(days=1), self.zone)) == end
        )
