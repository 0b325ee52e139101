"""Steps of funnels and journeys: ``page:/path`` (a path; ``*`` and ``**`` make it a glob, as goal
rules) or ``event:name`` (a custom event), parsed from the API and turned into conditions; and
which visits of the events they read started in the span (``started``)."""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)

from __future__ import annotations

from dataclasses import dataclass

from sightline.errors import ApiError
from sightline.reports.queries import Query
from sightline.reports.rules import Bind, page_condition
from sightline.store.dialects import Dialect
from sightline.store.schema import PAGEVIEW

PATH_MAX = 2000
EVENT_MAX = 100


@dataclass(frozen=True)
class Step:
    kind: str  # page | event
    value: str

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.value}"

    def condition(self, dialect: Dialect, bind: Bind) -> str:
        if self.kind == "page":
            return f"({page_condition(dialect, bind, 'glob' if '*' in self.value else 'exact', self.value)})"
        return f"(name = {bind(self.value)} AND name != '{PAGEVIEW}')"


def since(query: Query) -> str:
    """The events funnels and journeys read: those of visits that may have started in the span. An
    event's ``visit_start`` (its visit's start when it was fed) is never earlier than the visit's
    start, so ``visit_start >= a`` drops no event of a visit started in the span."""
    return f"site_id = {query.site} AND time >= {query.low} AND visit_start >= {query.low}"


def started(query: Query, visit: str, fed: str) -> str:
    """Whether the visit ``visit``, the least ``visit_start`` of whose events read (``since``) is
    ``fed``, is one the filters select. With filters, a lookup in the selected visits. Without,
    only the visits that cross the span's edges need the visits table (a few), which is cheaper
    than looking up every visit: a visit whose events were fed with a start in the span started in
    it unless it began before (it crosses the span's start), and one whose events read were all fed
    with a start after the span began in it only if it crosses the span's end (an earlier event fed
    later moved its start back).
    """
    dialect = query.dialect
    if query.filters:
        return f"{visit} IN (SELECT visit FROM {dialect.visits} WHERE {query.selected()})"
    crossing_start = (
        f"SELECT visit FROM {dialect.visits} WHERE site_id = "
        f"{query.site} AND start < {query.low} AND last >= {query.low}"
    )
    crossing_end = (
        f"SELECT visit FROM {dialect.visits} WHERE site_id = "
        f"{query.site} AND start >= {query.low} AND start < {query.high} "
        f"AND last >= {query.high}"
    )
    return f"{visit} NOT IN ({crossing_start}) AND ({fed} < {query.high} OR {visit} IN ({crossing_end}))"


def parse_step(field: str, raw: str) -> Step:
    kind, colon, value = raw.partition(":")
    bad = any(ord(ch) < 32 for ch in value)
    if colon and kind == "page" and value.startswith("/") and len(value) <= PATH_MAX and not bad:
        if "?" in value or "#" in value or any(ch.isspace() for ch in value):
            raise ApiError(
                422,
                "invalid_parameter",
                f"The step '{raw[:50]}' is a path only: no query or spaces.",
                field=field,
            )
        return Step("page", value)
    if colon and kind == "event" and 1 <= len(value) <= EVENT_MAX and not bad:
        return Step("event", value)
    raise ApiError(
        422,
        "invalid_parameter",
        f"The parameter '{field}' is page:/path (with * or ** for any characters) or event:name.",
        field=field,
    )
