"""The report's tables (breakdowns): one row per value of a dimension, ranked, a page at a time.

Every table is ranked by one figure and shows ``Page.limit`` rows. Unique visitors are the
costly figure, so they are counted only for the values a page shows (``reports.counting`` picks
exact counts or a bitmap each). A table ranked by visitors is ranked without counting every
value's visitors: a value never has more visitors than visits, so once the page's candidates are
counted, only values with at least as many visits as the page's last visitors can still enter it,
and those are counted next, until none is left (exact ranking, as a full count would give it).
When more values than ``FETCH`` could still enter (many values with few visits each), every
value's visitors are counted in one query instead. So is every table under a filter that selects
visits by their events (page, event, goal, prop) where the store keeps no selection: that
selection is a semi-join over the span's events, the costliest part, which a second query would
repeat. Where the store keeps it (``Query.keep``: the selected visits' whole rows), a visit table
reads the kept rows and ranks as an unfiltered one does. ClickHouse counts distinct values fast
and always ranks in one query.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sightline import dimensions
from sightline.autocapture.events import MEASUREMENTS
from sightline.reports import counting, day_visitors, table_days, visit_days
from sightline.reports.kept_figures import Kept
from sightline.reports.queries import (
    FIGURES,
    VISIT_COLUMNS,
    Filters,
    Page,
    Query,
    Run,
    Span,
    by_events,
    figures_of,
    selection,
)
from sightline.store.dialects import Dialect
from sightline.store.schema import PAGEVIEW

_MEASUREMENTS = ", ".join(f"'{name}'" for name in MEASUREMENTS)  # not in the custom events table
OPTIONAL = {d.key for d in dimensions.DIMENSIONS if d.optional}  # rows only when known
FETCH = 200  # values read to rank a table by visitors (at least 4 pages' worth); more: one query


def breakdown(
    run: Run,
    dialect: Dialect,
    site_id: int,
    span: Span,
    filters: Filters,
    dim: str,
    order: str,
    page: Page,
    name: str | None = None,
    kept: Kept | None = None,
    days: Sequence[Span] = (),
) -> tuple[list[dict[str, Any]], bool]:
    """One page of a table. With ``kept`` and the span's ``days`` (its spans in the site's zone),
    the tables rank by figures kept per ended day, and per ended hours of today
    (``table_days.hours_apart``): the visit tables under a filter on events where the store keeps
    its selection (``Query.keep``)."""
    days = table_days.hours_apart(days, datetime.now(UTC))
    query = Query(dialect, site_id, span, filters)
    query.keep(run)
    if dim in VISIT_COLUMNS:
        rows = _visit_breakdown(run, query, dim, order, page, kept, days)
    elif dim == "prop":
        rows = _prop_breakdown(run, query, name or "", page, kept, days)
    else:
        rows = _event_breakdown(run, query, dim, page, kept, days)
    return rows[: page.limit], len(rows) > page.limit


def _search(query: Query, column: str, page: Page) -> str:
    out = ""
    if page.search:
        out += f" AND {query.dialect.search.format(column=column, value=query.bind(page.search))}"
    if page.values:
        out += f" AND {query.dialect.contains(query.bind(list(page.values)), column)}"
    return out


def _window(page: Page) -> str:
    return f" LIMIT {int(page.limit) + 1} OFFSET {int(page.offset)}"


def _visit_breakdown(
    run: Run, query: Query, dim: str, order: str, page: Page, kept: Kept | None, days: Sequence[Span]
) -> list[dict[str, Any]]:
    column = VISIT_COLUMNS[dim]
    if order not in FIGURES:
        raise ValueError(f"unknown order {order!r}")
    known = ""
    if dim in OPTIONAL:
        known = f" AND {column} != ''"
    elif dimensions.BY_KEY[dim].values == dimensions.PATH:  # a visit's entry or exit page: NULL unknown
        known = f" AND {column} IS NOT NULL"
    # FROM and WHERE: the visits table, or the selection kept (``Query.keep``)
    condition = query.chosen() + known + _search(query, column, page)
    by_days = (
        kept is not None
        and days
        and query.dialect.bitmap is not None
        and not (_selects_by_events(query) and query.kept is None)  # else one query: the costly selection
        and not page.search
        and not page.values
        and order in visit_days.VISIT_FIGURES
    )
    if by_days:  # each ended day's figures and bitmaps kept (``visit_days``)
        assert kept is not None
        ranked = visit_days.breakdown(run, query, column, known, order, page, kept, days)
        counted = {value: row["visitors"] for value, row in ranked}
    elif query.dialect.bitmap is None or (
        _selects_by_events(query) and query.kept is None
    ):  # one query: a costly selection
        ranked = _visit_rows(run, query, column, condition, order, _window(page), visitors=True)
        counted = {value: row["visitors"] for value, row in ranked}
    elif order == "visitors" and (found := _by_visitors(run, query, column, condition, page)) is not None:
        ranked, counted = found
    elif order == "visitors":  # too many values could reach the page: every value counted at once
        ranked = _visit_rows(run, query, column, condition, order, _window(page), visitors=True)
        counted = {value: row["visitors"] for value, row in ranked}
    else:
        ranked = _visit_rows(run, query, column, condition, order, _window(page))
        counted = _visitors_of(run, query, column, condition, ranked)
    out = []
    for value, row in ranked:
        row["visitors"] = counted[value]
        if dim == "exit":
            row["bounces"] = row["duration"] = 0
        out.append({"value": value, **row})
    return out


def _selects_by_events(query: Query) -> bool:
    """Whether a filter selects visits by their events (page, event, goal, prop): a semi-join over
    the span's events (or, kept, a probe of the span's visits or events into the selected visits:
    ``Query.keep``) that every query of the table would repeat, so the table is one query."""
    return by_events(query.filters)


def _visit_rows(
    run: Run, query_parts: Query, column: str, condition: str, order: str, window: str, visitors: bool = False
) -> list[tuple[Any, dict[str, int]]]:
    """Each value's figures (visitors 0 unless ``visitors``), ranked by ``order``, then value."""
    names = ", ".join(f"n_{n}" for n in FIGURES)  # not the columns' own names (ClickHouse)
    sums = ", ".join(f"{s} AS n_{n}" for s, n in zip(query_parts.sums(visitors), FIGURES, strict=True))
    query = (
        f"SELECT value, {names} FROM (SELECT {column} AS value, {sums} FROM {condition} "
        f"GROUP BY {column}) AS t ORDER BY n_{order} DESC, value{window}"
    )
    return [(value, figures_of(figures)) for value, *figures in run(query, query_parts.params.values)]


def _visitors_of(
    run: Run, query: Query, column: str, condition: str, rows: list[tuple[Any, dict[str, int]]]
) -> dict[Any, int]:
    """The unique visitors of the visits of each of these values."""
    if not rows:
        return {}
    visits = [row["visits"] for _, row in rows]
    unique = counting.per_value(query.dialect, sum(visits), len(visits), room=max(visits))
    bound = len(query.params.values)
    values = ", ".join(query.bind(value) for value, _ in rows)
    found = run(
        f"SELECT {column}, {unique.sql} FROM {condition} AND {column} IN ({values}) GROUP BY {column}",
        query.params.values,
    )
    for name in list(query.params.values)[
        bound:
    ]:  # this query's values only: the next queries reuse ``query``
        del query.params.values[name]
    return {value: unique.read(n) for value, n in found}


def _by_visitors(
    run: Run, query: Query, column: str, condition: str, page: Page
) -> tuple[list[tuple[Any, dict[str, int]]], dict[Any, int]] | None:
    """The page of values ranked by visitors, counting the visitors of as few values as it can;
    None when more values than ``FETCH`` could still reach the page (many values with few visits
    each), where counting every value at once costs less."""
    wanted = int(page.offset) + int(page.limit) + 1
    fetch = max(FETCH, 4 * wanted)
    rows = _visit_rows(run, query, column, condition, "visits", f" LIMIT {fetch}")
    complete = len(rows) < fetch  # every value is in ``rows``
    counted = _visitors_of(run, query, column, condition, rows[:wanted])
    while True:
        best = sorted(counted.items(), key=lambda item: (-item[1], item[0]))[:wanted]
        floor = best[-1][1] if len(best) == wanted else 0
        if not complete and rows[-1][1]["visits"] >= floor:  # unread values could still enter
            return None
        more = [(value, row) for value, row in rows if row["visits"] >= floor and value not in counted]
        if not more:
            break
        counted.update(_visitors_of(run, query, column, condition, more))
    figures = dict(rows)
    page_of = best[int(page.offset) :]
    return [(value, figures[value]) for value, _ in page_of], counted


def _event_row(value: str, visitors: int, count_name: str, count: int) -> dict[str, Any]:
    row = {"value": value, "visitors": visitors, "visits": 0, "pageviews": 0, "events": 0}
    row.update(bounces=0, duration=0)
    row[count_name] = int(count)
    return row


def _event_breakdown(
    run: Run,
    query_parts: Query,
    dim: str,
    page: Page,
    kept: Kept | None = None,
    days: Sequence[Span] = (),
) -> list[dict[str, Any]]:
    """Pages (by pageviews) or custom events (by count). The rows are ranked by a plain count, so
    the page of rows is chosen first and unique visitors are counted for those values only: with
    a bitmap each when they hold many events (``reports.counting``), exactly otherwise."""
    if dim == "page":
        column, where, count_name = "path", f"name = '{PAGEVIEW}'", "pageviews"
    else:
        column, where, count_name = "name", f"name NOT IN ('{PAGEVIEW}', {_MEASUREMENTS})", "events"
    query_parts.by_rows(run)
    condition = query_parts.events(where) + _search(query_parts, column, page)
    by_days = kept if days and not page.search and not page.values else None  # ranked by kept days
    unique = (
        selection(
            run, query_parts.dialect, query_parts.site_id, query_parts.span, int(page.limit) + 1, whole=True
        )
        if query_parts.filters
        else None
    )
    kept_days = by_days is not None and query_parts.dialect.bitmap is not None  # exact counts too
    if unique is not None and (kept_days or unique is not counting.EXACT):
        if by_days is not None:
            ranked, people = table_days.ranked(run, query_parts, column, where, page, by_days, days, unique)
            if not all(value in people for value, _ in ranked):  # not counted as they were ranked
                shown = [value for value, _ in ranked]
                people = day_visitors.visitors(run, query_parts, column, where, shown, by_days, days, unique)
            return _with_visitors(run, query_parts, column, condition, ranked, count_name, unique, people)
        chosen = f"SELECT {column} AS value, visitor FROM events WHERE {condition}"
        return _ranked_once(run, query_parts, chosen, count_name, page, unique)
    if query_parts.dialect.bitmap is None or _selects_by_events(
        query_parts
    ):  # one pass: the selection is the costly part
        query = (
            f"SELECT {column} AS value, count(*) AS n, count(DISTINCT visitor) AS people FROM events "
            f"WHERE {condition} GROUP BY {column} ORDER BY n DESC, value{_window(page)}"
        )
        found = run(query, query_parts.params.values)
        return [_event_row(value, int(people), count_name, int(n)) for value, n, people in found]
    if by_days is not None and not query_parts.filters:
        ranked = table_days.ranked(run, query_parts, column, where, page, by_days, days)[0]
    else:
        ranked = run(
            f"SELECT {column} AS value, count(*) AS n FROM events WHERE {condition} "
            f"GROUP BY {column} ORDER BY n DESC, value{_window(page)}",
            query_parts.params.values,
        )
    counts = [int(n) for _, n in ranked] or [0]
    unique = counting.per_value(query_parts.dialect, sum(counts), len(counts), room=max(counts))
    set_bits: dict[object, object] | None = None
    if by_days is not None and not query_parts.filters:  # each ended day's bitmaps kept
        shown = [value for value, _ in ranked]
        set_bits = day_visitors.visitors(run, query_parts, column, where, shown, by_days, days, unique)
    return _with_visitors(run, query_parts, column, condition, ranked, count_name, unique, set_bits)


def _with_visitors(
    run: Run,
    query: Query,
    column: str,
    condition: str,
    ranked: Sequence[tuple[str, int]],
    count_name: str,
    unique: counting.Visitors,
    counted: dict[object, object] | None = None,
) -> list[dict[str, Any]]:
    """The ranked values' rows with their unique visitors, counted in one pass over the rows of
    ``condition``: each row's value is looked up in the shown values' list (its position, a small
    integer to group by). Joining the rows with the shown values instead had the engine test every
    row of the span against them while scanning, before the filters' selection (under the page
    filter /pricing at 10 M events: about 110 ms of CPU more; unfiltered, 196 -> 171). ``counted``:
    the values' visitors already counted (``table_days``), when it holds every one of them."""
    if counted and all(value in counted for value, _ in ranked):
        return [_event_row(value, unique.read(counted[value]), count_name, int(n)) for value, n in ranked]
    if not ranked:
        return []
    position = query.dialect.position.format(array=query.bind([value for value, _ in ranked]), value=column)
    found = run(
        f"SELECT k, {unique.sql} FROM (SELECT {position} AS k, visitor FROM events WHERE {condition}) AS t "
        "WHERE k > 0 GROUP BY k",
        query.params.values,
    )
    people = {int(k): n for k, n in found}
    return [
        _event_row(value, unique.read(people.get(k)), count_name, int(n))
        for k, (value, n) in enumerate(ranked, start=1)
    ]


def _ranked_once(
    run: Run, query: Query, chosen: str, count_name: str, page: Page, unique: counting.Visitors
) -> list[dict[str, Any]]:
    """Pages, custom events or props of the visits filters select (``chosen``: their rows' value and
    visitor), in one query that reads the selection once: its rows kept (the semi-join over the
    span's events is the costly part), ranked by their count, and unique visitors counted for the
    shown values only, on a bitmap each (``unique``: the span holds enough visits, ``selection``;
    below that, one pass counting every value exactly costs less than keeping the rows). Page
    /pricing, 30 days, 10 M events: 641 -> 480 ms of CPU (every path's exact distinct visitors
    before); the props of "signup" under the event filter at 100 M events: 942 -> 540."""
    ranked = f"SELECT value, count(*) AS n FROM sel GROUP BY value ORDER BY n DESC, value{_window(page)}"
    found = run(
        f"WITH sel AS MATERIALIZED ({chosen}), ranked AS ({ranked}) "
        f"SELECT r.value, r.n, {unique.sql} FROM sel JOIN ranked AS r ON sel.value = r.value "
        "GROUP BY r.value, r.n ORDER BY r.n DESC, r.value",
        query.params.values,
    )
    return [_event_row(value, unique.read(people), count_name, int(n)) for value, n, people in found]


def _prop_breakdown(
    run: Run, query_parts: Query, name: str, page: Page, kept: Kept | None = None, days: Sequence[Span] = ()
) -> list[dict[str, Any]]:
    """Props of one custom event: ``value`` is ``key\x1fvalue``. Under any filter with ``kept`` and
    the span's ``days``, from counts and visitors kept per ended day, as the pages table's
    (``table_days``); else under filters on a big span, ranked by count with the shown rows'
    visitors on bitmaps (``_ranked_once``); unfiltered with ``kept``, ranked by counts kept per
    ended day and the shown rows' visitors united from what is kept per span (``_props_by_days``);
    else counted exactly in one pass."""
    query_parts.by_rows(run)
    condition = query_parts.events(f"name = {query_parts.bind(name)}")
    search = _search(query_parts, "kv", page)
    rows = f"SELECT {query_parts.dialect.explode('props')} AS kv, visitor FROM events WHERE {condition}"
    unique = (
        selection(
            run, query_parts.dialect, query_parts.site_id, query_parts.span, int(page.limit) + 1, whole=True
        )
        if query_parts.filters
        else None
    )
    by_days = bool(
        kept is not None and days and query_parts.dialect.bitmap and not page.search and not page.values
    )
    if unique is not None and (by_days or unique is not counting.EXACT):  # exact: by kept days only
        if by_days:
            assert kept is not None
            column, where = query_parts.dialect.explode("props"), "name = {name}"
            ranked, people = table_days.ranked(
                run, query_parts, column, where, page, kept, days, unique, name
            )
            shown = [value for value, _ in ranked]
            if not all(value in people for value in shown):  # not counted as they were ranked
                people = day_visitors.visitors(
                    run, query_parts, column, where, shown, kept, days, unique, name=name
                )
            if all(value in people for value in shown):  # else (bitmaps over the layer's share) read at once
                return [
                    _event_row(value, unique.read(people[value]), "events", int(n)) for value, n in ranked
                ]
        chosen = f"SELECT kv AS value, visitor FROM ({rows}) AS t WHERE 1 = 1{search}"
        return _ranked_once(run, query_parts, chosen, "events", page, unique)
    if unique is None and kept is not None and days and not page.search and not page.values:
        kept_rows = _props_by_days(run, query_parts, name, page, kept, days)
        if kept_rows is not None:
            return kept_rows
    query = (
        f"SELECT kv, count(*) AS n, count(DISTINCT visitor) AS people FROM ({rows}) AS t "
        f"WHERE 1 = 1{search} GROUP BY kv ORDER BY n DESC, kv{_window(page)}"
    )
    return [
        _event_row(kv, int(people), "events", int(n))
        for kv, n, people in run(query, query_parts.params.values)
    ]


def _props_by_days(
    run: Run, query_parts: Query, name: str, page: Page, kept: Kept, days: Sequence[Span]
) -> list[dict[str, Any]] | None:
    """The unfiltered props of ``name`` as the unfiltered custom events table counts them: ranked by
    each ended day's counts kept (``table_days.ranked``), and the shown rows' visitors united from
    what is kept per span (bitmaps, or keys where counted exactly: ``day_visitors.visitors``).
    None where those are not kept (over their share of the layer): the caller counts them in one
    pass.
    The 30-day props of "signup" at 100 M events (719,000 events of the biggest site): every
    request read and exploded them all."""
    if query_parts.dialect.bitmap is None:
        return None
    column, where = query_parts.dialect.explode("props"), "name = {name}"
    ranked = table_days.ranked(run, query_parts, column, where, page, kept, days, name=name)[0]
    counts = [int(n) for _, n in ranked] or [0]
    unique = counting.per_value(query_parts.dialect, sum(counts), len(counts), room=max(counts))
    shown = [value for value, _ in ranked]
    people = day_visitors.visitors(run, query_parts, column, where, shown, kept, days, unique, name=name)
    if not all(value in people for value in shown):
        return None
    return [_event_row(value, unique.read(people[value]), "events", int(n)) for value, n in ranked]
