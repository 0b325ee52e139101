"""Report filters: one rule per dimension, each ``is``, ``is not`` (``!value``) or ``contains``
(``~value``), combined with AND; every report applies them to the visits it counts.

Visit attributes (source, channel, UTM tags, browser, OS, device, country, region, city, entry
and exit page) test the visit's row (``sightline.dimensions`` says which, by what column; the
channel is a column the feed writes from the source and UTM tags by ``sightline.channels``);
``page``, ``event``, ``goal`` and ``prop`` ask whether one of the visit's events matches (``is
not``: none of them does). Goals come with their rule (``Goal``),
which ``conversions`` turns into a condition on events.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sightline import dimensions

IS, IS_NOT, CONTAINS = "is", "is_not", "contains"
PREFIX = {IS: "", IS_NOT: "!", CONTAINS: "~"}
# Filter name -> the visits table's column, for filters on a visit attribute (``sightline.dimensions``).
# (The attributes every event's row carries first, then entry and exit page: the API's order.)
VISIT_FILTERS = {
    d.name: d.column
    for d in sorted(dimensions.supporting(dimensions.FILTER), key=lambda dimension: not dimension.on_rows)
    if d.table == "visits" and d.column is not None
}
EVENT_FILTERS = tuple(d.name for d in dimensions.supporting(dimensions.FILTER) if d.table == "events")
NAMES = (*VISIT_FILTERS, *EVENT_FILTERS)


@dataclass(frozen=True)
class Goal:
    """A goal's rule, as reports need it (``sightline.goals`` keeps goals)."""

    id: int
    name: str
    kind: str  # page | event
    match: str | None = None
    path: str | None = None
    event: str | None = None
    prop_key: str | None = None
    prop_value: str | None = None
    revenue_prop: str | None = None
    currency: str | None = None


@dataclass(frozen=True)
class Filter:
    name: str  # one of NAMES
    op: str  # IS, IS_NOT or CONTAINS
    value: str  # a prop's value; a goal's id as text
    key: str | None = None  # a prop's key
    goal: Goal | None = None  # a goal filter's goal, once looked up

    def raw(self) -> str:
        """The filter as its query parameter's value."""
        value = f"{self.key}:{self.value}" if self.name == "prop" else self.value
        return PREFIX[self.op] + value


@dataclass(frozen=True, init=False)
class Filters:
    """The filters of one report. ``Filters(page=..., source=..., event=...)`` keeps working: each
    is an ``is`` rule."""

    rules: tuple[Filter, ...] = field(default=())

    def __init__(
        self,
        page: str | None = None,
        source: str | None = None,
        event: str | None = None,
        rules: tuple[Filter, ...] = (),
    ) -> None:
        made = tuple(Filter(n, IS, v) for n, v in (("page", page), ("source", source), ("event", event)) if v)
        object.__setattr__(self, "rules", made + tuple(rules))

    def _is(self, name: str) -> str | None:
        return next((r.value for r in self.rules if r.name == name and r.op == IS), None)

    @property
    def page(self) -> str | None:
        return self._is("page")

    @property
    def source(self) -> str | None:
        return self._is("source")

    @property
    def event(self) -> str | None:
        return self._is("event")

    def __bool__(self) -> bool:
        return bool(self.rules)

    def describe(self) -> dict[str, str]:
        return {rule.name: rule.raw() for rule in self.rules}

    def goal_ids(self) -> list[int]:
        return [int(rule.value) for rule in self.rules if rule.name == "goal"]

    def with_goals(self, goals: dict[int, Goal]) -> Filters:
        """These filters with each goal filter's goal attached (``KeyError``: an unknown goal)."""
        rules = tuple(
            Filter(r.name, r.op, r.value, r.key, goals[int(r.value)]) if r.name == "goal" else r
            for r in self.rules
        )
        return Filters(rules=rules)
