"""Click heatmaps: where a page's visitors click, from the SDK's ``heatmap_click`` events.

Each event names the clicked element (a CSS selector), where in it the click landed (``x`` and
``y``, 0-1 from its left and top edge), the window's width class and how many clicks it stands
for (a burst of fast clicks on one spot is one event). The reports here, each one query on the
store written once for both engines, with the period and every filter of the other reports:

- ``pages``: the pages with clicks (a breakdown: visitors and clicks per path);
- ``elements``: one page's clicked elements (a breakdown: visitors and clicks per selector);
- ``spots``: one page's clicks per element and position bucket (the overlay's dots): the element's
  box cut into ``BUCKETS`` x ``BUCKETS`` cells, each answered by its centre;
- ``widths``: one page's clicks per width class of the console's switch.

Width classes: the SDK sends ``mobile``, ``tablet``, ``laptop`` or ``desktop``; the console's
switch (``VIEWPORTS``) shows phones, tablets and desktops (laptops and desktops, 992 px and up).
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

from typing import Any

from sightline.reports import rules
from sightline.reports.queries import Filters, Page, Query, Run, Span
from sightline.store.dialects import Dialect

BUCKETS = 20
MAX_SPOTS = 5000  # the overlay's dots at most (the most clicked first)
# The console's switch -> the SDK's width classes (sightline.autocapture.events.VIEWPORTS).
VIEWPORTS: dict[str, tuple[str, ...]] = {
    "desktop": ("laptop", "desktop"),
    "tablet": ("tablet",),
    "phone": ("mobile",),
}
Rows = list[dict[str, Any]]


def bucket_centre(index: int) -> float:
    """Where the cell ``index`` (0 to BUCKETS - 1) lies, as a share of the element's size."""
    return round((index + 0.5) / BUCKETS, 4)


def _clicks(query: Query, path: str | None, viewport: str | None) -> str:
    """The period's heatmap clicks (of one page, of one width class) as the rows of a subquery:
    selector, path, visitor, clicks, x, y, viewport."""
    where = [query.events("name = 'heatmap_click'")]
    if path is not None:
        where.append(f"path = {query.bind(path)}")
    width = query.dialect.prop.format(props="props", prefix=query.bind("viewport\x1f"))
    if viewport is not None:
        where.append(f"{width} IN ({', '.join(query.bind(c) for c in VIEWPORTS[viewport])})")
    selector = query.dialect.prop.format(props="props", prefix=query.bind("selector\x1f"))

    def number(key: str) -> str:
        return rules.prop_number(query.dialect, query.bind, key)

    return (
        f"SELECT coalesce({selector}, '') AS selector, path, visitor, {number('clicks')} AS c, "
        f"{number('x')} AS x, {number('y')} AS y, {width} AS wclass "
        f"FROM events WHERE {' AND '.join(where)}"
    )


def _search(query: Query, page: Page, column: str) -> str:
    if not page.search:
        return ""
    return f" AND {query.dialect.search.format(column=column, value=query.bind(page.search))}"


def _window(page: Page) -> str:
    return f" LIMIT {int(page.limit) + 1} OFFSET {int(page.offset)}"


def pages(
    run: Run, dialect: Dialect, site_id: int, span: Span, filters: Filters, page: Page
) -> tuple[Rows, bool]:
    """The pages with heatmap clicks: the path, its visitors and its clicks, most clicked first."""
    query_parts = Query(dialect, site_id, span, filters)
    query = (
        f"SELECT path, count(DISTINCT visitor), sum(c) AS n FROM ({_clicks(query_parts, None, None)}) AS t "
        f"WHERE selector != ''{_search(query_parts, page, 'path')} "
        f"GROUP BY path ORDER BY n DESC, path{_window(page)}"
    )
    rows = [
        {"value": r[0], "visitors": int(r[1]), "clicks": int(r[2] or 0)}
        for r in run(query, query_parts.params.values)
    ]
    return rows[: page.limit], len(rows) > page.limit


def elements(
    run: Run,
    dialect: Dialect,
    site_id: int,
    span: Span,
    filters: Filters,
    page: Page,
    path: str,
    viewport: str | None,
) -> tuple[Rows, bool]:
    """One page's clicked elements: the selector, its visitors and clicks, most clicked first."""
    query_parts = Query(dialect, site_id, span, filters)
    query = (
        "SELECT selector, count(DISTINCT visitor), sum(c) AS "
        f"n FROM ({_clicks(query_parts, path, viewport)}) AS t "
        f"WHERE selector != ''{_search(query_parts, page, 'selector')} "
        f"GROUP BY selector ORDER BY n DESC, selector{_window(page)}"
    )
    rows = [
        {"value": r[0], "visitors": int(r[1]), "clicks": int(r[2] or 0)}
        for r in run(query, query_parts.params.values)
    ]
    return rows[: page.limit], len(rows) > page.limit


def spots(
    run: Run, dialect: Dialect, site_id: int, span: Span, filters: Filters, path: str, viewport: str | None
) -> tuple[Rows, bool]:
    """One page's clicks per element and position cell (``MAX_SPOTS`` at most, most clicked
    first), and whether more cells had clicks."""
    query_parts = Query(dialect, site_id, span, filters)

    def cell(share: str) -> str:
        return f"CAST(least(floor(coalesce({share}, 0) * {BUCKETS}), {BUCKETS - 1}) AS INTEGER)"

    query = (
        "SELECT selector, cx, cy, sum(c) AS n FROM ("
        f"SELECT selector, {cell('x')} AS cx, {cell('y')} AS cy, c "
        f"FROM ({_clicks(query_parts, path, viewport)}) AS s "
        "WHERE selector != '' AND x IS NOT NULL AND y IS NOT NULL"
        f") AS t GROUP BY selector, cx, cy ORDER BY n DESC, selector, cx, cy LIMIT {MAX_SPOTS + 1}"
    )
    rows = [
        {
            "selector": r[0],
            "x": bucket_centre(int(r[1])),
            "y": bucket_centre(int(r[2])),
            "clicks": int(r[3] or 0),
        }
        for r in run(query, query_parts.params.values)
    ]
    return rows[:MAX_SPOTS], len(rows) > MAX_SPOTS


def widths(
    run: Run, dialect: Dialect, site_id: int, span: Span, filters: Filters, path: str
) -> dict[str, int]:
    """One page's clicks in each width class of the console's switch."""
    query_parts = Query(dialect, site_id, span, filters)
    query = (
        f"SELECT wclass, sum(c) FROM ({_clicks(query_parts, path, None)}) "
        "AS t WHERE selector != '' GROUP BY wclass"
    )
    found = {r[0]: int(r[1] or 0) for r in run(query, query_parts.params.values)}
    return {name: sum(found.get(c, 0) for c in classes) for name, classes in VIEWPORTS.items()}
