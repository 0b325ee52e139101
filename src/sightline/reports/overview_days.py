"""The overview's figures of each site's ended days and hours, kept between requests, so that a
request over 200 sites reads the hour going on and the spans the feed changed instead of every
event of the period and the one before it (``reports.overview``).

A period's **pieces** are each whole local day of its series (a day-by-day period), and one hour
for every other part (a series hour by hour; today, and a comparison's last day cut at the time
of day, in hours from the local midnight). A piece's figures are its visitors (the sorted, unique
keys of the visitors of its events: exact, as the summary and time series count a small site)
and its pageviews. A period's visitors are those of the union of its pieces: the union of its
whole ended days is kept too (keyed by their span), so a request merges the few keys of its hours
into it (a binary search each) rather than merging 30 days again.

Pieces are kept in the one layer of kept figures (``reports.kept_figures``), keyed by site, the
piece's UTC span and ``SHAPE``: a piece's figures are a function of the site's events in the span,
which is what the store's change records name, so the layer drops a piece (and the union of days
it belongs to) exactly when a write touched it: a late event, an erasure, a deleted site, a
rebuild; a changed time zone asks for other spans. Only pieces that ended before the request are
kept; the hour going on is read every time.

A request that finds more than a third of its sites' whole ended days not kept (the first after a
start, a new range) is answered by the overview's one statement, and the days are read and kept
by a background thread (``FILL_SPANS`` spans per query); fewer missing pieces are read in the
request, in one query. Embedded store only: a store without change records keeps nothing.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter or a site id)
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import numpy.typing as npt

from sightline.reports.kept_figures import Beside, Kept, Seen

__all__ = ["Seen"]
from sightline.reports.period import Period, local_midnight
from sightline.reports.queries import VIEWED
from sightline.store.dialects import Dialect, Params
from sightline.store.epoch import micros

SHAPE = ("overview",)  # a piece's figures
UNION = ("overview-days",)  # the union of a period's whole ended days' visitors
MOST_MISSING = 1 / 3  # more of the whole ended days not kept: the statement answers, a thread fills
FILL_SPANS = 7  # spans read per query in the background
HOUR = timedelta(hours=1)
EMPTY: npt.NDArray[np.uint64] = np.zeros(0, dtype=np.uint64)
Keys = npt.NDArray[np.uint64]
Span = tuple[int, int]  # UTC microseconds, [low, high)
Run = Callable[[str, dict[str, object]], list[tuple[object, ...]]]
log = logging.getLogger("sightline.reports")


@dataclass(frozen=True)
class Piece:
    """A span's figures: its visitors' keys (sorted, unique) and its pageviews."""

    visitors: Keys
    pageviews: int


@dataclass(frozen=True)
class Plan:
    """A period's pieces: each one's span, the bucket it belongs to and whether it is a whole day."""

    spans: list[Span]
    bucket: list[int]
    whole: list[bool]
    buckets: int


def plan(period: Period) -> Plan:
    spans: list[Span] = []
    owner: list[int] = []
    whole: list[bool] = []
    buckets = period.buckets()
    for i, (a, b) in enumerate(buckets):
        day = a.astimezone(period.zone).date()
        full = (a, b) == (
            local_midnight(day, period.zone),
            local_midnight(day + timedelta(days=1), period.zone),
        )
        if period.interval != "day" or full:
            spans.append((micros(a), micros(b)))
            owner.append(i)
            whole.append(period.interval == "day")
            continue
        at = a
        while at < b:
            nxt = min(at + HOUR, b)
            spans.append((micros(at), micros(nxt)))
            owner.append(i)
            whole.append(False)
            at = nxt
    return Plan(spans, owner, whole, len(buckets))


def read(run: Run, d: Dialect, wanted: dict[Span, list[int]]) -> dict[tuple[int, Span], Piece]:
    """The figures of each span of ``wanted`` for each of its sites, in one query (a site and span
    without events is an empty piece)."""
    if not wanted:
        return {}
    p = Params(d)
    order = list(wanted)
    parts = []
    for k, (low, high) in enumerate(order):
        listed = ", ".join(str(int(s)) for s in sorted(set(wanted[(low, high)])))
        parts.append(
            f"SELECT site_id, {k} AS k, visitor, sum(CASE WHEN {VIEWED} THEN 1 ELSE 0 END) AS pv "
            f"FROM events WHERE site_id IN ({listed}) AND time >= {p.bind(low)} AND time < {p.bind(high)} "
            "GROUP BY site_id, visitor"
        )
    every = " UNION ALL ".join(parts)
    sql = f"SELECT site_id, k, list(visitor), sum(pv) FROM ({every}) AS e GROUP BY site_id, k"
    found = {
        (int(site_id), order[int(k)]): Piece(np.unique(np.array(keys, dtype=np.uint64)), int(pv or 0))  # type: ignore[call-overload]
        for site_id, k, keys, pv in run(sql, p.values)
    }
    for span, site_ids in wanted.items():
        for site_id in site_ids:
            found.setdefault((int(site_id), span), Piece(EMPTY, 0))
    return found


def union(parts: Iterable[Keys]) -> Keys:
    listed = [part for part in parts if len(part)]
    if not listed:
        return EMPTY
    if len(listed) == 1:
        return listed[0]
    return np.unique(np.concatenate(listed))


def count_with(base: Keys, extra: Keys) -> int:
    """Visitors of ``base`` and ``extra`` together (both sorted and unique)."""
    if not len(base) or not len(extra):
        return len(base) + len(extra)
    at = np.minimum(np.searchsorted(base, extra), len(base) - 1)
    return len(base) + int(np.count_nonzero(base[at] != extra))


class Ledger:
    """The overview's pieces of one store's sites in its layer of kept figures, and the spans being
    read in the background."""

    def __init__(self, kept: Kept, background: bool = True) -> None:
        self.kept = kept
        self.background = background
        self._filling = False
        self._lock = threading.Lock()

    def get(self, site_id: int, span: Span, seen: Seen) -> Piece | None:
        found: Piece | None = self.kept.get((site_id, *span, SHAPE), seen)
        return found

    def keep(self, site_id: int, span: Span, piece: Piece, seen: Seen, now: int) -> None:
        if span[1] <= now:
            self.kept.put((site_id, *span, SHAPE), piece, seen, 64 + 8 * len(piece.visitors))

    def days(self, site_id: int, span: Span, seen: Seen, parts: Callable[[], list[Keys]]) -> Keys:
        """The union of a period's whole ended days (``span`` covers them), kept."""
        key = (site_id, *span, UNION)
        found: Keys | None = self.kept.get(key, seen)
        if found is None:
            found = union(parts())
            self.kept.put(key, found, seen, 64 + 8 * len(found))
        return found

    def fill(
        self, run: Run, d: Dialect, wanted: dict[Span, list[int]], seen: dict[int, Seen], now: int
    ) -> None:
        """Reads and keeps the ``wanted`` spans in a thread of its own (one at a time: a request
        arriving meanwhile is answered by the statement)."""
        with self._lock:
            if self._filling:
                return
            self._filling = True

        def work() -> None:
            try:
                spans = list(wanted)
                for at in range(0, len(spans), FILL_SPANS):
                    chunk = {span: wanted[span] for span in spans[at : at + FILL_SPANS]}
                    for (site_id, span), piece in read(run, d, chunk).items():
                        self.keep(site_id, span, piece, seen[site_id], now)
            except Exception:  # answered without it: the next request reads again
                log.exception("the overview's days could not be read in the background")
            finally:
                with self._lock:
                    self._filling = False

        if self.background:
            threading.Thread(target=work, name="overview-days", daemon=True).start()
        else:
            work()


_ledgers: Beside[Ledger] = Beside(Ledger)


def ledger_of(store: object) -> Ledger | None:
    """The overview's pieces of ``store`` (None when it keeps no figures: ``kept_figures.kept_of``)."""
    return _ledgers.of(store)
