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

The pieces a request does not find kept (every piece, for the first request after a start) are
first asked of the embedded store, which keeps whole ended days and each period's whole days
together beside its file (``store.kept_days``: the keys of a day are read only when a union of it
is made again), and the rest read in the request, in one query (``overview_pieces.read``).
Requests take turns, so one arriving during that first read waits for it and then finds every
day kept. A store without change records keeps nothing (``reports.overview`` answers with its
statement).
"""

from __future__ import annotations

import bisect
import functools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

import numpy as np

from sightline.reports.kept_figures import Beside, Kept, Seen
from sightline.reports.overview_pieces import (
    EMPTY,
    Keys,
    Piece,
    Span,
    count_with,
    events_of,
    missing,
    read,
    union,
)
from sightline.reports.period import Period, local_midnight
from sightline.store.dialects import Dialect
from sightline.store.epoch import micros

__all__ = ["Seen"]

SHAPE = ("overview",)  # a piece's figures
UNION = ("overview-union",)  # the visitors of adjacent ended pieces together
HOUR = timedelta(hours=1)
# Events one query of a request's pieces reads, at most: the store holds a row per (site, hour,
# visitor) of them (32 bytes) until it sends them, within its memory (``--store-memory-mb``). A
# request reading more than ``COUNT_FROM`` of ended spans (µs, all sites together: more than the
# hour going on) counts its sites' events first and reads them in parts of at most this many.
READ_MOST = 8_000_000
COUNT_FROM = 2 * 86_400_000_000
Have = dict[tuple[int, Span], Piece]  # the pieces of a request, by site and span


class Store(Protocol):
    """What the overview asks of the analytics store."""

    dialect: Dialect

    def query(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]: ...

    def columns(self, sql: str, params: dict[str, Any]) -> dict[str, Any]: ...


log = logging.getLogger("sightline.reports")


@dataclass(frozen=True)
class Plan:
    """A period's pieces in time order: each one's span, the bucket it belongs to and whether it
    is a whole day (``ends``: each span's end, to find the pieces going on by a binary search)."""

    spans: list[Span]
    bucket: list[int]
    whole: list[bool]
    buckets: int
    shape: tuple[str, str, str, int]  # its ended pieces' figures together: zone, interval, end
    ends: list[int]

    def ended(self, at: int) -> int:
        """How many of the pieces ended by ``at`` (the first ones: the others are going on)."""
        return bisect.bisect_right(self.ends, at)


@dataclass(frozen=True)
class Ended:
    """A period's figures of its ended pieces, kept as one: per bucket its visitors and pageviews,
    the visitors of a bucket with a piece going on, and every ended piece's visitors together: the
    union of its whole days (the one kept as such: not copied), that of its hours, and how many
    they are together."""

    visitors: list[int]
    pageviews: list[int]
    partial: dict[int, Keys]
    days: Keys
    hours: Keys
    together: int

    def cost(self) -> int:
        """Its bytes but the days' union's (kept, and counted, on its own)."""
        return (
            64 + 16 * len(self.visitors) + 8 * (len(self.hours) + sum(len(k) for k in self.partial.values()))
        )

    def count_with(self, extra: Keys) -> int:
        """Every ended piece's visitors and ``extra``'s (sorted, unique) together."""
        if not len(extra):
            return self.together
        return self.together + int(np.count_nonzero(missing(self.days, extra) & missing(self.hours, extra)))


@dataclass(frozen=True)
class Counted:
    """A period's figures: per bucket (visitors, pageviews), and the whole period's."""

    points: list[tuple[int, int]]
    visitors: int
    pageviews: int


@functools.lru_cache(maxsize=512)
def plan(period: Period, going: bool) -> Plan:
    """The pieces of ``period`` (sites sharing a time zone share their periods: made once).
    ``going``: the period has not ended, so its last day is cut in hours even when it reaches
    the next midnight (a period that reaches now ends at the next hour: in the day's last hour,
    today is a whole day, whose ended hours are kept as those of any other hour of the day)."""
    spans: list[Span] = []
    owner: list[int] = []
    whole: list[bool] = []
    buckets = period.buckets()
    for number, (start, end) in enumerate(buckets):
        day = start.astimezone(period.zone).date()
        full = (start, end) == (
            local_midnight(day, period.zone),
            local_midnight(day + timedelta(days=1), period.zone),
        ) and not (going and number == len(buckets) - 1)
        if period.interval != "day" or full:
            spans.append((micros(start), micros(end)))
            owner.append(number)
            whole.append(period.interval == "day")
            continue
        at = start
        while at < end:
            nxt = min(at + HOUR, end)
            spans.append((micros(at), micros(nxt)))
            owner.append(number)
            whole.append(False)
            at = nxt
    shape = ("overview-ended", str(period.zone.key), period.interval, micros(period.end))
    return Plan(spans, owner, whole, len(buckets), shape, [high for _, high in spans])


class Ledger:
    """The overview's pieces of one store's sites in its layer of kept figures."""

    def __init__(self, kept: Kept) -> None:
        self.kept = kept
        self.read_most = READ_MOST
        self._lock = threading.Lock()  # one request at a time: the next finds what one read

    def get(self, site_id: int, span: Span, seen: Seen) -> Piece | None:
        found: Piece | None = self.kept.get((site_id, *span, SHAPE), seen)
        return found

    def keep(self, site_id: int, span: Span, piece: Piece, seen: Seen, now: int) -> None:
        if span[1] <= now:
            self.kept.put((site_id, *span, SHAPE), piece, seen, 64 + 8 * piece.count)

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
        self,
        store: Store,
        periods: dict[int, tuple[Period, Period]],
        at: int,
        most: int | None = None,
        between: Callable[[], object] | None = None,
    ) -> dict[int, tuple[Counted, Counted]]:
        """Each site's figures of its period and the previous one (``periods``) at ``at``, from
        kept figures and the pieces read now (one query: the pieces going on, and those not
        kept; in parts of at most ``most`` events, default ``read_most``, calling ``between``
        between two parts). Requests take turns: a request arriving while the first one after
        a start reads every day waits for it, then reads the hour going on only."""
        with self._lock:
            return self._answer(store, periods, at, most or self.read_most, between)

    def _answer(
        self,
        store: Store,
        periods: dict[int, tuple[Period, Period]],
        at: int,
        most: int,
        between: Callable[[], object] | None,
    ) -> dict[int, tuple[Counted, Counted]]:
        seen = self.kept.sync_many(list(periods))
        plans = {
            site_id: (plan(a, at < micros(a.end)), plan(b, at < micros(b.end)))
            for site_id, (a, b) in periods.items()
        }
        ended: dict[tuple[int, int], Ended | None] = {}
        have: Have = {}
        wanted: dict[Span, list[int]] = {}
        days: set[tuple[int, Span]] = set()  # whole ended days not kept here (its file may hold them)
        for site_id, both in plans.items():
            for which, made in enumerate(both):
                done = _done(made, at)
                kept_ended = (
                    self.kept.get((site_id, made.spans[0][0], done, made.shape), seen[site_id])
                    if done
                    else None
                )
                ended[(site_id, which)] = kept_ended
                count = made.ended(at)
                for span in made.spans[count:]:  # going on: read every time
                    wanted.setdefault(span, []).append(site_id)
                if kept_ended is not None:
                    continue
                for span, whole in zip(made.spans[:count], made.whole[:count], strict=True):
                    found = self.get(site_id, span, seen[site_id])
                    if found is not None:
                        have[(site_id, span)] = found
                        continue
                    if whole:
                        days.add((site_id, span))
                    wanted.setdefault(span, []).append(site_id)
        unions = {
            (site_id, joined)
            for (site_id, which), kept_ended in ended.items()
            if kept_ended is None
            and (joined := _days_span(plans[site_id][which], at)) is not None
            and self.kept.get((site_id, *joined, UNION), seen[site_id]) is None
        }
        stored = self._stored(store, days, unions, wanted, have, seen, at)
        days -= stored
        unions -= stored
        for number, part in enumerate(self._parts(store, wanted, at, most)):
            if number and between is not None:
                between()
            read_days: list[tuple[int, Span, Piece]] = []
            for (site_id, span), piece in read(store.columns, store.dialect, part).items():
                have[(site_id, span)] = piece
                self.keep(site_id, span, piece, seen[site_id], at)
                if (site_id, span) in days:
                    read_days.append((site_id, span, piece))
            _store_days(store, read_days, seen)
        out: dict[int, tuple[Counted, Counted]] = {}
        united: list[tuple[int, Span, Piece]] = []  # whole days' unions made now: for the store's file
        for site_id, (current, previous) in plans.items():
            counted = []
            for which, made in enumerate((current, previous)):
                figures = ended[(site_id, which)] or self._ended(
                    site_id, made, have, seen[site_id], at, united
                )
                counted.append(_counted(site_id, made, figures, have, at))
            out[site_id] = (counted[0], counted[1])
        _store_days(store, [(s, span, piece) for s, span, piece in united if (s, span) in unions], seen)
        return out

    def _stored(
        self,
        store: Store,
        days: set[tuple[int, Span]],
        unions: set[tuple[int, Span]],
        wanted: dict[Span, list[int]],
        have: Have,
        seen: dict[int, Seen],
        at: int,
    ) -> set[tuple[int, Span]]:
        """The whole ended ``days`` the store keeps beside its file (``store.kept_days``), put in
        ``have`` and kept here, and no longer ``wanted``: after a restart, a day's figures are
        read from its row instead of its events; and of ``unions`` (a period's whole ended days
        together) the visitors, kept as their union (``union_of``)."""
        kept_days = getattr(store, "kept_days", None)
        if kept_days is None or not (days or unions):
            return set()
        found: set[tuple[int, Span]] = set()
        joined: set[tuple[int, Span]] = set()
        for site_id, low, high, pageviews, keys in kept_days(
            sorted((s, a, b) for s, (a, b) in days | unions)
        ):
            span = (int(low), int(high))
            if (site_id, span) not in days:  # a period's whole days together
                united = keys.read()  # a file gone or damaged: the union is made again from the days
                if united is not None:
                    self.kept.put((site_id, *span, UNION), united, seen[site_id], 64 + 8 * len(united))
                    joined.add((site_id, span))
                continue
            piece = Piece(None, int(pageviews), keys.count, _loaded(store, site_id, span, keys))
            have[(site_id, span)] = piece
            self.keep(site_id, span, piece, seen[site_id], at)
            found.add((site_id, span))
        gone: dict[Span, set[int]] = {}
        for site_id, span in found:
            gone.setdefault(span, set()).add(site_id)
        for span, site_ids in gone.items():
            if left := [site_id for site_id in wanted[span] if site_id not in site_ids]:
                wanted[span] = left
            else:
                del wanted[span]
        return found | joined

    def _parts(
        self, store: Store, wanted: dict[Span, list[int]], at: int, most: int
    ) -> list[dict[Span, list[int]]]:
        """``wanted`` in parts of at most ``most`` events (sites together in the order of
        their ids, a bigger site's spans cut in runs of time), when it reads more than the hour
        going on (``COUNT_FROM``); else whole."""
        ended = sum((high - low) * len(ids) for (low, high), ids in wanted.items() if high <= at)
        if ended <= COUNT_FROM:
            return [wanted]
        counts = events_of(store.query, store.dialect, wanted)
        spans_of: dict[int, list[Span]] = {}
        for span in sorted(wanted):
            for site_id in wanted[span]:
                spans_of.setdefault(int(site_id), []).append(span)
        parts: list[dict[Span, list[int]]] = [{}]
        filled = 0
        for site_id in sorted(spans_of):
            count, spans = counts.get(site_id, 0), spans_of[site_id]
            runs = max(1, -(-count // most))  # a site over the bound: runs of its spans
            for number in range(runs):
                share = count // runs
                if filled and filled + share > most:
                    parts.append({})
                    filled = 0
                for span in spans[len(spans) * number // runs : len(spans) * (number + 1) // runs]:
                    parts[-1].setdefault(span, []).append(site_id)
                filled += share
        if len(parts) > 1:
            log.info("the overview reads %d events in %d parts", sum(counts.values()), len(parts))
        return [part for part in parts if part]

    def _ended(
        self, site_id: int, made: Plan, have: Have, seen: Seen, at: int, united: list[tuple[int, Span, Piece]]
    ) -> Ended:
        """The figures of a period's ended pieces (kept as one); the union of its whole days, with
        their pageviews, is added to ``united``."""
        ended: list[list[Span]] = [[] for _ in range(made.buckets)]
        going = [False] * made.buckets
        days: list[Span] = []
        hours: list[Span] = []
        pageviews = [0] * made.buckets
        for span, number, whole in zip(made.spans, made.bucket, made.whole, strict=True):
            if span[1] > at:
                going[number] = True
                continue
            ended[number].append(span)
            (days if whole else hours).append(span)
            pageviews[number] += have[(site_id, span)].pageviews
        together = {
            i: self.union_of(site_id, spans, have, seen) for i, spans in enumerate(ended) if len(spans) > 1
        }
        partial = {i: keys for i, keys in together.items() if going[i]}
        partial.update(
            (i, have[(site_id, spans[0])].visitors)
            for i, spans in enumerate(ended)
            if going[i] and len(spans) == 1
        )
        whole_days = self.union_of(site_id, days, have, seen)
        if len(days) > 1:
            viewed = sum(have[(site_id, span)].pageviews for span in days)
            united.append((site_id, (days[0][0], days[-1][1]), Piece(whole_days, viewed)))
        of_hours = self.union_of(site_id, hours, have, seen)
        together_count = len(whole_days) + int(np.count_nonzero(missing(whole_days, of_hours)))
        counts = [
            len(together[i]) if i in together else sum(have[(site_id, s)].count for s in spans)
            for i, spans in enumerate(ended)
        ]
        figures = Ended(counts, pageviews, partial, whole_days, of_hours, together_count)
        done = _done(made, at)
        if done:
            self.kept.put((site_id, made.spans[0][0], done, made.shape), figures, seen, figures.cost())
        return figures


def _store_days(store: Store, read_days: list[tuple[int, Span, Piece]], seen: dict[int, Seen]) -> None:
    """Hands the whole ended days read from the events to the store to keep in its file, each with
    the change number it was read at (the store keeps those no later change touched)."""
    keep_days = getattr(store, "keep_days", None)
    if keep_days is None or not read_days:
        return
    epoch = seen[read_days[0][0]].epoch
    keep_days(
        epoch,
        [
            (site_id, seen[site_id].number, low, high, piece.pageviews, piece.visitors)
            for site_id, (low, high), piece in read_days
        ],
    )


def _loaded(store: Store, site_id: int, span: Span, keys: Any) -> Callable[[], Keys]:
    """Reads a span's keys from its file (``store.kept_files.KeysFile``), or from the events when
    the file went meanwhile (a write deleted its row after this request's read of the rows)."""

    def load() -> Keys:
        found: Keys | None = keys.read()
        if found is not None:
            return found
        return read(store.columns, store.dialect, {span: [site_id]})[(site_id, span)].visitors

    return load


def _days_span(made: Plan, at: int) -> Span | None:
    """The span of a period's whole days ended by ``at``, when they are more than one (their
    visitors' union is kept as one piece: ``Ledger.union_of``)."""
    days = [span for span, whole in zip(made.spans[: made.ended(at)], made.whole, strict=False) if whole]
    return (days[0][0], days[-1][1]) if len(days) > 1 else None


def _done(made: Plan, at: int) -> int:
    """The end of a period's last ended piece (0: none ended)."""
    count = made.ended(at)
    return made.ends[count - 1] if count else 0


def _counted(site_id: int, made: Plan, ended: Ended, have: Have, at: int) -> Counted:
    """A period's figures: its ended pieces' (``ended``) with those of its pieces going on."""
    points = list(zip(ended.visitors, ended.pageviews, strict=True))
    going: dict[int, list[Span]] = {}
    count = made.ended(at)
    for span, number in zip(made.spans[count:], made.bucket[count:], strict=True):
        going.setdefault(number, []).append(span)
    for number, spans in going.items():
        keys = union(have[(site_id, span)].visitors for span in spans)
        viewed = sum(have[(site_id, span)].pageviews for span in spans)
        points[number] = (count_with(ended.partial.get(number, EMPTY), keys), points[number][1] + viewed)
    now = union(have[(site_id, span)].visitors for spans in going.values() for span in spans)
    return Counted(points, ended.count_with(now), sum(pv for _, pv in points))


_ledgers: Beside[Ledger] = Beside(Ledger)


def ledger_of(store: object) -> Ledger | None:
    """The overview's pieces of ``store`` (None when it keeps no figures, ``kept_figures.kept_of``,
    or cannot answer columns of values)."""
    return _ledgers.of(store) if getattr(store, "columns", None) is not None else None
