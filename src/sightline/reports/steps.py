"""Steps of funnels and journeys: ``page:/path`` (a path; ``*`` and ``**`` make it a glob, as goal
rules) or ``event:name`` (a custom event), parsed from the API and turned into conditions."""

from __future__ import annotations

from dataclasses import dataclass

from sightline.errors import ApiError
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

    def condition(self, d: Dialect, bind: Bind) -> str:
        if self.kind == "page":
            return f"({page_condition(d, bind, 'glob' if '*' in self.value else 'exact', self.value)})"
        return f"(name = {bind(self.value)} AND name != '{PAGEVIEW}')"


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
