"""The realtime report, kept between requests: what a site's last 30 minutes of events add up to,
so that a dashboard polling it reads only the events fed since its last request instead of every
event of the window (at 2 million recent events the two plain queries cost the store process
about 170 ms of CPU per request, on the cores ingest runs on: docs/performance.md).

What is kept per site is derived from the store's events with a time from ``horizon`` (a minute's
start) on and an id up to ``watermark``, and is exact:

- per minute: its distinct visitors (a set of visitor keys), events and pageviews;
- per second: pageviews (the window's count, with its first part-second read at each request);
- per visitor: the time of its latest event; per page and visitor: the time of its latest
  pageview (the window's visitors and pages are those whose latest time is in it).

It is a running sum, not a figure of a span, so it is kept beside the one layer of kept figures
(``reports.kept_figures``) and dropped by the same signal: each request asks the layer's ``sync`` for the
site, which answers the store's watermark at its latest feed step and the site's latest change
that deleted or replaced rows (an erasure, a retention cut, a deleted site, the self-check's
refill, a rebuild; ``store.changes``). After such a change, or in another epoch of the store
process, everything is read again; otherwise the request folds in the site's events fed since
(ids above the kept watermark up to the one answered: the log's positions never go back, so an
event fed later, a late one included, has a larger id). A request for an older moment than the
kept state was cut to (the spike alert's own clock) is answered by the plain queries.

Only the embedded DuckDB store keeps it (its queries run on the cores ingest uses); on ClickHouse
the plain queries answer. It lives in the server's memory: at most ``MAX_SITES`` sites and
``MAX_ENTRIES`` kept pairs in all (about 150 bytes each with their expiry heaps; the least recently
asked sites go first, and a site bigger than that alone is answered by the plain queries).
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter or an integer)
from __future__ import annotations

import heapq
import threading
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sightline.reports import queries
from sightline.reports.kept_figures import Beside, Kept, Seen
from sightline.reports.queries import Run
from sightline.store.dialects import Dialect
from sightline.store.epoch import micros
from sightline.store.schema import PAGEVIEW

MINUTE = 60_000_000  # microseconds
SECOND = 1_000_000
MAX_SITES = 64
MAX_ENTRIES = 500_000  # kept (minute, visitor) and (page, visitor) pairs of all sites together
TOO_BIG_RETRY = 600.0  # seconds before a site over MAX_ENTRIES is kept again
Window = tuple[datetime, datetime]  # the realtime window's events: from, until (exclusive)


@dataclass
class Answer:
    """The realtime figures (``queries.realtime`` and ``queries.per_minute``'s shapes)."""

    visitors: int
    pageviews: int
    pages: list[dict[str, Any]]
    minutes: list[dict[str, int]]


@dataclass
class _Minute:
    visitors: set[int] = field(default_factory=set)
    pageviews: int = 0


@dataclass
class _Site:
    horizon: int  # the earliest minute kept (µs): events before it are not
    watermark: int = 0  # the store's watermark the kept figures were read up to
    seen: tuple[str, int] = ("", -1)  # the store's epoch and change number they are current at
    pruned: int = 0  # the window start the latest times were last cut to
    newest: int = 0  # the latest event time kept
    edge_pageviews: int = 0  # pageviews in the window's first part-second, read at each request
    minutes: dict[int, _Minute] = field(default_factory=dict)  # minute start (µs) -> its figures
    seconds: Counter[int] = field(default_factory=Counter)  # second (µs // SECOND) -> pageviews
    latest: dict[int, int] = field(default_factory=dict)  # visitor -> its latest event's time
    seen_heap: list[tuple[int, int]] = field(default_factory=list)  # (time, visitor), to expire
    pages: dict[str, dict[int, int]] = field(default_factory=dict)  # path -> visitor -> latest time
    pages_heap: list[tuple[int, str, int]] = field(default_factory=list)  # (time, path, visitor)
    lock: threading.Lock = field(default_factory=threading.Lock)
    size: int = 0  # ``entries`` after its last request (read by other requests' threads)

    @property
    def entries(self) -> int:
        return sum(len(m.visitors) for m in self.minutes.values()) + sum(len(p) for p in self.pages.values())


class Ledger:
    """The kept realtime figures of one store's sites, least recently asked first."""

    def __init__(self, kept: Kept) -> None:
        self.kept = kept
        self._sites: OrderedDict[int, _Site] = OrderedDict()
        self._too_big: dict[int, float] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sites)

    def answer(
        self, run: Run, dialect: Dialect, site_id: int, window: Window, first: datetime, minutes: int
    ) -> Answer:
        """Visitors, pageviews and top pages of the events in ``window``, and each of ``minutes``
        whole minutes from ``first`` (a minute's start, before the window), as ``plain`` counts them."""
        if dialect.name != "duckdb":
            return plain(run, dialect, site_id, window, first, minutes)
        since, start = micros(window[0]), micros(first)
        with self._lock:
            if self._too_big.get(site_id, 0.0) > time.monotonic():
                return plain(run, dialect, site_id, window, first, minutes)
            site = self._sites.get(site_id)
            if site is None:
                site = self._sites[site_id] = _Site(horizon=start, pruned=start)
                while len(self._sites) > MAX_SITES:
                    self._sites.popitem(last=False)
            self._sites.move_to_end(site_id)
        with site.lock:
            if start < site.horizon or since < site.pruned:  # an older moment than kept: not kept
                return plain(run, dialect, site_id, window, first, minutes)
            _advance(site, start)
            seen = self.kept.sync(site_id)
            if seen.epoch != site.seen[0] or seen.removed > site.seen[1]:  # rows deleted or replaced
                if not _fits(run, site_id, start, seen):
                    return self._not_kept(run, dialect, site_id, window, first, minutes)
                site = self._restart(site_id, start)
                with site.lock:
                    _read(run, site_id, site, since, seen)
                    return self._answered(run, dialect, site_id, site, window, first, minutes)
            _read(run, site_id, site, since, seen)
            return self._answered(run, dialect, site_id, site, window, first, minutes)

    def _answered(
        self,
        run: Run,
        dialect: Dialect,
        site_id: int,
        site: _Site,
        window: Window,
        first: datetime,
        minutes: int,
    ) -> Answer:
        start, end = micros(first), micros(first) + minutes * MINUTE
        if site.newest >= min(end, micros(window[1])):  # events after the window (a past moment)
            return plain(run, dialect, site_id, window, first, minutes)
        answer = _figures(site, micros(window[0]), start, minutes)
        site.size = site.entries
        self._bound(site_id, site)
        return answer

    def _not_kept(
        self, run: Run, dialect: Dialect, site_id: int, window: Window, first: datetime, minutes: int
    ) -> Answer:
        """Answers a site too big to keep by the plain queries, and keeps nothing of it for a while."""
        with self._lock:
            self._sites.pop(site_id, None)
            self._too_big[site_id] = time.monotonic() + TOO_BIG_RETRY
        return plain(run, dialect, site_id, window, first, minutes)

    def _bound(self, site_id: int, site: _Site) -> None:
        """Keeps the kept pairs of all sites under ``MAX_ENTRIES``, the least recently asked going
        first; a site over it alone is not kept for a while."""
        with self._lock:
            if site.size > MAX_ENTRIES:
                if self._sites.get(site_id) is site:
                    del self._sites[site_id]
                self._too_big[site_id] = time.monotonic() + TOO_BIG_RETRY
                return
            total = sum(kept.size for kept in self._sites.values())
            while total > MAX_ENTRIES and len(self._sites) > 1:
                oldest, kept = next(iter(self._sites.items()))
                if oldest == site_id:
                    break
                del self._sites[oldest]
                total -= kept.size

    def _restart(self, site_id: int, start: int) -> _Site:
        """A fresh state for a site whose kept one no longer matches the store."""
        site = _Site(horizon=start, pruned=start)
        with self._lock:
            self._sites[site_id] = site
        return site


def plain(run: Run, dialect: Dialect, site_id: int, window: Window, first: datetime, minutes: int) -> Answer:
    """The figures straight from the window's events (two queries over all of them)."""
    chart = queries.per_minute(run, dialect, site_id, first, minutes)
    found = queries.realtime(run, dialect, site_id, *window)
    return Answer(found["visitors"], found["pageviews"], found["pages"], chart)


def _advance(site: _Site, first: int) -> None:
    """Forgets the minutes before ``first`` (the chart moved on)."""
    if first <= site.horizon:
        return
    site.horizon = first
    for start in [m for m in site.minutes if m < first]:
        del site.minutes[start]
    for second in [s for s in site.seconds if s * SECOND < first]:
        del site.seconds[second]


def _fits(run: Run, site_id: int, start: int, seen: Seen) -> bool:
    """Whether a site's window is small enough to read into the ledger: one with more events than
    ``MAX_ENTRIES`` is taken as too big without reading it. Its kept pairs could be fewer (many
    events of one visitor in one minute), but reading and folding a million events costs the server
    seconds only to find them too many, where counting them costs milliseconds and the plain
    queries answer such a window in about 0.1 s (a million events, measured at 100 M)."""
    rows = run(
        "SELECT count(*) FROM events WHERE site_id = $site AND time >= $horizon AND id <= $upto",
        {"site": site_id, "horizon": start, "upto": seen.watermark},
    )
    return int(rows[0][0]) <= MAX_ENTRIES


def _read(run: Run, site_id: int, site: _Site, since: int, seen: Seen) -> None:
    """Folds in the site's events fed since the kept watermark, up to the one ``seen`` answered."""
    after = site.watermark
    upto = max(after, seen.watermark)
    edge = -(-since // SECOND) * SECOND  # the window's first whole second
    rows = run(
        "WITH fed AS MATERIALIZED (SELECT time, visitor, name, path FROM events WHERE site_id = $site "
        "AND id > $after AND id <= $upto AND time >= $horizon) "
        "SELECT 0 AS kind, 0 AS k, NULL::UBIGINT AS visitor, NULL AS path, 0 AS t, "
        f"(SELECT count(*) FROM events WHERE site_id = $site AND name = '{PAGEVIEW}' "
        "AND time >= $since AND time < $edge AND id <= $upto) AS pv "
        "UNION ALL "
        f"SELECT 1, time // {MINUTE}, visitor, NULL, max(time), "
        f"count(*) FILTER (WHERE name = '{PAGEVIEW}') FROM fed GROUP BY 2, 3 "
        "UNION ALL "
        f"SELECT 2, time // {SECOND}, NULL, NULL, 0, count(*) FROM fed WHERE name = '{PAGEVIEW}' "
        "GROUP BY 2 "
        "UNION ALL "
        f"SELECT 3, 0, visitor, path, max(time), 0 FROM fed WHERE name = '{PAGEVIEW}' GROUP BY 3, 4",
        {
            "site": site_id,
            "horizon": site.horizon,
            "after": after,
            "upto": upto,
            "since": since,
            "edge": edge,
        },
    )
    head = next(r for r in rows if r[0] == 0)
    site.watermark, site.edge_pageviews = upto, int(head[5])
    site.seen = (seen.epoch, seen.number)
    for kind, slot, visitor, path, seen_at, pv in rows:
        if kind == 1:
            minute = site.minutes.get(slot * MINUTE)
            if minute is None:
                minute = site.minutes[slot * MINUTE] = _Minute()
            minute.visitors.add(visitor)
            minute.pageviews += pv
            _latest(site.latest, site.seen_heap, visitor, seen_at, (seen_at, visitor))
            site.newest = max(site.newest, seen_at)
        elif kind == 2:
            site.seconds[slot] += pv
        elif kind == 3:
            _latest(
                site.pages.setdefault(path, {}), site.pages_heap, visitor, seen_at, (seen_at, path, visitor)
            )


def _latest(
    latest: dict[int, int], heap: list[Any], visitor: int, seen_at: int, entry: tuple[Any, ...]
) -> None:
    if latest.get(visitor, -1) < seen_at:
        latest[visitor] = seen_at
        heapq.heappush(heap, entry)


def _figures(site: _Site, since: int, first: int, minutes: int) -> Answer:
    _expire(site, since)
    edge = -(-since // SECOND)
    pageviews = site.edge_pageviews + sum(n for s, n in site.seconds.items() if s >= edge)
    pages = sorted(
        ((len(v), p) for p, v in site.pages.items() if v), key=lambda entry: (-entry[0], entry[1])
    )[:10]
    chart = []
    for offset in range(minutes):
        minute = site.minutes.get(first + offset * MINUTE)
        chart.append(
            {"visitors": len(minute.visitors), "pageviews": minute.pageviews}
            if minute
            else {"visitors": 0, "pageviews": 0}
        )
    return Answer(len(site.latest), pageviews, [{"value": p, "visitors": n} for n, p in pages], chart)


def _expire(site: _Site, since: int) -> None:
    """Forgets the visitors and page views whose latest time is before ``since``."""
    site.pruned = since
    seen, heap = site.latest, site.seen_heap
    while heap and heap[0][0] < since:
        seen_at, visitor = heapq.heappop(heap)
        if seen.get(visitor) == seen_at:
            del seen[visitor]
    if len(heap) > 2 * len(seen) + 1024:  # superseded entries: build it again from what is live
        site.seen_heap = [(t, v) for v, t in seen.items()]
        heapq.heapify(site.seen_heap)
    pages, heap3 = site.pages, site.pages_heap
    while heap3 and heap3[0][0] < since:
        seen_at, path, visitor = heapq.heappop(heap3)
        viewers = pages.get(path)
        if viewers is not None and viewers.get(visitor) == seen_at:
            del viewers[visitor]
            if not viewers:
                del pages[path]
    live = sum(len(v) for v in pages.values())
    if len(heap3) > 2 * live + 1024:
        site.pages_heap = [(t, p, v) for p, viewers in pages.items() for v, t in viewers.items()]
        heapq.heapify(site.pages_heap)


_ledgers: Beside[Ledger] = Beside(Ledger)


def ledger_of(store: object) -> Ledger | None:
    """The kept realtime figures of ``store`` (None when it keeps no figures: ``kept.kept_of``)."""
    return _ledgers.of(store)
