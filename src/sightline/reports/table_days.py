"""The pages and custom events tables ranked by counts kept per ended day (``series_days``), and
the shown values' unique visitors united from bitmaps kept per ended day (``visitors``).

A table of a big period ranks its values by a plain count (pageviews, events) and then counts the
unique visitors of the shown values only (``tables``). The ranking is a sum over the period's days,
so each ended day's count per value is kept between requests in the one layer of kept figures
(``reports.kept_figures``), dropped as the time series' spans are when a write touches the day, and a
request reads only the days that are not kept (today's, and the days a write changed since).

- **Unfiltered**, a day's counts are those of the events in it (bucketed by their time).
- **Under filters** (on the visits' events: page, event, goal, prop; or on the visits' own
  fields: source, UTM tags, browser, place...), the table counts every event of the visits the
  filters select, those that started in the period: so a day's counts are those of the selected
  visits that started in it, whatever day their events fall in (bucketed by the visit's start,
  which the visits table holds; an event's ``visit_start`` may be older). A visit's selection
  depends on its own row and events only, so the period's counts are the days' sum. A write that
  adds or deletes any event of a visit changes the visit's row, and the store records the hour of
  its start (and of the start it had before): the day is dropped. They are kept per filters (the
  goal's rule included); under a filter on events they are read through the selection the store
  keeps (``Query.keep``), asked for after the layer's ``sync`` so that the selection is never
  older than the change number the counts are kept with.

The shown values' visitors are bitmaps of the same events (a bit per visitor's hashed code, of
the size the request counts the period with, ``counting``), kept for the period's days before
yesterday as one span and for the last two spans apart (``visitors``): the period's bitmap is the
OR of theirs, the very bitmap one pass over the period sets, so a table after a feed step reads
today's events (and a changed day's) for them instead of every day's.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sightline.reports import counting, series_days
from sightline.reports.kept_figures import Kept
from sightline.reports.queries import Filters, Page, Query, Run, Span, bucket
from sightline.store.epoch import micros

BITMAP_BYTES = 120  # a kept day's bitmaps beyond their bits (the dict, its keys)
SHARE = 0.25  # of the layer's bytes, the most one table's kept bitmaps may take


def hours_apart(days: Sequence[Span], now: datetime) -> list[Span]:
    """The period's spans with the one going on (today) cut where the current hour began: its
    hours that ended are a span of their own, kept as an ended day is, so that a request after a
    feed step (which records the current hour) reads the current hour's events, not the day's.
    The hour is the store's (UTC), which is what change records name; a span is cut only when
    the hour began inside it."""
    if not days:
        return list(days)
    hour = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    low, high = days[-1]
    if not low < hour < high:
        return list(days)
    return [*days[:-1], (low, hour), (hour, high)]


def ranked(
    run: Run,
    query: Query,
    column: str,
    where: str,
    page: Page,
    kept: Kept,
    days: Sequence[Span],
    unique: counting.Visitors | None = None,
    name: str | None = None,
) -> tuple[list[tuple[str, int]], dict[object, object]]:
    """The page of values ranked by their count over ``days``: each ended day's count per value kept
    between requests (a day of more values than the ledger keeps is read each time), the others
    read in one query per run of days, summed and ranked as the query would (count, then value).
    At 100 M events, the largest site's 30-day pages table: its ranking (18 M pageviews grouped by
    path, 377 ms of CPU) becomes today's. Under filters with ``unique`` (how the table counts
    visitors), where ``visitors`` keeps no bitmaps for it, a read of every day at once (none kept:
    the first request) also counts the visitors of the values it ranks first, in the same query
    (returned, value -> the engine's count; else an empty dict): the selected visits' events are
    read once, as without kept days. Where it keeps them, the first request reads them too, so
    that the next requests, after a feed step, read only today's. ``name``:
    a custom event's name, bound where ``where`` says ``{name}`` (the props table)."""
    found: dict[object, object] = {}

    def read(part: Sequence[Span]) -> list[dict[str, int]]:
        if query.filters:  # a first request counts its visitors here unless it keeps bitmaps
            every = len(part) == len(days)
            keeps = unique is not None and keeps_bitmaps(days, int(page.limit) + 1, unique, kept)
            whole = unique if every and not keeps else None
            counts, people = _read_selected(run, query, column, where, part, page, whole, name)
            found.update(people)
            return counts
        query_parts = Query(query.dialect, query.site_id, (part[0][0], part[-1][1]), Filters())
        sql = (
            f"SELECT i, value, count(*) FROM (SELECT {bucket(query_parts, part, 'time')} AS i, "
            f"{column} AS value FROM events WHERE {query_parts.events(_on(query_parts, where, name))}) AS t "
            "GROUP BY i, value"
        )
        return _grouped(run(sql, query_parts.params.values), part)[0]

    counted = f"table {column} {where} {name!r}"
    counted += f" selected by start {query.filters!r}" if query.filters else ""
    total: Counter[str] = Counter()
    for counts in series_days.series(kept, query.site_id, days, counted, read):
        total.update(counts)
    ordered = sorted(total.items(), key=lambda item: (-item[1], item[0]))
    return ordered[int(page.offset) : int(page.offset) + int(page.limit) + 1], found


def _read_selected(
    run: Run,
    query: Query,
    column: str,
    where: str,
    part: Sequence[Span],
    page: Page,
    unique: counting.Visitors | None,
    name: str | None = None,
) -> tuple[list[dict[str, int]], dict[object, object]]:
    """Each day's counts per value of the events of the selected visits that started in it; with
    ``unique``, also the visitors of the page of values their sum ranks (``ranked``)."""
    query_parts, started = started_in(run, query, part)
    low = query_parts.bind(micros(part[0][0]))
    day = bucket(query_parts, part, "start")  # for each selected visit, not each of its events
    chosen = f"SELECT visit AS v_visit, {day} AS v_day FROM {started}"
    rows = (
        f"SELECT v_day, {column} AS value, visitor FROM events JOIN ({chosen}) AS v ON visit = v_visit "
        f"WHERE {query_parts.their_time()} AND time >= {low} AND {_on(query_parts, where, name)}"
    )
    if unique is None:
        return _grouped(
            run(
                f"SELECT v_day, value, count(*) FROM ({rows}) AS t GROUP BY v_day, value",
                query_parts.params.values,
            ),
            part,
        )
    window = f" LIMIT {int(page.limit) + 1} OFFSET {int(page.offset)}"
    return _grouped(
        run(
            f"WITH sel AS MATERIALIZED ({rows}), "
            "days AS (SELECT v_day, value, count(*) AS n FROM sel GROUP BY v_day, value), "
            f"ranked AS (SELECT value, sum(n) AS n FROM days GROUP BY value ORDER BY n DESC, value{window}) "
            "SELECT v_day, value, n FROM days UNION ALL "
            f"SELECT 0, r.value, {unique.sql} FROM sel JOIN ranked AS r ON sel.value = r.value "
            "GROUP BY r.value",
            query_parts.params.values,
        ),
        part,
    )


def _grouped(
    found: Sequence[tuple[Any, ...]], part: Sequence[Span]
) -> tuple[list[dict[str, int]], dict[object, object]]:
    """Rows of (day's 1-based index, value, count) as each day's counts; rows of day 0 carry a
    value's visitors instead."""
    out: list[dict[str, int]] = [{} for _ in part]
    people: dict[object, object] = {}
    for day, value, count in found:
        if int(day) == 0:
            people[value] = count
        else:
            out[int(day) - 1][value] = int(count)
    return out, people


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
    """The unique visitors of each of ``values`` over ``days`` (value -> the bits its bitmap has
    set, for ``unique.read``), as the union of each day's bitmap: an ended day's kept between
    requests per value (the visitors of its events of that value, or under a filter of the
    selected visits that started in it, as ``ranked`` counts them; ``of_visits``: of the visits
    of that value that started in it, ``where`` more conditions on their rows, ``visit_days``),
    the others read, only for the values they lack. Of more than three spans, those before the
    last two are one span, one bitmap per value (their union, dropped when a change touches any of
    them: a late event of an earlier day; ``_bitmap_spans``): with today cut at the hour
    (``hours_apart``), its ended hours and the hour going on are the last two, so the union's span
    ends at today's start and stays kept from one hour to the next. A bitmap per day would be 10
    times the bytes to read, send and unite for a 30-day table (341 bitmaps of 128 KiB for its 11
    rows at 10 M events: a second a request while fed), and the union is read again only when
    the period moves to another day or a late event changes an earlier one. Where three spans
    take more than ``SHARE`` of the layer, the days before the last one are the union. Empty
    where ``unique`` counts exactly (no bitmap to unite), or where even two spans take more than
    the share: the caller reads them each time."""

    days = _bitmap_spans(days, len(values), unique, kept)
    if not days:
        return {}
    seen = kept.sync(query.site_id)
    now = micros(datetime.now(UTC))
    shape = f"bitmaps {column} {where} {unique.size}" + (f" {query.filters!r}" if query.filters else "")
    shape += " of visits" if of_visits else f" {name!r}"
    keys = [(query.site_id, micros(a), micros(b), ("table", shape)) for a, b in days]
    held: list[dict[str, int]] = []
    for key in keys:
        found = kept.get(key, seen)
        held.append(dict(found) if found is not None else {})
    missing = [[value for value in values if value not in held[i]] for i in range(len(days))]
    start = 0
    while start < len(days):  # each run of days with values missing: one read
        if not missing[start]:
            start += 1
            continue
        stop = start
        while stop < len(days) and missing[stop]:
            stop += 1
        wanted = sorted({value for day in range(start, stop) for value in missing[day]})
        found_bitmaps = _read_bitmaps(
            run, query, column, where, days[start:stop], wanted, unique, of_visits, name
        )
        for index, bitmaps in enumerate(found_bitmaps, start):
            for value in wanted:
                held[index][value] = bitmaps.get(value, 0)
            if keys[index][2] <= now:
                cost = BITMAP_BYTES + unique.size // 8 * len(held[index])
                kept.put(keys[index], dict(held[index]), seen, cost)
        start = stop
    union = dict.fromkeys(values, 0)
    for day in held:
        for value in values:
            union[value] |= day.get(value, 0)
    return {value: bits.bit_count() for value, bits in union.items()}


def _bitmap_spans(days: Sequence[Span], values: int, unique: counting.Visitors, kept: Kept) -> list[Span]:
    """The spans ``visitors`` keeps a bitmap per value of: of more than three, the days before
    the last two as one span (their union), then the last two; the days before the last one as
    one where three spans take more than the layer's ``SHARE``; none (read each time) where two
    do, or ``unique`` counts exactly."""

    def fits(spans: int) -> bool:
        return unique.size // 8 * values * spans <= kept.most_bytes * SHARE

    if not unique.size or not values:
        return []
    if len(days) > 3 and fits(3):  # the union ends where the last day began
        return [(days[0][0], days[-2][0]), days[-2], days[-1]]
    if fits(len(days)):
        return list(days)
    if len(days) > 2 and fits(2):
        return [(days[0][0], days[-1][0]), days[-1]]
    return []


def keeps_bitmaps(days: Sequence[Span], values: int, unique: counting.Visitors, kept: Kept) -> bool:
    """Whether ``visitors`` keeps the bitmaps of ``values`` values over ``days`` between requests."""
    return bool(_bitmap_spans(days, values, unique, kept))


def _read_bitmaps(
    run: Run,
    query: Query,
    column: str,
    where: str,
    part: Sequence[Span],
    values: Sequence[str],
    unique: counting.Visitors,
    of_visits: bool = False,
    name: str | None = None,
) -> list[dict[str, int]]:
    """Each day's bitmap of the visitors of each of ``values`` (bucketed as ``ranked`` buckets; of
    the visits that started in the day with ``of_visits``)."""
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
            f"AND {_on(query_parts, where, name)}"
        )
    else:
        query_parts = Query(query.dialect, query.site_id, (part[0][0], part[-1][1]), Filters())
        rows = (
            f"SELECT {bucket(query_parts, part, 'time')} AS v_day, {column} AS value, visitor "
            f"FROM events WHERE {query_parts.events(_on(query_parts, where, name))}"
        )
    mask = unique.size - 1
    position = query_parts.dialect.position.format(array=query_parts.bind(list(values)), value="value")
    found = run(
        f"SELECT v_day, k, bitstring_agg((visitor & {mask})::INTEGER, 0, {mask})::BLOB FROM "
        f"(SELECT v_day, {position} AS k, visitor FROM ({rows}) AS r) AS t WHERE k > 0 GROUP BY v_day, k",
        query_parts.params.values,
    )
    out: list[dict[str, int]] = [{} for _ in part]
    for day, at, bits in found:
        out[int(day) - 1][values[int(at) - 1]] = int.from_bytes(bytes(bits), "big")
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


def _on(query: Query, where: str, name: str | None) -> str:
    """``where`` with ``name`` bound in ``query`` where it says ``{name}``."""
    return where if name is None else where.replace("{name}", query.bind(name))
