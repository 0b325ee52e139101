"""The time series' complete spans (days, or hours) of a big period, kept between requests: each
span's figures (visitors, visits, pageviews, bounces, duration), so that a 30-day chart and its
comparison read today's span and the spans that changed instead of every span's visits and
crossing events (``timeseries._estimated``), as the Goals panel keeps its days
(``reports.goal_days``).

What is kept is derived from the store and nothing else, and checked against it at every request,
never kept in step by hand:

- A span's figures are a function of the events in ``[start - LOOK_BACK, end + LOOK_BACK)`` (UTC
  microseconds): its own events, and every event of the visits that started in it (a visit's
  events reach at most ``LOOK_BACK`` past its start, the feed's look-back; a late event before the
  span can move a visit's start out of it), and of how its visitors are counted (the bitmap's SQL,
  which a request sizes from its period's visits: another period may ask for another size).
- Each kept span notes the site's newest event id and event count (``basis``) read before its rows
  were read. At each request one query reads them again and, per hour, the newest id of the site's
  events fed since the oldest basis. A kept span stays when no event fed after its basis falls in
  its window (ids reach the store in order, so a late event has a newer id) and the site's count
  is its basis's plus the events fed since (else events were deleted: an erasure, a retention cut:
  every span of the site goes; a newest id below a basis: the store was rebuilt). A span that
  stays takes the new snapshot as basis; a span is kept only when the store's watermark did not
  move while it was read.
- Only spans that ended before the request are kept; the span still going on is read every time.

Unfiltered reports on the embedded store only (ClickHouse counts them exactly and fast). It lives
in the server's memory (one ``Ledger`` per store, at most ``MOST`` figures in all): lost with the
process. The pages and custom events tables keep each ended day's count per value the same way
(``tables``: their ranking summed over the kept days), for days of at most ``MOST_VALUES`` values.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter or an integer)
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from sightline.reports.per_store import PerStore
from sightline.reports.queries import Run, Span
from sightline.store.epoch import micros

HOUR = 3_600_000_000  # microseconds
LOOK_BACK = 2 * 86_400_000_000  # the feed's: a visit's events reach at most this far from its start
MOST = 500_000  # figures kept (a span of the series holds 6, a day's table one per value)
MOST_VALUES = 2_000  # a span whose figures are more (a table's values) is not kept
MAX_BASES = 8  # kept spans of more distinct snapshots than this: the oldest go
Key = tuple[int, int, int, str]  # site, span start, span end, the visitors' SQL
Figures = dict[str, int]


class Ledger:
    """The kept spans of one store's sites, least recently used first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[Key, tuple[tuple[int, int], Figures]] = OrderedDict()
        self._size = 0  # figures kept in all

    def __len__(self) -> int:
        return len(self._kept)

    def series(
        self,
        run: Run,
        site_id: int,
        spans: Sequence[Span],
        counted: str,
        read: Callable[[Sequence[Span]], list[Figures]],
    ) -> list[Figures]:
        """Each span's figures: kept ones as kept, the others ``read`` (a run of adjacent spans at
        a time) and kept when the span has ended. ``counted``: how the request counts visitors."""
        basis, watermark = self.check(run, site_id)
        now = micros(datetime.now(UTC))
        edges = [(micros(a), micros(b)) for a, b in spans]
        out: list[Figures | None] = []
        with self._lock:
            for a, b in edges:
                found = self._kept.get((site_id, a, b, counted))
                if found is not None:
                    self._kept.move_to_end((site_id, a, b, counted))
                out.append(dict(found[1]) if found is not None else None)
        i, read_now = 0, []
        while i < len(spans):
            if out[i] is not None:
                i += 1
                continue
            j = i
            while j < len(spans) and out[j] is None:
                j += 1
            for k, figures in enumerate(read(spans[i:j]), start=i):
                out[k] = figures
                if edges[k][1] <= now:
                    read_now.append(k)
            i = j
        # Kept only when nothing was written while they were read: a read that saw an event fed
        # after the basis could otherwise keep it unseen by the next check once that event is
        # deleted (an erasure).
        if read_now and _watermark(run) == watermark:
            for k in read_now:
                self._keep((site_id, *edges[k], counted), basis, out[k] or {})
        return [figures for figures in out if figures is not None]

    def _keep(self, key: Key, basis: tuple[int, int], figures: Figures) -> None:
        if len(figures) > MOST_VALUES:
            return
        with self._lock:
            old = self._kept.pop(key, None)
            self._size -= len(old[1]) if old is not None else 0
            self._kept[key] = (basis, dict(figures))
            self._size += len(figures)
            while self._size > MOST and self._kept:
                self._size -= len(self._kept.popitem(last=False)[1][1])

    def check(self, run: Run, site_id: int) -> tuple[tuple[int, int], int]:
        """Drops the site's kept spans that the store no longer matches; returns the snapshot read
        now, ``(the site's newest event id, its event count)``, and the store's watermark. (The
        newest id, not the watermark, tells the events fed since: a store written by other means
        than the feed, such as the benchmarks' generated one, holds ids above its watermark.)"""
        with self._lock:
            bases = sorted({basis for key, (basis, _) in self._kept.items() if key[0] == site_id})
            for key in [key for key, (basis, _) in self._kept.items() if key[0] == site_id]:
                if self._kept[key][0] not in bases[-MAX_BASES:]:
                    self._size -= len(self._kept.pop(key)[1])
            bases = bases[-MAX_BASES:]
        since = min((m for m, _ in bases), default=None)
        site = "(SELECT [max(id), count(*)] FROM events WHERE site_id = $site)"
        watermark = "(SELECT max(value) FROM store_state WHERE name = 'watermark')"
        if since is None:
            row = run(f"SELECT {site}, {watermark}", {"site": site_id})[0]
            return (int(row[0][0] or 0), int(row[0][1] or 0)), int(row[1] or 0)
        fed = ", ".join(f"count(*) FILTER (WHERE id > {m}) AS n{i}" for i, (m, _) in enumerate(bases))
        row = run(
            f"SELECT {site}, {watermark}, "
            f"(SELECT list([h, m]) FROM (SELECT time // {HOUR} AS h, max(id) AS m FROM events "
            "WHERE site_id = $site AND id > $since GROUP BY h)), "
            f"(SELECT [{', '.join(f'n{i}' for i in range(len(bases)))}] FROM (SELECT {fed} FROM events "
            "WHERE site_id = $site AND id > $since))",
            {"site": site_id, "since": since},
        )[0]
        newest, count = int(row[0][0] or 0), int(row[0][1] or 0)
        hours = [(int(h), int(m)) for h, m in row[2] or []]
        fed_since = dict(zip(bases, [int(n or 0) for n in row[3] or []], strict=False))

        def stale(key: Key, basis: tuple[int, int]) -> bool:
            m, n = basis
            if newest < m or count != n + fed_since.get(basis, -1):
                return True
            low, high = key[1] - LOOK_BACK, key[2] + LOOK_BACK
            return any(last > m and h * HOUR < high and (h + 1) * HOUR > low for h, last in hours)

        with self._lock:
            for key in [
                key for key, (basis, _) in self._kept.items() if key[0] == site_id and stale(key, basis)
            ]:
                self._size -= len(self._kept.pop(key)[1])
            for key, (_, figures) in list(self._kept.items()):
                if key[0] == site_id:
                    self._kept[key] = ((newest, count), figures)
        return (newest, count), int(row[1] or 0)


def _watermark(run: Run) -> int:
    row = run("SELECT max(value) FROM store_state WHERE name = 'watermark'", {})
    return int(row[0][0] or 0) if row else 0


ledger_of = PerStore(Ledger)  # the kept spans of a store (one per running server)
