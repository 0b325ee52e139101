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
read in the request, in one query (``read``): the store groups the events of those spans by site,
visitor and hour (a quarter hour or a minute where a span starts or ends within an hour), which
costs it less than naming each event's piece, and sends the rows as NumPy arrays (bytes through
its pipe, not millions of tuples); each piece's keys are then the union of its hours'. Requests
take turns, so one arriving during that first read waits for it and then finds every day kept.
A store without change records keeps nothing (``reports.overview`` answers with its statement).
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter or a site id)
from __future__ import annotations

import bisect
import functools
import itertools
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

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
HOUR = timedelta(hours=1)
# Events one query of a request's pieces reads, at most: the store holds a row per (site, hour,
# visitor) of them (32 bytes) until it sends them, within its memory (``--store-memory-mb``). A
# request reading more than ``COUNT_FROM`` of ended spans (µs, all sites together: more than the
# hour going on) counts its sites' events first and reads them in parts of at most this many.
READ_MOST = 8_000_000
COUNT_FROM = 2 * 86_400_000_000
UNITS = (3_600_000_000, 900_000_000, 60_000_000)  # µs: hours, quarters (zones at :30, :45), minutes
EMPTY: npt.NDArray[np.uint64] = np.zeros(0, dtype=np.uint64)
Keys = npt.NDArray[np.uint64]
Span = tuple[int, int]  # UTC microseconds, [low, high)
Have = dict[tuple[int, Span], "Piece"]  # the pieces of a request, by site and span
Columns = Callable[[str, dict[str, Any]], dict[str, Any]]  # a store's ``columns``
Query = Callable[[str, dict[str, Any]], list[tuple[Any, ...]]]  # a store's ``query``


class Store(Protocol):
    """What the overview asks of the analytics store."""

    dialect: Dialect

    def query(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]: ...

    def columns(self, sql: str, params: dict[str, Any]) -> dict[str, Any]: ...


log = logging.getLogger("sightline.reports")


class Piece:
    """A span's figures: its visitors' keys (sorted, unique) and its pageviews. A piece read from
    the store's file knows how many its keys are, and reads them only when a union of it asks
    (``load``): a start reads a period's whole days as their kept union, not day by day."""

    __slots__ = ("_keys", "_load", "count", "pageviews")

    def __init__(
        self, visitors: Keys | None, pageviews: int, count: int = 0, load: Callable[[], Keys] | None = None
    ) -> None:
        self._keys = visitors
        self._load = load
        self.count = len(visitors) if visitors is not None else count
        self.pageviews = pageviews

    @property
    def visitors(self) -> Keys:
        if self._keys is None:
            assert self._load is not None
            self._keys = self._load()
            self._load = None
        return self._keys


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


def read(columns: Columns, dialect: Dialect, wanted: dict[Span, list[int]]) -> dict[tuple[int, Span], Piece]:
    """The figures of each span of ``wanted`` for each of its sites, in one query (a site and span
    without events is an empty piece): the store groups the events by site, visitor and ``unit``
    of time (the longest that cuts no span in two, ``_unit``), which is cheaper than naming each
    event's span, and sends the rows as arrays; the spans' visitors are unions of their units'."""
    if not wanted:
        return {}
    params = Params(dialect)
    unit = _unit(list(wanted))
    columns_read = f"site_id, time, visitor, CASE WHEN {VIEWED} THEN 1 ELSE 0 END AS pv"
    sql = (
        f"SELECT site_id, {dialect.div('time', str(unit))} AS q, visitor, sum(pv) AS viewed "
        f"FROM ({_selection(params, wanted, columns_read)}) AS e GROUP BY site_id, q, visitor"
    )
    found = _pieces(columns(sql, params.values), wanted, unit)
    for span, ids in wanted.items():
        for site_id in ids:
            found.setdefault((int(site_id), span), Piece(EMPTY, 0))
    return found


def events_of(query: Query, dialect: Dialect, wanted: dict[Span, list[int]]) -> dict[int, int]:
    """How many events each site of ``wanted`` holds in its spans (one query over two columns)."""
    params = Params(dialect)
    sql = f"SELECT site_id, count(*) FROM ({_selection(params, wanted, 'site_id')}) AS e GROUP BY site_id"
    return {int(site_id): int(count) for site_id, count in query(sql, params.values)}


def _selection(params: Params, wanted: dict[Span, list[int]], columns_read: str) -> str:
    """``columns_read`` of the events of each site of ``wanted`` in its spans: sites asking for the
    same spans share one part, and adjacent spans one range."""
    by_sites: dict[frozenset[int], list[Span]] = {}
    for span in sorted(wanted):
        by_sites.setdefault(frozenset(int(s) for s in wanted[span]), []).append(span)
    parts = []
    for site_ids, spans in by_sites.items():
        listed = ", ".join(str(s) for s in sorted(site_ids))
        ranges = " OR ".join(
            f"(time >= {params.bind(low)} AND time < {params.bind(high)})" for low, high in _runs(spans)
        )
        parts.append(f"SELECT {columns_read} FROM events WHERE site_id IN ({listed}) AND ({ranges})")
    return " UNION ALL ".join(parts)


def _unit(spans: list[Span]) -> int:
    """The longest of ``UNITS`` whose each unit of time lies in one span at most (of those that
    hold a part of it): every span starts on a unit's start, and a span ending within a unit is
    followed by no span starting in the same unit."""
    starts = sorted({low for low, _ in spans})
    for unit in UNITS:
        if all(low % unit == 0 for low in starts) and all(
            high % unit == 0 or _next_start(starts, high) >= high - high % unit + unit for _, high in spans
        ):
            return unit
    return 1


def _next_start(starts: list[int], at: int) -> int:
    index = bisect.bisect_left(starts, at)
    return starts[index] if index < len(starts) else at + UNITS[0]


def _runs(spans: list[Span]) -> list[Span]:
    """Sorted spans, adjacent ones joined."""
    runs: list[Span] = []
    for low, high in spans:
        if runs and runs[-1][1] == low:
            runs[-1] = (runs[-1][0], high)
        else:
            runs.append((low, high))
    return runs


def _pieces(got: dict[str, Any], wanted: dict[Span, list[int]], unit: int) -> dict[tuple[int, Span], Piece]:
    """The pieces of rows (site, unit, visitor, pageviews): each row's (site, span) found by a
    binary search, then each piece's keys sorted, each once."""
    if not got or not len(got["site_id"]):
        return {}
    pairs = sorted((int(site_id), span) for span, ids in wanted.items() for site_id in ids)
    rank = {site_id: i for i, site_id in enumerate(sorted({site_id for site_id, _ in pairs}))}
    low = min(span[0] for _, span in pairs)
    width = (max(span[1] for _, span in pairs) - low) // unit + 2
    starts = np.array([rank[s] * width + (a - low) // unit for s, (a, _) in pairs], dtype=np.int64)
    ends = np.array([rank[s] * width - (low - b) // unit for s, (_, b) in pairs], dtype=np.int64)
    ranks = np.full(max(rank) + 1, len(rank), dtype=np.int64)  # a site not asked for: past the last
    ranks[list(rank)] = list(rank.values())
    sites = np.asarray(got["site_id"], dtype=np.int64)
    keys = (
        ranks[np.minimum(sites, len(ranks) - 1)] * width
        + (np.asarray(got["q"], dtype=np.int64) * unit - low) // unit
    )
    at = np.searchsorted(starts, keys, side="right") - 1
    at[(at < 0) | (keys >= ends[np.maximum(at, 0)])] = -1  # outside every span asked (none expected)
    by = np.argsort(at, kind="stable")
    at = at[by]
    visitors = np.asarray(got["visitor"]).astype(np.uint64)[by]
    viewed = np.asarray(got["viewed"]).astype(np.int64)[by]
    bounds = np.flatnonzero(np.concatenate(([True], at[1:] != at[:-1], [True])))
    found = {}
    for first, last in itertools.pairwise(bounds.tolist()):
        if at[first] >= 0:
            pv = int(viewed[first:last].sum())
            found[pairs[int(at[first])]] = Piece(unique(visitors[first:last]), pv)
    return found


def unique(keys: Keys) -> Keys:
    """``keys`` sorted, each once. A sort and a comparison of neighbours: ``np.unique`` hashes
    64-bit keys since NumPy 2.3, some 50 times slower on a few million of them."""
    if len(keys) < 2:
        return keys
    ordered = np.sort(keys)
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def union(parts: Iterable[Keys]) -> Keys:
    """The keys of ``parts`` (each sorted and unique) together. A part holding most of them (a
    period's whole days beside today's hours) takes the others' new keys in place, by a binary
    search each: no sort of its millions of keys again."""
    listed = sorted((part for part in parts if len(part)), key=len)
    if not listed:
        return EMPTY
    if len(listed) == 1:
        return listed[0]
    big, rest = listed[-1], listed[:-1]
    if len(big) < 4 * sum(len(part) for part in rest):
        return unique(np.concatenate(listed))
    extra = rest[0] if len(rest) == 1 else unique(np.concatenate(rest))
    at = np.searchsorted(big, extra)
    new = (at == len(big)) | (big[np.minimum(at, len(big) - 1)] != extra)
    return np.insert(big, at[new], extra[new])


def count_with(base: Keys, extra: Keys) -> int:
    """Visitors of ``base`` and ``extra`` together (both sorted and unique)."""
    if not len(base) or not len(extra):
        return len(base) + len(extra)
    at = np.minimum(np.searchsorted(base, extra), len(base) - 1)
    return len(base) + int(np.count_nonzero(base[at] != extra))


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
        stored = self._stored(store, days | unions, wanted, have, seen, at)
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
        wanted: dict[Span, list[int]],
        have: Have,
        seen: dict[int, Seen],
        at: int,
    ) -> set[tuple[int, Span]]:
        """The whole ended ``days`` the store keeps beside its file (``store.kept_days``), put in
        ``have`` and kept here, and no longer ``wanted``: after a restart, a day's figures are
        read from its row instead of its events; ``days`` not ``wanted`` are a period's whole
        ended days together, whose visitors are kept as their union (``union_of``)."""
        kept_days = getattr(store, "kept_days", None)
        if kept_days is None or not days:
            return set()
        found: set[tuple[int, Span]] = set()
        joined: set[tuple[int, Span]] = set()
        for site_id, low, high, pageviews, keys in kept_days(sorted((s, a, b) for s, (a, b) in days)):
            span = (int(low), int(high))
            if span not in wanted or site_id not in wanted[span]:  # a period's whole days together
                united = _loaded(store, site_id, span, keys)()
                self.kept.put((site_id, *span, UNION), united, seen[site_id], 64 + 8 * len(united))
                joined.add((site_id, span))
                continue
            piece = Piece(None, int(pageviews), keys.count, _loaded(store, site_id, span, keys))
            have[(site_id, span)] = piece
            self.keep(site_id, span, piece, seen[site_id], at)
            found.add((site_id, span))
        for site_id, span in found:
            wanted[span].remove(site_id)
            if not wanted[span]:
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
        every = union([whole_days, self.union_of(site_id, hours, have, seen)])
        counts = [
            len(together[i]) if i in together else sum(have[(site_id, s)].count for s in spans)
            for i, spans in enumerate(ended)
        ]
        figures = Ended(counts, pageviews, partial, every)
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
    """Reads a span's keys from its file (``store.kept_days.KeysFile``), or from the events when
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
    return Counted(points, count_with(ended.whole, now), sum(pv for _, pv in points))


_ledgers: Beside[Ledger] = Beside(Ledger)


def ledger_of(store: object) -> Ledger | None:
    """The overview's pieces of ``store`` (None when it keeps no figures, ``kept_figures.kept_of``,
    or cannot answer columns of values)."""
    return _ledgers.of(store) if getattr(store, "columns", None) is not None else None
