"""The reserved events of autocapture and the rules of their props (PRODUCT.md, docs/sdk.md).

Ingest checks every event whose name is reserved, so reports can trust them: a prop named here must
be present with the type and range given; other props may be added. A batch with one broken
reserved event is refused whole with 422 naming the field, as for any other invalid field.
``check`` costs one dictionary lookup per event whose name is not reserved.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

Props = Mapping[str, object]
Rule = Callable[[object], str | None]  # None when the value is fine, else the reason

VITALS = ("LCP", "INP", "CLS", "FCP", "TTFB")
RATINGS = ("good", "needs-improvement", "poor")
VIEWPORTS = ("mobile", "tablet", "laptop", "desktop")
MAX_SECONDS = 86_400
MAX_VITAL_MS = 3_600_000  # an hour; CLS is far below
# Sent by the SDK on its own while a visitor only reads (a page's 404 marker, time and scroll on
# leaving, speed figures, heatmap clicks): they do not make a visit engaged, so a visit with one
# pageview and only these still bounces. Outbound links, downloads and tagged elements are the
# visitor's own actions and do count, as custom events do.
PASSIVE = ("404", "engagement", "web_vital", "heatmap_click")
# Measurements with reports of their own (time on page, web vitals, heatmaps): the custom events
# table leaves them out, as they would crowd it (one or more per pageview).
MEASUREMENTS = ("engagement", "web_vital", "heatmap_click")


def _number(low: float, high: float, whole: bool = False) -> Rule:
    def rule(value: object) -> str | None:
        # bool is an int to Python, and not a number here; NaN fails every comparison.
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
        if not low <= number <= high or (whole and number != int(number)):
            kind = "a whole number" if whole else "a number"
            return f"it must be {kind} from {low:g} to {high:g}"
        return None

    return rule


def _text(high: int, prefix: str = "") -> Rule:
    def rule(value: object) -> str | None:
        if type(value) is not str or not 1 <= len(value) <= high or not value.startswith(prefix):
            start = f" starting with {prefix}" if prefix else ""
            return f"it must be a string of 1 to {high} characters{start}"
        return None

    return rule


def _one_of(choices: tuple[str, ...]) -> Rule:
    def rule(value: object) -> str | None:
        return None if value in choices and type(value) is str else f"it must be one of {', '.join(choices)}"

    return rule


def _flag(value: object) -> str | None:
    return None if type(value) is bool else "it must be true or false"


def _url(value: object) -> str | None:
    if type(value) is not str or not 1 <= len(value) <= 2000 or not value.startswith(("http://", "https://")):
        return "it must be an http or https URL of at most 2000 characters"
    return None


# name -> {prop: rule}; every prop listed is required.
RESERVED: dict[str, dict[str, Rule]] = {
    "outbound_link": {"url": _url},
    "file_download": {"url": _url},
    "404": {"path": _text(2000, "/")},
    "engagement": {"seconds": _number(0, MAX_SECONDS, whole=True), "scroll": _number(0, 100, whole=True)},
    "web_vital": {
        "name": _one_of(VITALS),
        "value": _number(0, MAX_VITAL_MS),
        "rating": _one_of(RATINGS),
    },
    "heatmap_click": {
        "selector": _text(1000),
        "x": _number(0, 1),
        "y": _number(0, 1),
        "viewport": _one_of(VIEWPORTS),
        "clicks": _number(1, 1000, whole=True),
        "rage": _flag,
        "dead": _flag,
    },
}


def problem(name: str, props: Props) -> tuple[str, str] | None:
    """``(prop, reason)`` of the first broken prop of a reserved event, else None."""
    rules = RESERVED.get(name)
    if rules is None:
        return None
    for prop, rule in rules.items():
        if prop not in props:
            return prop, "the field is required"
        reason = rule(props[prop])
        if reason is not None:
            return prop, reason
    return None
