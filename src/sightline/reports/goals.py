"""The Goals panel: every goal of a site in one query on the store, however many goals it has.

One scan of the period's events (with filters: every event of the selected visits), grouped by
visitor, counts per goal its converting visitors (unique), its conversions (matching events) and
the sum and count of its revenue amounts, beside the period's unique visitors (the conversion
rate's denominator).
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sightline.reports import rules
from sightline.reports.filters import Filters, Goal
from sightline.reports.queries import Page, Query, Run, Span
from sightline.store.dialects import Dialect


def breakdown(
    run: Run, d: Dialect, site_id: int, span: Span, filters: Filters, goals: Sequence[Goal], page: Page
) -> tuple[list[dict[str, Any]], bool]:
    """Rows ``{goal_id, value, visitors, conversions, conversion_rate, revenue?}``, the most
    converting visitors first, and whether more rows follow."""
    chosen = [g for g in goals if not page.search or page.search.lower() in g.name.lower()]
    if not chosen:
        return [], False
    q = Query(d, site_id, span, filters)
    # One pass over the period's events, grouped by visitor: each goal's condition is evaluated
    # once per event (h{i}, with its amount a{i}); per visitor, whether they converted on it, how
    # often, and their revenue; then the sums over visitors, and the visitors themselves (the
    # conversion rate's denominator). One hash table of visitors instead of one per goal.
    inner = ["visitor"]
    per_visitor = ["visitor"]
    columns = ["count(*)"]
    for i, goal in enumerate(chosen):
        inner.append(f"{rules.goal_condition(d, q.bind, goal)} AS h{i}")
        per_visitor.append(f"max(CASE WHEN h{i} THEN 1 ELSE 0 END) AS c{i}")
        per_visitor.append(f"sum(CASE WHEN h{i} THEN 1 ELSE 0 END) AS n{i}")
        columns += [f"sum(c{i})", f"sum(n{i})"]
        if goal.revenue_prop is not None:
            inner.append(f"{rules.prop_number(d, q.bind, goal.revenue_prop)} AS a{i}")
            per_visitor.append(f"sum(CASE WHEN h{i} THEN a{i} END) AS r{i}")
            per_visitor.append(f"count(CASE WHEN h{i} THEN a{i} END) AS k{i}")
            columns += [f"sum(r{i})", f"sum(k{i})"]
    query = (
        f"SELECT {', '.join(columns)} FROM (SELECT {', '.join(per_visitor)} FROM "
        f"(SELECT {', '.join(inner)} FROM events WHERE {q.events()}) AS e GROUP BY visitor) AS v"
    )
    row = run(query, q.p.values)[0]
    visitors = int(row[0] or 0)
    figures = iter(row[1:])
    out: list[dict[str, Any]] = []
    for goal in chosen:
        converted, conversions = int(next(figures) or 0), int(next(figures) or 0)
        item: dict[str, Any] = {
            "goal_id": goal.id,
            "value": goal.name,
            "visitors": converted,
            "conversions": conversions,
            "conversion_rate": round(converted / visitors, 4) if visitors else 0.0,
        }
        if goal.revenue_prop is not None:
            total, counted = float(next(figures) or 0), int(next(figures) or 0)
            item["revenue"] = {
                "total": round(total, 2),
                "average": round(total / counted, 2) if counted else 0.0,
                "currency": goal.currency,
            }
        out.append(item)
    out.sort(key=lambda r: (-r["visitors"], -r["conversions"], r["value"]))
    window = out[page.offset : page.offset + page.limit]
    return window, len(out) > page.offset + page.limit
