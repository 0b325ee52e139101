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

import functools
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
UNION = ("overview-union",)  # the visitors of adjacent ended pieces together
MOST_MISSING = 1 / 3  # more of the whole ended days not kept: the statement answers, a thread fills
FILL_SPANS = 7  # spans read per query in the background
HOUR = timedelta(hours=1)
EMPTY: npt.NDArray[np.uint64] = np.zeros(0, dtype=np.uint64)
Keys = npt.NDArray[np.uint64]
Span = tuple[int, int]  # UTC microseconds, [low, high)
Have = dict[tuple[int, Span], "Piece"]  # the pieces of a request, by site and span
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
    shape: tuple[str, str, str, int]  # its ended pieces' figures together: zone, interval, end


@dataclass(frozen=True)
class Ended:
    """A period's figures of its ended pieces, kept as one: per bucket its visitors and pageviews,
    the visitors of a bucket with a piece going on, and every ended piece's visitors together."""

    visitors: list[int]
    pageviews: list[int]
    partial: dict[int, Keys]
    whole: Keys

    def cost(self) -> int:
        return (
            64 + 16 * len(self.visitors) + 8 * (len(self.whole) + sum(len(k) for k in self.partial.values()))
        )


@dataclass(frozen=True)
class Counted:
    """A period's figures: per bucket (visitors, pageviews), and the whole period's."""

    points: list[tuple[int, int]]
    visitors: int
    pageviews: int


@functools.lru_cache(maxsize=512)
def plan(period: Period) -> Plan:
    """The pieces of ``period`` (sites sharing a time zone share their periods: made once)."""
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
    shape = ("overview-ended", str(period.zone.key), period.interval, micros(period.end))
    return Plan(spans, owner, whole, len(buckets), shape)


def read(run: Run, dialect: Dialect, wanted: dict[Span, list[int]]) -> dict[tuple[int, Span], Piece]:
    """The figures of each span of ``wanted`` for each of its sites, in one query: one scan per
    set of sites asking the same spans (a site and span without events is an empty piece)."""
    if not wanted:
        return {}
    params = Params(dialect)
    order = list(wanted)
    groups: dict[frozenset[int], list[int]] = {}
    for k, span in enumerate(order):
        groups.setdefault(frozenset(int(s) for s in wanted[span]), []).append(k)
    parts = []
    for site_ids, ks in groups.items():
        listed = ", ".join(str(s) for s in sorted(site_ids))
        cases = " ".join(
            f"WHEN time >= {params.bind(order[k][0])} AND time < {params.bind(order[k][1])} THEN {k}"
            for k in ks
        )
        low, high = min(order[k][0] for k in ks), max(order[k][1] for k in ks)
        parts.append(
            f"SELECT site_id, CASE {cases} END AS k, visitor, CASE WHEN {VIEWED} THEN 1 ELSE 0 END AS pv "
            f"FROM events WHERE site_id IN ({listed}) AND time "
            f">= {params.bind(low)} AND time < {params.bind(high)}"
        )
    every = " UNION ALL ".join(parts)
    sql = (
        f"SELECT site_id, k, {dialect.group_list.format(value='visitor')}, sum(pv) FROM (SELECT site_id, k, "
        f"visitor, sum(pv) AS pv FROM ({every}) AS e WHERE k IS NOT NULL GROUP BY site_id, k, visitor) AS v "
        "GROUP BY site_id, k"
    )
    found = {
        (int(site_id), order[int(k)]): Piece(np.unique(np.array(keys, dtype=np.uint64)), int(pv or 0))  # type: ignore[call-overload]
        for site_id, k, keys, pv in run(sql, params.values)
    }
    for span, ids in wanted.items():
        for site_id in ids:
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

    def union_of(self, site_id: int, spans: list[Span], have: Have, seen: Seen) -> Keys:
        """The visitors of adjacent pieces together (kept, keyed by the span they tile)."""
        if len(spans) == 1:
            return have[(site_id, spans[0])].visitors
        if not spans:
            return EMPTY
        key = (site_id, spans[0][0], spans[-1][1], UNION)
        found: Keys | None = self.kept.get(key, seen)
        if found is None:
            found = union(have[(site_id, span)].visitors for span in spans)
            self.kept.put(key, found, seen, 64 + 8 * len(found))
        return found

    def answer(
        self, run: Run, dialect: Dialect, periods: dict[int, tuple[Period, Period]], at: int
    ) -> dict[int, tuple[Counted, Counted]] | None:
        """Each site's figures of its period and the previous one (``periods``) at ``at``, from
        kept figures and the pieces read now (one query: the pieces going on, and those not
        kept); None when too many whole days are not kept (a thread reads them)."""
        seen = self.kept.sync_many(list(periods))
        plans = {site_id: (plan(a), plan(b)) for site_id, (a, b) in periods.items()}
        ended: dict[tuple[int, int], Ended | None] = {}
        have: Have = {}
        wanted: dict[Span, list[int]] = {}
        days = missing = 0
        for site_id, both in plans.items():
            for which, made in enumerate(both):
                done = _done(made, at)
                e = (
                    self.kept.get((site_id, made.spans[0][0], done, made.shape), seen[site_id])
                    if done
                    else None
                )
                ended[(site_id, which)] = e
                for span, whole in zip(made.spans, made.whole, strict=True):
                    if span[1] > at:
                        wanted.setdefault(span, []).append(site_id)
                        continue
                    if e is not None:
                        continue
                    days += whole
                    found = self.get(site_id, span, seen[site_id])
                    if found is not None:
                        have[(site_id, span)] = found
                        continue
                    wanted.setdefault(span, []).append(site_id)
                    missing += whole
        if missing > MOST_MISSING * days and self.background:
            self.fill(run, dialect, {span: ids for span, ids in wanted.items() if span[1] <= at}, seen, at)
            return None
        for (site_id, span), piece in read(run, dialect, wanted).items():
            have[(site_id, span)] = piece
            self.keep(site_id, span, piece, seen[site_id], at)
        out: dict[int, tuple[Counted, Counted]] = {}
        for site_id, (current, previous) in plans.items():
            counted = []
            for which, made in enumerate((current, previous)):
                e = ended[(site_id, which)] or self._ended(site_id, made, have, seen[site_id], at)
                counted.append(_counted(site_id, made, e, have, at))
            out[site_id] = (counted[0], counted[1])
        return out

    def _ended(self, site_id: int, made: Plan, have: Have, seen: Seen, at: int) -> Ended:
        """The figures of a period's ended pieces (kept as one)."""
        ended: list[list[Span]] = [[] for _ in range(made.buckets)]
        going = [False] * made.buckets
        days: list[Span] = []
        hours: list[Span] = []
        pageviews = [0] * made.buckets
        for span, i, whole in zip(made.spans, made.bucket, made.whole, strict=True):
            if span[1] > at:
                going[i] = True
                continue
            ended[i].append(span)
            (days if whole else hours).append(span)
            pageviews[i] += have[(site_id, span)].pageviews
        together = [self.union_of(site_id, spans, have, seen) for spans in ended]
        partial = {i: keys for i, keys in enumerate(together) if going[i]}
        every = union([self.union_of(site_id, days, have, seen), self.union_of(site_id, hours, have, seen)])
        e = Ended([len(keys) for keys in together], pageviews, partial, every)
        done = _done(made, at)
        if done:
            self.kept.put((site_id, made.spans[0][0], done, made.shape), e, seen, e.cost())
        return e

    def fill(
        self, run: Run, dialect: Dialect, wanted: dict[Span, list[int]], seen: dict[int, Seen], now: int
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
                    for (site_id, span), piece in read(run, dialect, chunk).items():
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


def _done(made: Plan, at: int) -> int:
    """The end of a period's last ended piece (0: none ended)."""
    return max((span[1] for span in made.spans if span[1] <= at), default=0)


def _counted(site_id: int, made: Plan, e: Ended, have: Have, at: int) -> Counted:
    """A period's figures: its ended pieces' (``e``) with those of its pieces going on."""
    points = list(zip(e.visitors, e.pageviews, strict=True))
    going: dict[int, list[Span]] = {}
    for span, i in zip(made.spans, made.bucket, strict=True):
        if span[1] > at:
            going.setdefault(i, []).append(span)
    for i, spans in going.items():
        keys = union(have[(site_id, span)].visitors for span in spans)
        viewed = sum(have[(site_id, span)].pageviews for span in spans)
        points[i] = (count_with(e.partial.get(i, EMPTY), keys), points[i][1] + viewed)
    now = union(have[(site_id, span)].visitors for spans in going.values() for span in spans)
    return Counted(points, count_with(e.whole, now), sum(pv for _, pv in points))


_ledgers: Beside[Ledger] = Beside(Ledger)


def ledger_of(store: object) -> Ledger | None:
    """The overview's pieces of ``store`` (None when it keeps no figures: ``kept_figures.kept_of``)."""
    return _ledgers.of(store)
