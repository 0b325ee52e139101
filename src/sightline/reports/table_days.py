"""The pages and custom events tables ranked by counts kept per ended day (``series_days``); the
shown values' unique visitors are united from what is kept per ended span (``day_visitors``).

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

The shown values' visitors are those of the same events (or selected visits), kept per span as
bitmaps or, counted exactly, as sorted keys (``day_visitors``): a table after a feed step reads
today's events (and a changed day's) for them instead of every day's.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sightline.reports import counting, series_days
from sightline.reports.day_visitors import keeps_visitors, on_name, started_in
from sightline.reports.kept_figures import Kept
from sightline.reports.queries import Filters, Page, Query, Run, Span, bucket
from sightline.store.epoch import micros


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
            keeps = unique is not None and keeps_visitors(days, int(page.limit) + 1, unique, kept)
            whole = unique if every and not keeps else None
            counts, people = _read_selected(run, query, column, where, part, page, whole, name)
            found.update(people)
            return counts
        query_parts = Query(query.dialect, query.site_id, (part[0][0], part[-1][1]), Filters())
        sql = (
            f"SELECT i, value, count(*) FROM (SELECT {bucket(query_parts, part, 'time')} AS i, "
            f"{column} AS value FROM events WHERE {query_parts.events(on_name(query_parts, where, name))}) "
            "AS t "
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
        f"WHERE {query_parts.their_time()} AND time >= {low} AND {on_name(query_parts, where, name)}"
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
