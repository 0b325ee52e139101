"""The Goals panel: every goal of a site at once, however many goals it has. Unfiltered on DuckDB,
``goal_bitmaps`` counts them (a tally per path, then one bitmap per class of goals), each whole
past day once (``goal_days`` keeps them between requests). On ClickHouse,
and under filters (whose selection of visits is best read once), one exact query:

Each event gets a mask: one bit per goal it converts on. A goal on pages (and an event goal
without a prop) depends only on the event's name and path, so it is evaluated once per distinct
path of the period's pageviews (a few hundred) and joined back, instead of once per event; prop
goals are tested on the event itself. Then, from the masked events: per mask, the events
(conversions) and the revenue amounts; per visitor, the OR of their masks (the goals they
converted on: unique visitors, exact) and the period's unique visitors (the conversion rate's
denominator). With filters: every event of the selected visits.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sightline.reports import goal_bitmaps, rules
from sightline.reports.filters import Filters, Goal
from sightline.reports.goal_bitmaps import Figures
from sightline.reports.goal_days import Days
from sightline.reports.queries import Page, Query, Run, Span
from sightline.store.dialects import Dialect
from sightline.store.schema import PAGEVIEW

CENT = Decimal("0.01")

BITS = 62  # goals per mask column (a signed 64-bit integer in both engines)


def _mask(parts: Sequence[tuple[int, str]]) -> str:
    """The sum of ``bit`` for each ``(bit, condition)`` an event meets (0 when none)."""
    if not parts:
        return "0"
    return " + ".join(f"(CASE WHEN {condition} THEN {bit} ELSE 0 END)" for bit, condition in parts)


def _sql(query: Query, goals: Sequence[Goal]) -> str:
    dialect = query.dialect
    columns = (len(goals) + BITS - 1) // BITS
    static: list[list[tuple[int, str]]] = [[] for _ in range(columns)]  # by name and path
    dynamic: list[list[tuple[int, str]]] = [[] for _ in range(columns)]  # by the event's props
    amounts: list[str] = []
    for index, goal in enumerate(goals):
        condition = rules.goal_condition(dialect, query.bind, goal)
        column, bit = divmod(index, BITS)
        (dynamic if goal.prop_key is not None else static)[column].append((1 << bit, condition))
        if goal.revenue_prop is not None:
            amount = rules.prop_amount(dialect, query.bind, goal.revenue_prop)
            amounts.append(f"CASE WHEN {condition} THEN {amount} END AS a{len(amounts)}")
    # Every pageview path from the span's start on (a superset of the paths the events below
    # read, whatever the filters) with its goals' bits; other events are tested inline.
    paths = (
        f"SELECT DISTINCT name, path FROM events WHERE site_id = {query.site} AND time >= {query.low} "
        f"AND name = '{PAGEVIEW}'"
    )
    looked_up = ", ".join(f"{_mask(static[c])} AS pm{c}" for c in range(columns))
    masks = [
        f"CASE WHEN name = '{PAGEVIEW}' THEN coalesce(pm{c}, 0) ELSE {_mask(static[c])} END"
        + (f" + {_mask(dynamic[c])}" if dynamic[c] else "")
        + f" AS m{c}"
        for c in range(columns)
    ]
    ctes = (
        f"pm AS (SELECT path AS pm_path, {looked_up} FROM ({paths}) AS pp), "
        f"e AS (SELECT visitor, {', '.join(masks + amounts)} FROM events LEFT JOIN pm ON path = pm_path "
        f"WHERE {query.events()})"
    )
    ms = ", ".join(f"m{c}" for c in range(columns))

    def has(goal_index: int, prefix: str) -> str:
        column, bit = divmod(goal_index, BITS)
        return f"{dialect.div(f'{prefix}{column}', str(1 << bit))} % 2 = 1"

    # One row of events: per goal its conversions, then each revenue goal's sum and count.
    sums = "".join(f", sum(a{k}) AS r{k}, count(a{k}) AS k{k}" for k in range(len(amounts)))
    per_mask = f"SELECT {ms}, count(*) AS n{sums} FROM e GROUP BY {ms}"
    events_row = ["0"] + [f"sum(CASE WHEN {has(i, 'm')} THEN n ELSE 0 END)" for i in range(len(goals))]
    events_row += [f"sum(r{k}), sum(k{k})" for k in range(len(amounts))]
    # One row of visitors: the period's, then per goal those who converted.
    ors = ", ".join(f"{dialect.bit_or.format(value=f'm{c}')} AS v{c}" for c in range(columns))
    per_visitor = f"SELECT {ors} FROM e GROUP BY visitor"
    visitors_row = ["count(*)"] + [
        f"sum(CASE WHEN {has(i, 'v')} THEN 1 ELSE 0 END)" for i in range(len(goals))
    ]
    visitors_row += ["NULL, NULL" for _ in amounts]
    return (
        f"WITH {ctes} SELECT 0 AS part, {', '.join(events_row)} FROM ({per_mask}) AS g "
        f"UNION ALL SELECT 1 AS part, {', '.join(visitors_row)} FROM ({per_visitor}) AS v"
    )


def cents(amount: Decimal) -> float:
    """A revenue figure as shown: the exact sum (or average) rounded half up to the cent."""
    return float(amount.quantize(CENT, rounding=ROUND_HALF_UP))


def _figures(run: Run, query: Query, goals: Sequence[Goal]) -> Figures:
    """Every goal's figures from the one query above (exact)."""
    rows = {int(row[0]): row[1:] for row in run(_sql(query, goals), query.params.values)}
    events, people = rows[0], rows[1]
    revenues = iter(events[1 + len(goals) :])
    revenue: list[tuple[Decimal, int] | None] = []
    for goal in goals:
        if goal.revenue_prop is None:
            revenue.append(None)
        else:
            revenue.append((Decimal(next(revenues) or 0), int(next(revenues) or 0)))
    return Figures(
        [int(people[1 + i] or 0) for i in range(len(goals))],
        [int(events[1 + i] or 0) for i in range(len(goals))],
        revenue,
        int(people[0] or 0),
    )


def breakdown(
    run: Run,
    dialect: Dialect,
    site_id: int,
    span: Span,
    filters: Filters,
    goals: Sequence[Goal],
    page: Page,
    days: Days | None = None,
) -> tuple[list[dict[str, Any]], bool]:
    """Rows ``{goal_id, value, visitors, conversions, conversion_rate, revenue?}``, the most
    converting visitors first, and whether more rows follow. With ``days`` (the site's days and
    where complete ones are kept), an unfiltered panel on DuckDB reads only the days not kept."""
    chosen = [g for g in goals if not page.search or page.search.lower() in g.name.lower()]
    if not chosen:
        return [], False
    if dialect.bitmap is None or filters:  # ClickHouse, or a selection of visits best read once: exact
        found = _figures(run, Query(dialect, site_id, span, filters), chosen)
    else:
        found = goal_bitmaps.figures(run, dialect, site_id, span, filters, chosen, days)
    out: list[dict[str, Any]] = []
    for index, goal in enumerate(chosen):
        converted = found.visitors[index]
        item: dict[str, Any] = {
            "goal_id": goal.id,
            "value": goal.name,
            "visitors": converted,
            "conversions": found.conversions[index],
            "conversion_rate": round(converted / found.everyone, 4) if found.everyone else 0.0,
        }
        revenue = found.revenue[index]
        if revenue is not None:
            total, counted = revenue
            item["revenue"] = {
                "total": cents(total),
                "average": cents(total / counted) if counted else 0.0,
                "currency": goal.currency,
            }
        out.append(item)
    out.sort(key=lambda row: (-row["visitors"], -row["conversions"], row["value"]))
    window = out[page.offset : page.offset + page.limit]
    return window, len(out) > page.offset + page.limit
