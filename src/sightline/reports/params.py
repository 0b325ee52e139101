"""Query parameters of the reports API, checked one by one: 422 naming the parameter at fault."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sightline import dimensions as registry
from sightline.channels import CHANNELS
from sightline.errors import ApiError
from sightline.numbers import ascii_int
from sightline.reports.filters import CONTAINS, IS, IS_NOT, NAMES, Filter, Filters
from sightline.reports.period import RANGES

MAX_OFFSET = 100_000
COMMON = ("range", "from", "to", "compare", "imported", *NAMES)


@dataclass(frozen=True)
class Dimension:
    dim: str  # the dimension as reports.queries names it
    order: str  # figure the rows are ranked by
    fields: tuple[str, ...]  # figures each row shows


# Each spelling of a breakdown the API accepts -> its dimension: the registry's
# (``sightline.dimensions``), then the reports of their own below.
DIMENSIONS: dict[str, Dimension] = {
    spelling: Dimension(d.key, d.order, d.fields)
    for d in registry.supporting(registry.BREAKDOWN)
    for spelling in d.spellings
}
DIMENSIONS |= {
    # Autocapture's tables (reports.autocapture): each row carries its own figures.
    "not_found": Dimension("not_found", "events", ("visitors", "visits", "events")),
    "not_found_referrers": Dimension("not_found_referrers", "events", ("kind", "visitors", "events")),
    "outbound_links": Dimension("outbound_links", "events", ("visitors", "events")),
    "file_downloads": Dimension("file_downloads", "events", ("visitors", "events")),
    "engagement": Dimension("engagement", "visits", ("visitors", "visits", "time_on_page", "scroll_depth")),
    "web_vitals": Dimension("web_vitals", "visits", ("visitors", "visits", "lcp", "inp", "cls")),
    "rage_clicks": Dimension("rage_clicks", "events", ("page", "visitors", "events", "clicks")),
    "dead_clicks": Dimension("dead_clicks", "events", ("page", "visitors", "events", "clicks")),
    # Click heatmaps (reports.heatmaps): the pages with clicks, and one page's clicked elements.
    "heatmap_pages": Dimension("heatmap_pages", "clicks", ("visitors", "clicks")),
    "clicked_elements": Dimension("clicked_elements", "clicks", ("visitors", "clicks")),
}
# The names the API's error and documentation list (aliases left out).
BREAKDOWNS = tuple(d.name for d in registry.supporting(registry.BREAKDOWN)) + tuple(
    name for name in DIMENSIONS if name not in registry.SPELLINGS
)
# Dimensions whose rows belong to one thing `name` names: a custom event's props, a 404 path's referrers.
NAMED = {
    "prop": "the custom event",
    "props": "the custom event",
    "not_found_referrers": "the missing page's path",
    "clicked_elements": "the page's path",
}
NAMED_PATHS = ("not_found_referrers", "clicked_elements")
# The width classes of a heatmap (reports.heatmaps.VIEWPORTS).
VIEWPORTS = ("desktop", "tablet", "phone")


@dataclass(frozen=True)
class Query:
    range: str = "7d"
    date_from: str | None = None
    date_to: str | None = None
    compare: bool = False
    comparison: str = "previous"  # with ``compare``: "previous" (period) or "year" (a year before)
    imported: bool = True  # add imported history where the report has it (``imported=false``: not)
    filters: Filters = field(default_factory=Filters)
    dimension: str | None = None
    limit: int = 10
    name: str | None = None
    offset: int = 0
    search: str | None = None
    path: str | None = None  # the heatmap's page
    viewport: str | None = None  # a heatmap's width class (None: every width)


def _bad(name: str, message: str) -> ApiError:
    return ApiError(422, "invalid_parameter", message, field=name)


def _text(name: str, raw: str, max_length: int, *, path: bool = False) -> str:
    if not raw or len(raw) > max_length or any(ord(ch) < 32 for ch in raw):
        raise _bad(name, f"The parameter '{name}' must be 1 to {max_length} printable characters.")
    if path and not raw.startswith("/"):
        raise _bad(name, f"The parameter '{name}' must be a page path starting with '/'.")
    return raw


def parse_filter(name: str, raw: str) -> Filter:
    """One filter parameter: ``value`` (is), ``!value`` (is not) or ``~value`` (contains)."""
    op, value = IS, raw
    if raw[:1] in ("!", "~"):
        op, value = (IS_NOT if raw[0] == "!" else CONTAINS), raw[1:]
    values = registry.BY_NAME[name].values
    if values == registry.GOAL:
        goal = ascii_int(value, 1, 2**62)
        if goal is None or op == CONTAINS:
            raise _bad(name, "The parameter 'goal' is a goal's id, or '!' and a goal's id.")
        return Filter(name, op, str(goal))
    if values == registry.PROP:
        key, colon, text = value.partition(":")
        if not colon or not key or op == CONTAINS:
            raise _bad(name, "The parameter 'prop' is key:value, or '!key:value' (is not).")
        return Filter(name, op, _text(name, text, 2000), _text(name, key, 100))
    if values == registry.PATH:
        return Filter(name, op, _text(name, value, 2000, path=op != CONTAINS))
    if values == registry.CHANNEL and op != CONTAINS and value not in CHANNELS:
        raise _bad(
            name, "The parameter 'channel' must be one of " + ", ".join(CHANNELS) + " (after '!' or '~')."
        )
    value = _text(name, value, 100 if values == registry.EVENT else 255)
    return Filter(name, op, value.upper() if values == registry.COUNTRY and op != CONTAINS else value)


def parse(items: Iterable[tuple[str, str]], allowed: Iterable[str]) -> Query:
    """A ``Query`` from the request's (name, value) pairs; unknown or repeated names are refused."""
    allowed = set(allowed)
    seen: dict[str, str] = {}
    for name, value in items:
        if name not in allowed:
            raise _bad(name, f"The parameter '{name}' is not known here.")
        if name in seen:
            raise _bad(name, f"The parameter '{name}' is given more than once.")
        seen[name] = value
    values: dict[str, Any] = {}
    if "range" in seen:
        if seen["range"] not in RANGES:
            raise _bad("range", "The parameter 'range' must be one of " + ", ".join(RANGES) + ".")
        values["range"] = seen["range"]
    values["date_from"] = seen.get("from")
    values["date_to"] = seen.get("to")
    if "compare" in seen:
        if seen["compare"] not in ("true", "false", "previous", "year"):
            raise _bad("compare", "The parameter 'compare' must be true, false, previous or year.")
        values["compare"] = seen["compare"] != "false"
        values["comparison"] = "year" if seen["compare"] == "year" else "previous"
    if "imported" in seen:
        if seen["imported"] not in ("true", "false"):
            raise _bad("imported", "The parameter 'imported' must be true or false.")
        values["imported"] = seen["imported"] == "true"
    values["filters"] = Filters(rules=tuple(parse_filter(name, seen[name]) for name in NAMES if name in seen))
    if "dimension" in allowed:
        dimension = seen.get("dimension")
        if dimension not in DIMENSIONS:
            raise _bad("dimension", "The parameter 'dimension' must be one of " + ", ".join(BREAKDOWNS) + ".")
        values["dimension"] = dimension
        if dimension in NAMED:
            if "name" not in seen:
                message = f"The parameter 'name' ({NAMED[dimension]}) is required for {dimension}."
                raise _bad("name", message)
            path = dimension in NAMED_PATHS
            values["name"] = _text("name", seen["name"], 2000 if path else 100, path=path)
        elif "name" in seen:
            named = " or ".join(n for n in NAMED if n not in registry.SPELLINGS or n in registry.BY_NAME)
            raise _bad("name", "The parameter 'name' is only used with dimension=" + named + ".")
    if "path" in allowed:
        if "path" not in seen:
            raise _bad("path", "The parameter 'path' (the page's path) is required.")
        values["path"] = _text("path", seen["path"], 2000, path=True)
    if "viewport" in seen:
        if "path" not in allowed and values.get("dimension") != "clicked_elements":
            raise _bad("viewport", "The parameter 'viewport' is only used with dimension=clicked_elements.")
        if seen["viewport"] not in VIEWPORTS:
            raise _bad("viewport", "The parameter 'viewport' must be one of " + ", ".join(VIEWPORTS) + ".")
        values["viewport"] = seen["viewport"]
    if "limit" in seen:
        raw = seen["limit"]
        limit = ascii_int(raw, 1, 100)
        if limit is None:
            raise _bad("limit", "The parameter 'limit' must be a whole number from 1 to 100.")
        values["limit"] = limit
    if "offset" in seen:
        offset = ascii_int(seen["offset"], 0, MAX_OFFSET)
        if offset is None:
            raise _bad("offset", f"The parameter 'offset' must be a whole number from 0 to {MAX_OFFSET}.")
        values["offset"] = offset
    if "search" in seen:
        values["search"] = _text("search", seen["search"], 200)
    return Query(**values)
