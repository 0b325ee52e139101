"""The time series' complete spans (days, or hours) of a big period, kept between requests: each
span's figures (visitors, visits, pageviews, bounces, duration), so that a 30-day chart and its
comparison read today's span and the spans that changed instead of every span's visits and
crossing events (``timeseries._estimated``), as the Goals panel keeps its days
(``reports.goal_days``).

They are kept in the one layer of kept figures (``reports.kept_figures``), keyed by site, span and how
the request counts visitors (the bitmap's SQL, which a request sizes from its period's visits:
another period may ask for another size). A span's figures are a function of the events in the
span and of the visits that started in it, which is what the store's change records name, so the
layer drops a span exactly when a write touched it. Only spans that ended before the request are
kept; the span still going on is read every time.

Unfiltered reports on the embedded store only (ClickHouse counts them exactly and fast). The pages
and custom events tables keep each ended day's count per value the same way (``table_days``:
their ranking summed over the kept days), for days of at most ``MOST_VALUES`` values. The summary
keeps the totals of a period that ended (a comparison's earlier period) the same way (``ended``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from datetime import UTC, datetime
from typing import TypeVar

from sightline.reports.kept_figures import Kept
from sightline.reports.queries import Span
from sightline.store.epoch import micros

MOST_VALUES = 2_000  # a span whose figures are more (a table's values) is not kept
FIGURE_BYTES = 80  # a kept figure's share of the layer (a value and its count in a dict)
Figures = dict[str, int]
Name = TypeVar("Name", bound=Hashable)  # what a kept figure is of (a value of a table)
Value = TypeVar("Value")  # a kept figure (a count; a visit table's value: its figures)


def series(
    kept: Kept,
    site_id: int,
    spans: Sequence[Span],
    counted: str,
    read: Callable[[Sequence[Span]], list[dict[Name, Value]]],
) -> list[dict[Name, Value]]:
    """Each span's figures: kept ones as kept, the others ``read`` (a run of adjacent spans at
    a time) and kept when the span has ended. ``counted``: how the request counts visitors."""
    seen = kept.sync(site_id)
    now = micros(datetime.now(UTC))
    keys = [(site_id, micros(a), micros(b), ("series", counted)) for a, b in spans]
    out: list[dict[Name, Value] | None] = []
    for key in keys:
        found = kept.get(key, seen)
        out.append(dict(found) if found is not None else None)
    start = 0
    while start < len(spans):
        if out[start] is not None:
            start += 1
            continue
        end = start
        while end < len(spans) and out[end] is None:
            end += 1
        for index, figures in enumerate(read(spans[start:end]), start=start):
            out[index] = figures
            if keys[index][2] <= now and len(figures) <= MOST_VALUES:
                kept.put(keys[index], dict(figures), seen, FIGURE_BYTES * (len(figures) + 1))
        start = end
    return [figures for figures in out if figures is not None]


def ended(kept: Kept | None, site_id: int, span: Span, counted: str, read: Callable[[], Figures]) -> Figures:
    """One span's figures (``counted``: what they are), kept between requests once the span has
    ended (a comparison's earlier period), read each time otherwise or without a layer."""
    if kept is None or micros(span[1]) > micros(datetime.now(UTC)):
        return read()
    return series(kept, site_id, [span], counted, lambda _: [read()])[0]
