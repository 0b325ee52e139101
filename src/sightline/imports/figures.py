"""Imported figures as reports read them: sums over a site's days from its finished imports.

Days are the site's calendar days; a report adds an imported day when the day's local midnight
lies in its period. Visitors are summed over days (and over rows of a table), as Plausible
counts imported visitors: the import carries no visitor codes to count once.

Imported sources are named as live visits' sources are (``sightline.source_names``: a host such
as ``google.com`` reads ``Google``), when read, so one source is one row beside live visits and
imports stored before any naming change are named alike; the rows one name gathers are summed.

Sums never overflow: on PostgreSQL ``SUM`` of a bigint is a numeric; on SQLite ``SUM`` of
integers fails beyond 2**63, so SQLite's ``TOTAL`` (a float) sums instead. Imports bound every
number (``formats.MAX_COUNT``), so the sums stay exact; a database holding larger numbers from
elsewhere still answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import ColumnElement, Engine, func, select

from sightline import dimensions
from sightline.database.schema import imported_figures as f
from sightline.database.schema import imports
from sightline.source_names import named

SUMS = ("visitors", "visits", "pageviews", "bounces", "duration", "events")
# Dimensions whose imported values are named when read, as live ones are named by ingest.
NAMED = frozenset({"source"})
# The reports' dimensions an import can hold, by the queries' name (``sightline.dimensions``); a
# channel is Plausible's sources, each row's source and UTM tags mapped by ``sightline.channels``.
DIMENSIONS = frozenset(d.key for d in dimensions.supporting(dimensions.IMPORT))


@dataclass(frozen=True)
class Days:
    """The imported days of one period: ``first`` to ``last``, inclusive."""

    first: date
    last: date


class ImportedFigures:
    """Reads ``imported_figures`` of finished imports (status ``done``)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _where(self, site_id: int, days: Days, dimension: str) -> list[ColumnElement[bool]]:
        finished = select(imports.c.id).where(imports.c.site_id == site_id, imports.c.status == "done")
        return [
            f.c.site_id == site_id,
            f.c.dimension == dimension,
            f.c.day >= days.first,
            f.c.day <= days.last,
            f.c.import_id.in_(finished),
        ]

    def any(self, site_id: int) -> bool:
        """Whether the site has a finished import."""
        query = select(imports.c.id).where(imports.c.site_id == site_id, imports.c.status == "done").limit(1)
        with self.engine.connect() as conn:
            return conn.execute(query).first() is not None

    def _sum(self, name: str) -> Any:
        if self.engine.dialect.name == "sqlite":
            return func.total(f.c[name])
        return func.coalesce(func.sum(f.c[name]), 0)

    def first_day(self, site_id: int) -> date | None:
        """The earliest day of the site's finished imports, if any."""
        finished = select(imports.c.id).where(imports.c.site_id == site_id, imports.c.status == "done")
        query = select(func.min(f.c.day)).where(f.c.site_id == site_id, f.c.import_id.in_(finished))
        with self.engine.connect() as conn:
            day = conn.execute(query).scalar()
        return date.fromisoformat(str(day)[:10]) if day is not None else None

    def _sums(self) -> list[Any]:
        return [self._sum(name) for name in SUMS]

    def totals(self, site_id: int, days: Days) -> dict[str, int] | None:
        """The site's imported totals over the days; None when no day has any."""
        query = select(func.count(), *self._sums()).where(*self._where(site_id, days, "total"))
        with self.engine.connect() as conn:
            count, *sums = conn.execute(query).one()
        return dict(zip(SUMS, map(int, sums), strict=True)) if count else None

    def per_day(self, site_id: int, days: Days) -> dict[date, dict[str, int]]:
        query = select(f.c.day, *self._sums()).where(*self._where(site_id, days, "total")).group_by(f.c.day)
        with self.engine.connect() as conn:
            return {day: dict(zip(SUMS, map(int, sums), strict=True)) for day, *sums in conn.execute(query)}

    def top(
        self,
        site_id: int,
        days: Days,
        dimension: str,
        order: str,
        limit: int,
        search: str | None = None,
        values: Sequence[str] = (),
    ) -> list[dict[str, Any]]:
        """Rows ``{"value", visitors, visits, ...}`` of one dimension, the largest ``order`` first;
        with ``values``, those values only."""
        if dimension in NAMED:
            return self._named_top(site_id, days, dimension, order, limit, search, values)
        where = self._where(site_id, days, dimension)
        if search:
            where.append(func.lower(f.c.value).contains(search.lower(), autoescape=True))
        if values:
            where.append(f.c.value.in_(list(values)))
        sums = [self._sum(name).label(f"n_{name}") for name in SUMS]
        ranked = sums[SUMS.index(order)] if order in SUMS else sums[1]
        query = (
            select(f.c.value, *sums)
            .where(*where)
            .group_by(f.c.value)
            .order_by(ranked.desc(), f.c.value)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [{"value": value, **dict(zip(SUMS, map(int, sums), strict=True))} for value, *sums in rows]

    def _named_top(
        self,
        site_id: int,
        days: Days,
        dimension: str,
        order: str,
        limit: int,
        search: str | None,
        values: Sequence[str],
    ) -> list[dict[str, Any]]:
        """``top`` of a dimension whose stored values are named when read: every stored value's
        sums, gathered by name, then searched, chosen and ranked by name."""
        query = (
            select(f.c.value, *self._sums()).where(*self._where(site_id, days, dimension)).group_by(f.c.value)
        )
        by_name: dict[str, dict[str, int]] = {}
        with self.engine.connect() as conn:
            for value, *sums in conn.execute(query):
                row = by_name.setdefault(named(str(value)), dict.fromkeys(SUMS, 0))
                for name, amount in zip(SUMS, sums, strict=True):
                    row[name] += int(amount)
        wanted = set(values)
        needle = search.lower() if search else None
        key = order if order in SUMS else SUMS[1]
        chosen = sorted(
            (
                (name, sums)
                for name, sums in by_name.items()
                if (not wanted or name in wanted) and (needle is None or needle in name.lower())
            ),
            key=lambda item: (-item[1][key], item[0]),
        )
        return [{"value": name, **sums} for name, sums in chosen[:limit]]
