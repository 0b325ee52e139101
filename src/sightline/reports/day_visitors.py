"""The unique visitors of a table's shown values over a big period, united from what is kept per
ended span: a bitmap per value where the table estimates them (``counting``), the sorted keys of
the value's visitors where it counts them exactly.

A table ranks its values first (``table_days``, ``visit_days``) and then counts the unique
visitors of the shown values only. They are the union of each span's visitors of that value (of
its events; under a filter, of the selected visits that started in it; of a visit table, of the
visits of that value that started in it), so each ended span's are kept between requests in the
one layer of kept figures (``reports.kept_figures``), dropped as the table's counts are when a
write touches the span, and a request reads only the spans not kept (the hour going on, and a
span a write changed since), for the values they lack.

Of more than three spans, those before the last two are one span (their union, dropped when a
change touches any of them: a late event of an earlier day): with today cut at the hour
(``table_days.hours_apart``), its ended hours and the hour going on are the last two, so the
union's span ends at today's start and stays kept from one hour to the next.

- **Estimated**: a bitmap per value and span (a bit per visitor's hashed code, of the size the
  request counts the period with); the period's bitmap is their OR, the very bitmap one pass over
  the period sets. A bitmap per day would be 10 times the bytes to read, send and unite for a
  30-day table (341 bitmaps of 128 KiB for its 11 rows at 10 M events: a second a request while
  fed). Where three spans take more than ``SHARE`` of the layer, the days before the last one
  are the union; where two do, nothing is kept and the caller reads them each time.
- **Exact** (a table of fewer than ``counting.EXACT_BELOW`` rows): the sorted, unique keys of the
  value's visitors per span, as the overview keeps a site's (``overview_days``); the period's
  count is the union span's keys plus those of the last two spans not among them (a binary search
  each). Counting them at every request instead cost the 30-day browsers table under the page
  filter /pricing at 10 M events, fed at 2,000 events/s, 77 ms p50 of the store's time. Keys over
  ``SHARE`` of the layer are not kept.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sightline.reports import counting
from sightline.reports.kept_figures import Kept
from sightline.reports.queries import Filters, Query, Run, Span, bucket
from sightline.store.epoch import micros

if TYPE_CHECKING:  # NumPy is loaded by the first table that counts exactly, not at the server's start
    from sightline.reports.overview_pieces import Keys

BITMAP_BYTES = 120  # a kept span's bitmaps or keys beyond their bits (the dict, its keys)
KEY_BYTES = 8  # a visitor's kept key
SHARE = 0.25  # of the layer's bytes, the most one table's kept visitors may take
Held = dict[str, Any]  # value -> its visitors in a span: a bitmap (int) or sorted keys


def visitors(
    run: Run,
    query: Query,
    column: str,
    where: str,
    values: Sequence[str],
    kept: Kept,
    days: Sequence[Span],
    unique: counting.Visitors,
    of_visits: bool = False,
    name: str | None = None,
) -> dict[object, object]:
    """The unique visitors of each of ``values`` over ``days`` (value -> the engine's count, for
    ``unique.read``: the bits set of the united bitmap, or the exact count), from each kept
    span's (the visitors of its events of that value, or under a filter of the selected visits
    that started in it, as ``table_days.ranked`` counts them; ``of_visits``: of the visits of that
    value that started in it, ``where`` more conditions on their rows), the others read, only for
    the values they lack. Empty where even two spans' bitmaps take more than the layer's share,
    or where more than ``counting.MAX_VALUES`` values are counted exactly (a table of that many
    rows holds too many visitors to keep): the caller reads them each time."""
    spans = _spans(days, len(values), unique, kept)
    if not spans or (not unique.size and len(values) > counting.MAX_VALUES):  # exact: many rows
        return {}
    exact = not unique.size
    none: Any = 0
    if exact:
        from sightline.reports.overview_pieces import EMPTY

        none = EMPTY
    seen = kept.sync(query.site_id)
    now = micros(datetime.now(UTC))
    shape = f"{'keys' if exact else 'bitmaps'} {column} {where} {unique.size}"
    shape += f" {query.filters!r}" if query.filters else ""
    shape += " of visits" if of_visits else f" {name!r}"
    keys = [(query.site_id, micros(a), micros(b), ("table", shape)) for a, b in spans]
    held: list[Held] = []
    for key in keys:
        found = kept.get(key, seen)
        held.append(dict(found) if found is not None else {})
    missing = [[value for value in values if value not in held[i]] for i in range(len(spans))]
    start = 0
    while start < len(spans):  # each run of spans with values missing: one read
        if not missing[start]:
            start += 1
            continue
        stop = start
        while stop < len(spans) and missing[stop]:
            stop += 1
        wanted = sorted({value for day in range(start, stop) for value in missing[day]})
        rows = _rows(run, query, column, where, spans[start:stop], wanted, of_visits, name)
        read: list[Held] = list(_read_keys(run, *rows) if exact else _read_bitmaps(run, *rows, unique))
        for index, found_now in enumerate(read, start):
            for value in wanted:
                held[index][value] = found_now.get(value, none)
            if keys[index][2] <= now:
                if exact:
                    cost = BITMAP_BYTES + KEY_BYTES * sum(len(k) for k in held[index].values())
                else:
                    cost = BITMAP_BYTES + unique.size // 8 * len(held[index])
                if cost <= kept.most_bytes * SHARE:
                    kept.put(keys[index], dict(held[index]), seen, cost)
        start = stop
    if exact:
        return {value: _count([span.get(value, none) for span in held]) for value in values}
    united = dict.fromkeys(values, 0)
    for span in held:
        for value in values:
            united[value] |= span.get(value, 0)
    return {value: bits.bit_count() for value, bits in united.items()}


def _count(parts: list[Keys]) -> int:
    """Visitors of the spans' keys together: the biggest (the union of the earlier days) and a
    binary search in it for each of the others' keys."""
    from sightline.reports.overview_pieces import count_with, union

    biggest = max(range(len(parts)), key=lambda i: len(parts[i]))
    return count_with(parts[biggest], union(part for i, part in enumerate(parts) if i != biggest))


def _spans(days: Sequence[Span], values: int, unique: counting.Visitors, kept: Kept) -> list[Span]:
    """The spans ``visitors`` keeps each value's visitors of: of more than three, the days before
    the last two as one span (their union), then the last two; for bitmaps, the days before the
    last one as one where three spans take more than the layer's ``SHARE``, and none (read each
    time) where two do."""

    def fits(spans: int) -> bool:
        return not unique.size or unique.size // 8 * values * spans <= kept.most_bytes * SHARE

    if not values:
        return []
    if len(days) > 3 and fits(3):  # the union ends where the last day began
        return [(days[0][0], days[-2][0]), days[-2], days[-1]]
    if fits(len(days)):
        return list(days)
    if len(days) > 2 and fits(2):
        return [(days[0][0], days[-1][0]), days[-1]]
    return []


def keeps_visitors(days: Sequence[Span], values: int, unique: counting.Visitors, kept: Kept) -> bool:
    """Whether ``visitors`` keeps the visitors of ``values`` values over ``days`` between requests."""
    return bool(_spans(days, values, unique, kept))


def _rows(
    run: Run,
    query: Query,
    column: str,
    where: str,
    part: Sequence[Span],
    values: Sequence[str],
    of_visits: bool,
    name: str | None,
) -> tuple[Query, str, Sequence[str], int]:
    """The query pieces and SQL of each of ``part``'s rows of ``values`` (v_day: the span's 1-based
    index, bucketed as ``table_days.ranked`` buckets, or by the visit's start with ``of_visits``;
    k: the value's 1-based index; visitor), ``values`` and the number of spans."""
    if of_visits:
        query_parts, started = started_in(run, query, part)
        rows = (
            f"SELECT {bucket(query_parts, part, 'start')} AS v_day, {column} AS value, visitor "
            f"FROM {started}{where}"
        )
    elif query.filters:
        query_parts, started = started_in(run, query, part)
        low = query_parts.bind(micros(part[0][0]))
        chosen = f"SELECT visit AS v_visit, {bucket(query_parts, part, 'start')} AS v_day FROM {started}"
        rows = (
            f"SELECT v_day, {column} AS value, visitor FROM events JOIN ({chosen}) AS v "
            f"ON visit = v_visit WHERE {query_parts.their_time()} AND time >= {low} "
            f"AND {on_name(query_parts, where, name)}"
        )
    else:
        query_parts = Query(query.dialect, query.site_id, (part[0][0], part[-1][1]), Filters())
        rows = (
            f"SELECT {bucket(query_parts, part, 'time')} AS v_day, {column} AS value, visitor "
            f"FROM events WHERE {query_parts.events(on_name(query_parts, where, name))}"
        )
    position = query_parts.dialect.position.format(array=query_parts.bind(list(values)), value="value")
    return query_parts, f"SELECT v_day, {position} AS k, visitor FROM ({rows}) AS r", values, len(part)


def _read_bitmaps(
    run: Run, query: Query, rows: str, values: Sequence[str], spans: int, unique: counting.Visitors
) -> list[dict[str, int]]:
    """Each span's bitmap of the visitors of each of ``values``."""
    mask = unique.size - 1
    found = run(
        f"SELECT v_day, k, bitstring_agg((visitor & {mask})::INTEGER, 0, {mask})::BLOB FROM "
        f"({rows}) AS t WHERE k > 0 GROUP BY v_day, k",
        query.params.values,
    )
    out: list[dict[str, int]] = [{} for _ in range(spans)]
    for day, at, bits in found:
        out[int(day) - 1][values[int(at) - 1]] = int.from_bytes(bytes(bits), "big")
    return out


def _read_keys(run: Run, query: Query, rows: str, values: Sequence[str], spans: int) -> list[dict[str, Keys]]:
    """Each span's sorted, unique keys of the visitors of each of ``values`` (read as NumPy
    arrays where the store sends them so: ``Engine.columns``)."""
    import numpy as np

    sql = f"SELECT DISTINCT v_day, k, visitor FROM ({rows}) AS t WHERE k > 0"
    columns = getattr(run, "columns", None)
    if columns is not None:
        got = columns(sql, query.params.values)
        day, at, visitor = (np.asarray(got[name]) for name in ("v_day", "k", "visitor"))
    else:
        found = run(sql, query.params.values)
        day, at = (np.asarray([row[i] for row in found], dtype=np.int64) for i in range(2))
        visitor = np.asarray([row[2] for row in found], dtype=np.uint64)
    out: list[dict[str, Keys]] = [{} for _ in range(spans)]
    if not len(day):
        return out
    group = day.astype(np.int64) * (len(values) + 1) + at.astype(np.int64)
    keys = visitor.astype(np.uint64)  # UBIGINT
    order = np.lexsort((keys, group))
    group, keys = group[order], keys[order]
    bounds = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1], [True])))
    for first, last in itertools.pairwise(bounds):
        span, value = divmod(int(group[first]), len(values) + 1)
        out[span - 1][values[value - 1]] = keys[first:last]
    return out


def started_in(run: Run, query: Query, part: Sequence[Span]) -> tuple[Query, str]:
    """The pieces of a query over ``part`` and the FROM and WHERE of the visits that started in it
    that ``query``'s filters select (every visit without filters). Under a filter on events, the
    selection is the one the store keeps for the period, asked for now: a caller keeping what it
    reads calls this after the layer's ``sync``, so that the selection is never older than the
    change number its figures are kept with."""
    if not query.filters:
        query_parts = Query(query.dialect, query.site_id, (part[0][0], part[-1][1]), Filters())
        return query_parts, query_parts.chosen()
    query_parts = Query(query.dialect, query.site_id, query.span, query.filters)
    query_parts.last = query.last
    query_parts.keep(run)
    low, high = query_parts.bind(micros(part[0][0])), query_parts.bind(micros(part[-1][1]))
    return query_parts, f"{query_parts.chosen()} AND start >= {low} AND start < {high}"


def on_name(query: Query, where: str, name: str | None) -> str:
    """``where`` with ``name`` bound in ``query`` where it says ``{name}``."""
    return where if name is None else where.replace("{name}", query.bind(name))
