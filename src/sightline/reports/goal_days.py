"""The Goals panel's complete past days, kept between requests: per site, day and goal rule, the
day's conversions, revenue and bitmap of converting visitors (``goal_bitmaps.Piece``), so that a
30-day panel reads today's events and merges 29 kept days instead of reading 30 days of events.

They are kept in the one layer of kept figures (``reports.kept_figures``), keyed by site, the day's span
of time (``[start, end)``, UTC microseconds: the site's local midnights, so a changed time zone
asks for other spans) and the goal's rule (kind, match, path, event, prop, revenue prop: an edited
goal is another rule; a deleted one is never asked for again; a renamed one keeps its days). A
kept day is a function of the events in its span, which is what the store's change records name:
the layer drops it exactly when a write (a fed batch, an erasure, a retention cut, a deleted
site, the self-check's refill, a rebuild) touched it.

Only whole local days that ended before the request are kept; today, and a span's partial edges,
are read at each request. A day kept with bitmaps smaller than a request needs is read again;
larger ones fold (``goal_bitmaps.fold``), and a smaller bitmap never replaces a larger one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from sightline.reports import goal_bitmaps
from sightline.reports.filters import Goal
from sightline.reports.goal_bitmaps import Piece
from sightline.reports.kept_figures import Beside, Kept, Seen
from sightline.reports.period import local_midnight
from sightline.reports.queries import Run, Span
from sightline.store.dialects import Dialect
from sightline.store.epoch import EPOCH, MICROSECOND, micros

MOST_MISSING = 1 / 3  # more of a span's complete days not kept: the span is read at once
FILL_DAYS = 7  # days read per query in the background
ROOM = 128 << 20  # bitmaps one request may have kept at most (else it reads its span at once)
log = logging.getLogger("sightline.reports")
Rule = tuple[str, str | None, str | None, str | None, str | None, str | None, str | None]


def rule_of(goal: Goal) -> Rule:
    """What a goal's figures depend on (not its name, id or currency)."""
    return (goal.kind, goal.match, goal.path, goal.event, goal.prop_key, goal.prop_value, goal.revenue_prop)


@dataclass(frozen=True)
class _Kept:
    conversions: int
    revenue: tuple[Decimal, int] | None
    bits: int
    size: int


class Ledger:
    """The Goals panel's days of one store's sites in its layer of kept figures (``kept``), and
    the days being read in the background."""

    def __init__(self, kept: Kept, background: bool = True) -> None:
        self.kept = kept
        self.background = background  # read a cold span's days in a thread (tests: in the request)
        self._filling: dict[_Job, threading.Thread] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """The kept figures of the layer (every report's, not only the Goals panel's)."""
        return len(self.kept)

    def get(self, site_id: int, span: tuple[int, int], rule: Rule, size: int, seen: Seen) -> _Kept | None:
        found: _Kept | None = self.kept.get((site_id, *span, ("goal", rule)), seen)
        return found if found is not None and found.size >= size else None

    def keep(
        self, site_id: int, span: tuple[int, int], rules: Sequence[Rule], seen: Seen, piece: Piece
    ) -> None:
        """Keeps a complete day's figures of each goal (``rules`` in the piece's order), unless a
        bigger bitmap of the day is kept (it folds into this one: a 7-day panel's days never
        push out a 30-day panel's)."""

        def bigger(old: _Kept) -> bool:
            return old.size > piece.size

        for index, rule in enumerate(rules):
            kept = _Kept(piece.conversions[index], piece.revenue[index], piece.bits[index], piece.size)
            self.kept.put((site_id, *span, ("goal", rule)), kept, seen, _bytes(piece.size), keeps=bigger)

    def fill(
        self,
        run: Run,
        dialect: Dialect,
        site_id: int,
        bounds: Sequence[int],
        days: Sequence[int],
        goals: Sequence[Goal],
        own: int,
        seen: Seen,
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
                        found = goal_bitmaps.pieces(run, dialect, site_id, bounds, chunk, goals, own)
                        for index, piece in (found or {}).items():
                            self.keep(site_id, (bounds[index], bounds[index + 1]), rules, seen, piece)
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


_ledgers: Beside[Ledger] = Beside(Ledger)


def ledger_of(store: object) -> Ledger | None:
    """The Goals panel's days of ``store`` (None when it keeps no figures: ``kept.kept_of``)."""
    return _ledgers.of(store)


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
        self, run: Run, dialect: Dialect, site_id: int, bounds: Sequence[int], goals: Sequence[Goal], own: int
    ) -> dict[int, Piece] | None:
        """Each piece's figures: kept days from the ledger, the others read (and the complete days
        among them kept). With most complete days not kept (the first request after a start or an
        edit), the whole span is read at once as one piece, the cheapest way, and the complete days
        are read and kept in the background."""
        complete = [i for i in range(len(bounds) - 1) if self._whole(bounds[i], bounds[i + 1])]
        if not complete:  # today only, or a span of hours: nothing to keep
            return goal_bitmaps.pieces(run, dialect, site_id, bounds, range(len(bounds) - 1), goals, own)
        seen = self.ledger.kept.sync(site_id)
        rules = [rule_of(g) for g in goals]
        out: dict[int, Piece] = {}
        for index in complete:
            kept = [self.ledger.get(site_id, (bounds[index], bounds[index + 1]), r, own, seen) for r in rules]
            if all(k is not None for k in kept):
                ks = [k for k in kept if k is not None]
                out[index] = Piece(
                    [k.conversions for k in ks],
                    [k.revenue for k in ks],
                    [goal_bitmaps.fold(k.bits, k.size, own) for k in ks],
                    own,
                )
        missing = [i for i in complete if i not in out]
        room = len(complete) * len(goals) * _bytes(own) <= ROOM
        cold = len(missing) > MOST_MISSING * len(complete) and self.ledger.background
        if cold or not room:  # the whole span as one piece (and, with room, its days kept later)
            if room:
                self.ledger.fill(run, dialect, site_id, bounds, missing, goals, own, seen)
            return goal_bitmaps.pieces(run, dialect, site_id, [bounds[0], bounds[-1]], [0], goals, own)
        wanted = [i for i in range(len(bounds) - 1) if i not in out]
        read = goal_bitmaps.pieces(run, dialect, site_id, bounds, wanted, goals, own) if wanted else {}
        if read is None:
            return None
        for index, piece in read.items():
            out[index] = piece
            if index in complete:
                self.ledger.keep(site_id, (bounds[index], bounds[index + 1]), rules, seen, piece)
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
