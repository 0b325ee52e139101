"""The overview's pieces (``reports.overview_days``) as the store answers them, and the sorted
visitor keys they are made of.

A piece is a span's figures for one site: its visitors (the sorted, unique keys of the visitors
of its events) and its pageviews. ``read`` reads many sites' spans in one query: the store groups
the events of those spans by site, visitor and ``unit`` of time (the longest that cuts no span in
two), which costs it less than naming each event's span, and sends the rows as NumPy arrays;
each span's keys are then the union of its units'. The key-set helpers (``unique``, ``union``,
``count_with``, ``missing``) work on sorted arrays without hashing.

May import: ``sightline.reports.queries``, ``sightline.store`` (dialects); NumPy.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter or a site id)
from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from sightline.reports.queries import VIEWED
from sightline.store.dialects import Dialect, Params

UNITS = (3_600_000_000, 900_000_000, 60_000_000)  # µs: hours, quarters (zones at :30, :45), minutes
EMPTY: npt.NDArray[np.uint64] = np.zeros(0, dtype=np.uint64)
Keys = npt.NDArray[np.uint64]
Span = tuple[int, int]  # UTC microseconds, [low, high)
Columns = Callable[[str, dict[str, Any]], dict[str, Any]]  # a store's ``columns``
Query = Callable[[str, dict[str, Any]], list[tuple[Any, ...]]]  # a store's ``query``


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


def missing(base: Keys, extra: Keys) -> npt.NDArray[np.bool_]:
    """Which of ``extra``'s keys ``base`` lacks (both sorted and unique)."""
    if not len(base):
        return np.ones(len(extra), dtype=bool)
    at = np.minimum(np.searchsorted(base, extra), len(base) - 1)
    lacks: npt.NDArray[np.bool_] = base[at] != extra
    return lacks


def count_with(base: Keys, extra: Keys) -> int:
    """Visitors of ``base`` and ``extra`` together (both sorted and unique)."""
    if not len(base) or not len(extra):
        return len(base) + len(extra)
    at = np.minimum(np.searchsorted(base, extra), len(base) - 1)
    return len(base) + int(np.count_nonzero(base[at] != extra))
