"""Conditions on the store's events, for goals, funnel steps and journeys: SQL fragments written
once for both engines; every value a bound parameter.

Page rules follow surveys' targeting: ``exact``, ``prefix`` or ``glob`` (``*`` any run of
characters but ``/``, ``**`` any run including ``/``), as an anchored RE2 pattern (both DuckDB and
ClickHouse use RE2).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sightline.reports.filters import Goal
from sightline.store.dialects import Dialect
from sightline.store.schema import PAGEVIEW

Bind = Callable[[Any], str]
_SPECIAL = set(".^$*+?()[]{}|\\-")


def glob_regex(path: str) -> str:
    """The anchored RE2 pattern of a glob path rule."""
    parts: list[str] = []
    for token in re.split(r"(\*\*|\*)", path):
        if token == "**":
            parts.append(".*")
        elif token == "*":
            parts.append("[^/]*")
        else:
            parts.append("".join("\\" + ch if ch in _SPECIAL else ch for ch in token))
    return "^" + "".join(parts) + "$"


def page_condition(dialect: Dialect, bind: Bind, match: str, path: str) -> str:
    """Pageviews of a path rule."""
    viewed = f"name = '{PAGEVIEW}'"
    if match == "exact":
        return f"{viewed} AND path = {bind(path)}"
    if match == "prefix":
        return f"{viewed} AND {dialect.starts.format(column='path', value=bind(path))}"
    if match == "glob":
        return f"{viewed} AND {dialect.regex.format(column='path', value=bind(glob_regex(path)))}"
    raise ValueError(f"unknown match kind {match!r}")


def prop_is(dialect: Dialect, bind: Bind, key: str, value: str) -> str:
    return dialect.contains("props", bind(f"{key}\x1f{value}"))


def goal_condition(dialect: Dialect, bind: Bind, goal: Goal) -> str:
    """The events that convert on ``goal``."""
    if goal.kind == "page":
        assert goal.match is not None
        assert goal.path is not None
        return f"({page_condition(dialect, bind, goal.match, goal.path)})"
    condition = f"name = {bind(goal.event)}"
    if goal.prop_key is not None and goal.prop_value is not None:
        condition += f" AND {prop_is(dialect, bind, goal.prop_key, goal.prop_value)}"
    return f"({condition})"


def prop_number(dialect: Dialect, bind: Bind, key: str) -> str:
    """The numeric value of prop ``key`` of an event (NULL when missing or not a number)."""
    text = dialect.prop.format(props="props", prefix=bind(f"{key}\x1f"))
    return dialect.number.format(value=text)


def prop_amount(dialect: Dialect, bind: Bind, key: str) -> str:
    """An amount of money in prop ``key`` of an event, as an exact decimal to the millionth (NULL
    when missing or not a number): sums of them do not depend on the order they are added in."""
    text = dialect.prop.format(props="props", prefix=bind(f"{key}\x1f"))
    return dialect.amount.format(value=text)
