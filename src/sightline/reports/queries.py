"""Every report as one query on the analytics store, written once for both engines.

Visit figures (visits, bounces, duration, entry and exit pages, sources and the other visit
attributes) come from the ``visits`` table: the visits that started in the span. Filters select
visits: ``source`` is a test on the visit's row, ``page`` (viewed that path) and ``event`` (sent
that event) ask whether one of its events matches. Without filters, unique visitors and
pageviews count the events inside the span; with filters, the selected visits whole.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sightline import dimensions
from sightline.reports import counting, rules
from sightline.reports.filters import CONTAINS, IS, IS_NOT, VISIT_FILTERS, Filter
from sightline.reports.filters import Filters as Filters  # re-exported: callers import it from here
from sightline.store.dialects import Dialect, Params
from sightline.store.epoch import micros
from sightline.store.kept_selections import HIGH, LOW
from sightline.store.schema import PAGEVIEW

Span = tuple[datetime, datetime]
Run = Callable[[str, dict[str, Any]], list[tuple[Any, ...]]]
FIGURES = ("visitors", "visits", "pageviews", "bounces", "duration")
# Dimensions read from the visit's row: the queries' name -> the visits table's column or expression.
VISIT_COLUMNS = {
    d.key: d.column for d in dimensions.DIMENSIONS if d.table == "visits" and d.column is not None
}
VIEWED = f"name = '{PAGEVIEW}'"
# Filters on attributes every event's row carries as its visit has them (``Query.by_rows``).
ROW_FILTERS = frozenset(d.name for d in dimensions.supporting(dimensions.FILTER) if d.on_rows)
Keep = Callable[[str, dict[str, Any], int, tuple[int, int]], "str | None"]  # a store's ``keep`` (``Runner``)
# The columns of a selected visit kept (``Query.keep``): the whole row, which the summary, the time
# series and the visit tables read (under the page filter /pricing at 10 M events, the sources
# table reading them instead of probing the period's visits: about 280 -> 60 ms of CPU).
KEPT = "*"
MAX_RANGES = 64  # stretches of time read for the events of visits crossing an edge; more: one


class Query:
    """One query's SQL pieces and bound values for one site, span and set of filters."""

    def __init__(self, dialect: Dialect, site_id: int, span: Span, filters: Filters) -> None:
        self.dialect = dialect
        self.params = Params(dialect)
        self.filters = filters
        self.site_id, self.span = site_id, span
        self.last: int | None = None  # the last event of the span's visits (``bound``)
        self.kept: str | None = None  # a table of the selected visits' rows in the store (``keep``)
        self.moved: list[int] | None = None  # visits whose events' rows may be stale (``by_rows``)
        self.within = False  # the selection's start also bounded by the store's ``kept_low``/``kept_high``
        self.site = self.params.bind(site_id)
        self.low = self.params.bind(micros(span[0]))
        self.high = self.params.bind(micros(span[1]))

    def bind(self, value: Any) -> str:
        return self.params.bind(value)

    def duration(self) -> str:
        """Whole seconds from a visit's first event to its last (half a second rounds up)."""
        return self.dialect.div("last - start + 500000", "1000000")

    def sums(self, visitors: bool = True, unique: counting.Visitors = counting.EXACT) -> list[str]:
        """Visitors (counted as ``unique`` says), visits, pageviews, bounces and duration of the
        visits a query selects (visitors 0 when ``visitors`` is false: the costliest figure, left
        to a query that needs it)."""
        return [
            unique.sql if visitors else "0",
            "count(*)",
            "sum(pageviews)",
            f"sum({self.bounce()})",
            f"sum({self.duration()})",
        ]

    @staticmethod
    def bounce() -> str:
        """1 for a visit that bounced (at most one pageview and no custom event), else 0."""
        return "CASE WHEN pageviews <= 1 AND events = 0 THEN 1 ELSE 0 END"

    def selected(self) -> str:
        """The WHERE clause of the visits the filters select (they started in the span)."""
        parts = [f"site_id = {self.site}", f"start >= {self.low}", f"start < {self.high}"]
        if self.within:
            parts += [
                f"start >= {self.dialect.param(LOW, 'Int64')}",
                f"start < {self.dialect.param(HIGH, 'Int64')}",
            ]
        if self.kept is not None:
            return " AND ".join([*parts, f"visit IN (SELECT visit FROM {self.kept})"])
        parts.extend(self._rule(rule) for rule in self.filters.rules)
        return " AND ".join(parts)

    def chosen(self) -> str:
        """FROM and WHERE of the selected visits' rows (every column of the visits table)."""
        if self.kept is None:
            return f"{self.dialect.visits} WHERE {self.selected()}"
        return f"{self.kept} WHERE site_id = {self.site} AND start >= {self.low} AND start < {self.high}"

    def keep(self, run: Run) -> None:
        """With a filter on the visits' events (page, event, goal, prop), asks the store to keep
        the selected visits' rows (``store.kept_selections``: the dashboard asks a dozen reports of one period
        and filters at once, and the selection, a semi-join of the period's events with its
        visits, is the costliest part of each); the queries then read them from that table. A
        ``run`` without ``keep`` (or a store that keeps nothing: ClickHouse) selects in each query.
        The selection is asked with its span, its visits' start and events bounded by the store's
        ``kept_low`` and ``kept_high`` too: the store brings it up to date by selecting again only
        the visits that started where its data changed since (a live site's last hour or two)."""
        keep: Keep | None = getattr(run, "keep", None)
        if keep is None or self.kept is not None or not by_events(self.filters):
            return
        self.bound(run)
        query = Query(self.dialect, self.site_id, self.span, self.filters)
        query.last, query.within = self.last, True
        sql = f"SELECT {KEPT} FROM {self.dialect.visits} WHERE {query.selected()}"
        self.kept = keep(sql, query.params.values, self.site_id, (micros(self.span[0]), micros(self.span[1])))

    def _rule(self, rule: Filter) -> str:
        """One filter as a condition on the visits table."""
        if rule.name in VISIT_FILTERS:
            column = VISIT_FILTERS[rule.name]
            if dimensions.BY_NAME[rule.name].values == dimensions.PATH:  # a visit without a page: ''
                column = f"coalesce({column}, '')"
            if rule.op == CONTAINS:
                return self.dialect.search.format(column=column, value=self.bind(rule.value))
            return f"{column} {'=' if rule.op == IS else '!='} {self.bind(rule.value)}"
        if rule.name == "page":
            if rule.op == CONTAINS:
                condition = (
                    f"{VIEWED} AND {self.dialect.search.format(column='path', value=self.bind(rule.value))}"
                )
            else:
                condition = f"{VIEWED} AND path = {self.bind(rule.value)}"
        elif rule.name == "event":
            if rule.op == CONTAINS:
                found = self.dialect.search.format(column="name", value=self.bind(rule.value))
                condition = f"name != '{PAGEVIEW}' AND {found}"
            else:
                condition = f"name = {self.bind(rule.value)}"
        elif rule.name == "goal":
            if rule.goal is None:
                raise ValueError(f"goal filter {rule.value} without its goal")
            condition = rules.goal_condition(self.dialect, self.bind, rule.goal)
        elif rule.name == "prop":
            assert rule.key is not None
            condition = rules.prop_is(self.dialect, self.bind, rule.key, rule.value)
        else:
            raise ValueError(f"unknown filter {rule.name!r}")
        return f"visit {'NOT IN' if rule.op == IS_NOT else 'IN'} ({self._visits_with(condition)})"

    def _visits_with(self, condition: str) -> str:
        """Visits with a matching event in the time of the span's visits (a visit's events all fall
        between its start and its last event, and only visits that started in the span are kept)."""
        return f"SELECT visit FROM events WHERE {self.their_time()} AND {condition}"

    def their_time(self) -> str:
        """The events a selected visit can have: from the span's start on, and up to the last event
        of the visits that started in it once ``bound`` has read it."""
        until = f" AND time <= {self.bind(self.last)}" if self.last is not None else ""
        if self.within:  # a selected visit's events are no earlier than its start
            until += f" AND time >= {self.dialect.param(LOW, 'Int64')}"
        return f"site_id = {self.site} AND time >= {self.low}{until}"

    def bound(self, run: Run) -> None:
        """With filters on a span that ended over an hour ago, reads the last event of the visits
        that started in it, so that a filter's reads stop there: a comparison's earlier period read
        every later event (twice the rows at 30 days). A span that reaches now has no event after
        it, and a bound in the SQL itself (a scalar subquery) cost more than it saved there."""
        if (
            self.last is not None
            or not by_events(self.filters)
            or self.span[1] > datetime.now(UTC) - timedelta(hours=1)
        ):
            return
        query = Query(self.dialect, self.site_id, self.span, Filters())
        last = run(
            f"SELECT max(last) FROM {self.dialect.visits} WHERE {query.selected()}", query.params.values
        )[0][0]
        self.last = int(last if last is not None else micros(self.span[0]))

    def by_rows(self, run: Run) -> None:
        """With filters on visit attributes only (source, UTM tags, browser, OS, device, place),
        lets ``events`` test each event's own row instead of a semi-join with the selected visits
        (at 100 M events, the pages table under a source filter: 862 -> 500 ms of CPU). An event
        keeps its visit's attributes, which never change once its first event was fed, and its
        visit's start as it was when the event was fed: later only an earlier event can move a
        start, and never past ``born`` (its first event fed). So only a visit whose start moved
        across the span's start or end can have rows that disagree with it (``start < born``
        around an edge, read here: usually none); those are selected from the visits table."""
        if not self.filters or any(rule.name not in ROW_FILTERS for rule in self.filters.rules):
            return
        query = Query(self.dialect, self.site_id, self.span, Filters())
        moved = run(
            f"SELECT visit FROM {self.dialect.visits} WHERE site_id = {query.site} AND start < born "
            f"AND born >= {query.low} AND start < {query.high}",
            query.params.values,
        )
        self.moved = [int(visit) for (visit,) in moved]

    def events(self, *extra: str) -> str:
        """The span's events; with filters, every event of the selected visits."""
        if not self.filters:
            return " AND ".join(
                [f"site_id = {self.site}", f"time >= {self.low}", f"time < {self.high}", *extra]
            )
        if self.moved is not None:
            rows = [f"visit_start >= {self.low}", f"visit_start < {self.high}"]
            rows.extend(self._rule(rule) for rule in self.filters.rules)
            chosen = " AND ".join(rows)
            if self.moved:
                keys = self.dialect.visit_numbers(self.bind(self.moved))
                chosen = (
                    f"(({chosen} AND visit NOT IN (SELECT {keys})) OR visit IN (SELECT visit FROM "
                    f"{self.dialect.visits} WHERE {self.selected()} AND visit IN (SELECT {keys})))"
                )
            return " AND ".join([self.their_time(), chosen, *extra])
        chosen = f"visit IN (SELECT visit FROM {self.chosen()})"
        return " AND ".join([self.their_time(), chosen, *extra])


def by_events(filters: Filters) -> bool:
    """Whether a filter selects visits by their events (page, event, goal, prop)."""
    return any(rule.name not in VISIT_FILTERS for rule in filters.rules)


def figures_of(row: Sequence[Any]) -> dict[str, int]:
    return {**{name: int(x or 0) for name, x in zip(FIGURES, row, strict=True)}, "events": 0}


def totals(run: Run, dialect: Dialect, site_id: int, span: Span, filters: Filters) -> dict[str, int]:
    query = Query(dialect, site_id, span, filters)
    query.bound(run)
    query.keep(run)
    unique = selection(run, dialect, site_id, span) if filters else counting.EXACT
    # Without filters, visitors come from the span's events below: not counted twice.
    sums = ", ".join(query.sums(visitors=bool(filters), unique=unique))
    visitors, *row = run(f"SELECT {sums} FROM {query.chosen()}", query.params.values)[0]
    figures = figures_of((unique.read(visitors), *row))
    if not filters:  # visitors and pageviews of the events in the span
        figures.update(_visitors_in(run, dialect, site_id, span, figures))
    return figures


def selection(
    run: Run, dialect: Dialect, site_id: int, span: Span, groups: int = 1, whole: bool = False
) -> counting.Visitors:
    """How to count the unique visitors of the visits filters select, in ``groups`` groups (time
    buckets sharing them, or with ``whole`` a table's values, each of which may hold them all): a
    bitmap each when the span holds enough visits for counting's threshold (all of them: as many
    as a selection can hold; one count of the span's visits decides), else exactly."""
    if dialect.bitmap is None:
        return counting.EXACT
    query = Query(dialect, site_id, span, Filters())
    visits = int(
        run(f"SELECT count(*) FROM {dialect.visits} WHERE {query.selected()}", query.params.values)[0][0] or 0
    )
    return counting.per_value(dialect, visits, groups, room=visits if whole else visits // max(1, groups))


def _visitors_in(
    run: Run, dialect: Dialect, site_id: int, span: Span, visits: dict[str, int]
) -> dict[str, int]:
    """Unique visitors and pageviews of the span's events (``visits``: the figures of the visits
    that started in it, whose pageviews size the count). Counted exactly, the events are read.
    Estimated (a big span), from the visits that started in the span, plus the events of the few
    visits that cross its edges (begun before it, or going on past its end; a visit's events all
    fall between its start and last event): their visitors, and their pageviews counted inside the
    span instead of their visit's whole ``pageviews``. A third of the rows; pageviews exact, and no
    visitor missed when a visit's events reached the server out of order (``timeseries``)."""
    query = Query(dialect, site_id, span, Filters())
    unique = counting.visitors(dialect, visits["pageviews"])
    viewed = f"CASE WHEN name = '{PAGEVIEW}' THEN 1 ELSE 0 END"
    if unique is counting.EXACT:
        sql = f"SELECT {unique.sql}, sum({viewed}) FROM events WHERE {query.events()}"
        visitors, pageviews = run(sql, query.params.values)[0]
        return {"visitors": unique.read(visitors), "pageviews": int(pageviews or 0)}
    crossing = run(
        f"SELECT visit, start, last, pageviews FROM {dialect.visits} "
        f"WHERE site_id = {query.site} AND start < {query.high} "
        f"AND last >= {query.low} AND (start < {query.low} OR last >= {query.high})",
        query.params.values,
    )
    query = Query(dialect, site_id, span, Filters())
    who = f"SELECT visitor, 0 AS pv FROM {dialect.visits} WHERE {query.selected()}"
    if crossing:
        who += f" UNION ALL SELECT visitor, {viewed} FROM ({events_of(query, crossing)}) AS e"
    visitors, viewed_there = run(f"SELECT {unique.sql}, sum(pv) FROM ({who}) AS w", query.params.values)[0]
    begun = micros(span[0])  # the crossing visits' pageviews count where each pageview is
    pageviews = visits["pageviews"] - sum(int(pv) for _, start, _, pv in crossing if int(start) >= begun)
    return {"visitors": unique.read(visitors), "pageviews": pageviews + int(viewed_there or 0)}


def events_of(query: Query, crossing: Sequence[tuple[Any, ...]]) -> str:
    """The events (time, visitor, visit, name) inside ``query``'s span of the visits ``crossing``
    lists (rows of visit, start, last, ...), read from the stretches of time those visits cover."""
    first, end = micros(query.span[0]), micros(query.span[1])
    keys = query.bind([int(visit) for visit, *_ in crossing])
    covered = stretches([(max(int(row[1]), first), min(int(row[2]), end - 1)) for row in crossing])
    reads = " UNION ALL ".join(
        f"SELECT time, visitor, visit, name FROM events WHERE site_id = {query.site} "
        f"AND time >= {query.bind(a)} AND time <= {query.bind(b)}"
        for a, b in covered
    )
    listed = query.dialect.visit_numbers(keys)
    return f"SELECT * FROM ({reads}) AS r WHERE visit IN (SELECT {listed})"


def stretches(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The stretches of time (inclusive) that cover ``ranges``, overlapping ones merged; one
    stretch of all of them when there would be more than ``MAX_RANGES``."""
    merged: list[list[int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    if len(merged) > MAX_RANGES:
        return [(merged[0][0], max(b for _, b in merged))]
    return [(a, b) for a, b in merged]


def bucket(query: Query, spans: Sequence[Span], column: str) -> str:
    """The 1-based index of the span ``column`` falls in, for values inside the spans: a division
    per run of spans of one length (one run without a clock change; a few around one, as a
    day of 23 or 25 hours), chosen by a comparison with the runs' edges."""
    return _per_run(
        query,
        spans,
        column,
        lambda low, size, first: f"{query.dialect.div(f'{column} - {low}', size)} + {first + 1}",
    )


def edge_after(query: Query, spans: Sequence[Span], column: str) -> str:
    """The end of the span ``column`` falls in, for values inside the spans (past the end of the
    last span when that span was cut short: a period that ends now)."""
    return _per_run(
        query,
        spans,
        column,
        lambda low, size, _: f"{low} + ({query.dialect.div(f'{column} - {low}', size)} + 1) * {size}",
    )


def _per_run(query: Query, spans: Sequence[Span], column: str, part: Callable[[str, str, int], str]) -> str:
    """``part`` (of a run's first edge, its spans' length and its first span's index) for the run
    of spans of one length ``column`` falls in. A last span cut short (a period that ends now)
    belongs to the run before it: its values divide as the run's do."""
    edges = [micros(a) for a, _ in spans] + [micros(spans[-1][1])]
    runs: list[tuple[int, int, int]] = []  # (first edge, length, index of its first span)
    for index, (low, high) in enumerate(itertools.pairwise(edges)):
        cut_short = index == len(spans) - 1 and runs and high - low < runs[-1][1]
        if not runs or (runs[-1][1] != high - low and not cut_short):
            runs.append((low, high - low, index))
    parts = [part(query.bind(a), query.bind(size), first) for a, size, first in runs]
    if len(parts) == 1:
        return parts[0]
    ends = [query.bind(a) for a, _, _ in runs[1:]]
    branches = " ".join(f"WHEN {column} < {end} THEN {part}" for end, part in zip(ends, parts, strict=False))
    return f"CASE {branches} ELSE {parts[-1]} END"


class Runner:
    """A report's ``run`` on a store, with the store's ``keep`` when it has one (``Query.keep``),
    and its ``columns`` (rows as NumPy arrays, ``day_visitors``)."""

    def __init__(self, store: Any) -> None:
        self.query: Run = store.query
        self.keep: Keep | None = getattr(store, "keep", None)
        self.columns: Callable[[str, dict[str, Any]], dict[str, Any]] | None = getattr(store, "columns", None)

    def __call__(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        return self.query(sql, params)


@dataclass(frozen=True)
class Page:
    """Which rows of a table: ``limit`` from ``offset``, optionally only values containing ``search``
    (and, with ``values``, only those values)."""

    limit: int = 10
    offset: int = 0
    search: str | None = None
    values: tuple[str, ...] = ()


def realtime(run: Run, dialect: Dialect, site_id: int, since: datetime, until: datetime) -> dict[str, Any]:
    """Visitors and pageviews since ``since``, and the pages being viewed."""
    query = Query(dialect, site_id, (since, until), Filters())
    visitors, pageviews = run(
        f"SELECT count(DISTINCT visitor), sum(CASE WHEN name = '{PAGEVIEW}' THEN 1 ELSE 0 END) "
        f"FROM events WHERE {query.events()}",
        query.params.values,
    )[0]
    pages = run(
        f"SELECT path, count(DISTINCT visitor) AS n FROM events WHERE {query.events(VIEWED)} "
        "GROUP BY path ORDER BY n DESC, path LIMIT 10",
        query.params.values,
    )
    return {
        "visitors": int(visitors or 0),
        "pageviews": int(pageviews or 0),
        "pages": [{"value": p, "visitors": int(n)} for p, n in pages],
    }


def per_minute(
    run: Run, dialect: Dialect, site_id: int, since: datetime, minutes: int
) -> list[dict[str, int]]:
    """Visitors and pageviews in each of ``minutes`` whole minutes from ``since`` (a minute's start)."""
    query_parts = Query(dialect, site_id, (since, since + timedelta(minutes=minutes)), Filters())
    at = dialect.div(f"time - {query_parts.low}", "60000000")
    points = [{"visitors": 0, "pageviews": 0} for _ in range(minutes)]
    query = (
        f"SELECT {at} AS i, count(DISTINCT visitor), sum(CASE WHEN name = '{PAGEVIEW}' THEN 1 ELSE 0 END) "
        f"FROM events WHERE {query_parts.events()} GROUP BY i"
    )
    for minute, visitors, pageviews in run(query, query_parts.params.values):
        if 0 <= int(minute) < minutes:
            points[int(minute)] = {"visitors": int(visitors), "pageviews": int(pageviews or 0)}
    return points
