"""Imported history in one report's answer: which figures take it, and adding it.

The summary and the day-by-day series add each imported day whose local midnight lies in the
period; a breakdown of a dimension imports hold sums each value's collected and imported figures
and ranks them together. Filters, the hourly series and the other tables leave it out; the
answer's ``imported`` says whether it is in, or why not (docs/reports.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sightline.imports import figures as imported_figures
from sightline.imports.figures import Days, ImportedFigures
from sightline.reports import queries, tables
from sightline.reports.filters import Filters
from sightline.reports.period import Period, local_midnight
from sightline.store.dialects import Dialect


class History:
    """The imported history one report request may add (``figures`` None: none at all)."""

    def __init__(
        self, figures: ImportedFigures | None, site_id: int, zone: ZoneInfo, wanted: bool, filters: Filters
    ) -> None:
        self.figures = figures
        self.site_id = site_id
        self.zone = zone
        self.wanted = wanted
        self.filters = filters
        # The spans imported figures went into: the period's, its comparison's, or both.
        self.added: set[queries.Span] = set()
        self._any: bool | None = None

    def left_out(self, *, hourly: bool = False, dimension: str | None = None) -> str | None:
        """Why imported figures stay out of this answer; None: they go in (where there are any)."""
        if self.figures is None:
            return "unavailable"
        if self._any is None:
            self._any = self.figures.any(self.site_id)
        if not self._any:
            return "none"
        if not self.wanted:
            return "turned_off"
        if self.filters:
            return "filters"
        if hourly:
            return "hourly"
        if dimension is not None and dimension not in imported_figures.DIMENSIONS:
            return "dimension"
        return None

    def note(self, reason: str | None, span: queries.Span | None = None) -> dict[str, Any]:
        """The answer's ``imported``: whether imported figures are in the figures of ``span`` (the
        period shown; not its comparison), else why not."""
        if reason is None and (span not in self.added if span is not None else not self.added):
            reason = "none"  # none in this period
        return {"included": reason is None, "reason": reason}

    def days(self, period: Period) -> Days | None:
        """The days whose local midnight lies in the period (none for realtime's minutes)."""
        if period.interval == "minute":
            return None
        first = period.start.astimezone(self.zone).date()
        if local_midnight(first, self.zone) < period.start:
            first += timedelta(days=1)
        last = (period.end - timedelta(microseconds=1)).astimezone(self.zone).date()
        return Days(first, last) if first <= last else None

    def add_totals(self, out: dict[str, int], period: Period, reason: str | None) -> None:
        days = self.days(period)
        if reason is not None or days is None or self.figures is None:
            return
        extra = self.figures.totals(self.site_id, days)
        if extra is not None:
            self.added.add((period.start, period.end))
            for name in queries.FIGURES:
                out[name] += extra[name]

    def add_points(
        self, spans: Sequence[queries.Span], points: list[dict[str, int]], period: Period, reason: str | None
    ) -> None:
        days = self.days(period)
        if reason is not None or days is None or self.figures is None:
            return
        per_day = self.figures.per_day(self.site_id, days)
        for (start, end), point in zip(spans, points, strict=True):
            day = start.astimezone(self.zone).date()
            extra = per_day.get(day)
            if extra is not None and start <= local_midnight(day, self.zone) < end:
                self.added.add((period.start, period.end))
                for name in queries.FIGURES:
                    point[name] += extra[name]

    def merged(
        self,
        run: queries.Run,
        dialect: Dialect,
        span: queries.Span,
        days: Days,
        dim: str,
        order: str,
        page: queries.Page,
    ) -> tuple[list[dict[str, Any]], bool]:
        """The collected and imported rows of one dimension, summed by value: the top rows of
        each (as many as this page and the ones before it need), each completed by the other
        side's figures for its value, ranked together."""
        assert self.figures is not None
        wanted = page.offset + page.limit + 1
        end = page.offset + page.limit

        def collected(rows: int, values: tuple[str, ...] = ()) -> list[dict[str, Any]]:
            found, _ = tables.breakdown(
                run,
                dialect,
                self.site_id,
                span,
                self.filters,
                dim,
                order,
                queries.Page(rows, 0, page.search, values),
            )
            return found

        store_rows = collected(wanted)
        found = self.figures.top(self.site_id, days, dim, order, wanted, page.search)
        if not found:
            return store_rows[page.offset : end], len(store_rows) > end
        self.added.add(span)
        merged = {row["value"]: dict(row) for row in store_rows}
        missing = tuple(row["value"] for row in found if row["value"] not in merged)
        if missing:
            merged.update({row["value"]: dict(row) for row in collected(len(missing), missing)})
        imported = {row["value"]: row for row in found}
        others = [value for value in merged if value not in imported]
        if others:
            rest = self.figures.top(self.site_id, days, dim, order, len(others), values=others)
            imported.update({row["value"]: row for row in rest})
        for value, extra in imported.items():
            row = merged.setdefault(value, {"value": value, **dict.fromkeys(imported_figures.SUMS, 0)})
            for name in imported_figures.SUMS:
                row[name] = int(row.get(name, 0)) + extra[name]
            if dim == "exit":
                row["bounces"] = row["duration"] = 0
        ranked = sorted(merged.values(), key=lambda row: (-int(row[order]), str(row["value"])))
        return ranked[page.offset : end], len(ranked) > end
