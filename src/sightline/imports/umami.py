"""Umami's events as daily figures: a CSV of ``website_event`` rows with their session's columns.

Umami keeps every event (``website_event``: ``session_id``, ``visit_id``, ``created_at``,
``url_path``, ``referrer_domain``, ``event_type``, ``event_name``, ``utm_*``) and every session
(``session``: ``browser``, ``os``, ``device``, ``country``, ``region``). The import reads one CSV
of the events joined with their sessions (docs/imports.md gives the query), in any order, and
counts them as Umami's own reports do (``getWebsiteStats``): visitors are distinct sessions,
visits distinct visits, pageviews the events of a visit that are not custom events (type 2) or
performance beacons (type 5), a bounce a visit of one such event, its duration from its first
to its last event. A visit counts on the day (in the site's time zone) of its first pageview,
with the entry pageview's referrer and UTM tags as its source; custom events count as events on
their own day.

Events are read one row at a time but a visit's figures need all its events, so the visits of
the file are kept in memory until its end (under 1 KiB per visit; labels, paths and sessions are
kept once): a file of more than ``MAX_VISITS`` visits is refused, naming the line, and is
exported in parts of fewer days instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, TypeVar
from urllib.parse import parse_qsl
from zoneinfo import ZoneInfo

from sightline.imports.rows import NONE, Figure, Rows, text

NEEDED = ("session_id", "visit_id", "created_at", "url_path", "event_type")
MAX_VISITS = 1_000_000  # visits of one file held at once (under 1 GiB)
T = TypeVar("T")
PAGEVIEW, CUSTOM, PERFORMANCE = 1, 2, 5
UTMS = ("utm_source", "utm_medium", "utm_campaign")
DEVICES = {"desktop": "desktop", "laptop": "desktop", "mobile": "mobile", "tablet": "tablet"}
# detect-browser's names (what Umami stores) as the reports name browsers and systems.
BROWSERS = {
    "chrome": "Chrome",
    "crios": "Chrome Mobile iOS",
    "chromium-webview": "Chrome Mobile WebView",
    "firefox": "Firefox",
    "fxios": "Firefox iOS",
    "safari": "Safari",
    "ios": "Mobile Safari",
    "ios-webview": "Mobile Safari UI/WKWebView",
    "edge": "Edge",
    "edge-chromium": "Edge",
    "edge-ios": "Edge",
    "opera": "Opera",
    "samsung": "Samsung Internet",
    "yandexbrowser": "Yandex Browser",
    "ie": "IE",
    "android": "Android",
    "facebook": "Facebook",
    "instagram": "Instagram",
    "silk": "Amazon Silk",
}
SYSTEMS = {
    "mac os": "Mac OS X",
    "android os": "Android",
    "ios": "iOS",
    "linux": "Linux",
    "chrome os": "Chrome OS",
}


def looks_like(columns: list[str]) -> bool:
    """Whether a header line names Umami's event columns."""
    return {"session_id", "visit_id", "event_type"} <= set(columns)


@dataclass(slots=True)
class _Visit:
    session: str
    first: datetime | None = None  # of its pageviews
    last: datetime | None = None
    views: int = 0
    entry: tuple[datetime, str] | None = None
    exit: tuple[datetime, str] | None = None
    # Source and UTM tags of the entry, the session's country, region, device, browser and os:
    # tuples shared by every visit with the same ones (``_Reader.share``), as most are.
    origin: tuple[str, ...] = ()
    client: tuple[str, ...] = ()
    pages: dict[str, int] = field(default_factory=dict)
    events: dict[tuple[date, str], int] | None = None  # custom events by day and name


def _browser(value: str) -> str:
    return BROWSERS.get(value.lower(), value) if value else NONE


def _system(value: str) -> str:
    if not value:
        return NONE
    lowered = value.lower()
    return "Windows" if lowered.startswith("windows") else SYSTEMS.get(lowered, value)


CLIENT = ("country", "region", "device", "browser", "os")
ORIGIN = ("source", *UTMS)


def _client(row: dict[str, str]) -> tuple[str, ...]:
    country = text(row.get("country", "")).upper()
    known = len(country) == 2 and country.isalpha()
    region = text(row.get("region") or row.get("subdivision1") or "", "")
    if region and "-" not in region:
        region = f"{country}-{region}" if known else ""
    return (
        country if known else NONE,
        region,
        DEVICES.get(row.get("device", "").strip().lower(), NONE),
        _browser(text(row.get("browser", ""), "")),
        _system(text(row.get("os", ""), "")),
    )


def _origin(row: dict[str, str]) -> tuple[str, ...]:
    domain = text(row.get("referrer_domain", ""), "").lower()
    tags = [text(row.get(column, ""), "") for column in UTMS]
    if not any(tags) and row.get("url_query"):
        query = dict(parse_qsl(row["url_query"].lstrip("?")))
        tags = [text(query.get(column, ""), "") for column in UTMS]
    return (domain.removeprefix("www.") or NONE, *tags)


class _Reader:
    def __init__(self, rows: Rows, zone: str) -> None:
        self.rows = rows
        self.zone = ZoneInfo(zone)
        self.visits: dict[str, _Visit] = {}
        self.shared: dict[Any, Any] = {}  # one copy of each session id, path and tuple of labels

    def share(self, value: T) -> T:
        found: T = self.shared.setdefault(value, value)
        return found

    def moment(self, line: int, raw: str) -> datetime:
        try:
            found = datetime.fromisoformat(raw.strip())
        except ValueError:
            raise self.rows.error(
                line, "created_at", f"{raw[:40]!r} is not a time like 2024-01-31 12:00:00"
            ) from None
        return found.replace(tzinfo=UTC) if found.tzinfo is None else found

    def read(self) -> None:
        rows = self.rows
        for line, row in rows:
            moment = self.moment(line, row["created_at"])
            kind = row["event_type"].strip()
            if kind not in ("1", "2", "3", "4", "5"):
                raise rows.error(
                    line, "event_type", f"{row['event_type'][:40]!r} is not one of Umami's types 1 to 5"
                )
            visit_id, session = row["visit_id"].strip(), row["session_id"].strip()
            if not visit_id or not session:
                raise rows.error(line, "visit_id" if not visit_id else "session_id", "it is empty")
            visit = self.visits.get(visit_id)
            if visit is None:
                if len(self.visits) >= MAX_VISITS:
                    raise rows.error(
                        line,
                        "visit_id",
                        f"the file holds more than {MAX_VISITS:,} visits, more than one import reads: "
                        "export fewer days at a time (a where clause on created_at) and import each file",
                    )
                visit = self.visits[visit_id] = _Visit(self.share(session), client=self.share(_client(row)))
            if int(kind) == CUSTOM:
                key = (moment.astimezone(self.zone).date(), self.share(text(row.get("event_name", ""))))
                visit.events = visit.events or {}
                visit.events[key] = visit.events.get(key, 0) + 1
                continue
            if int(kind) == PERFORMANCE:
                continue
            visit.first = moment if visit.first is None else min(visit.first, moment)
            visit.last = moment if visit.last is None else max(visit.last, moment)
            visit.views += 1
            path = self.share(text(row["url_path"], "/"))
            visit.pages[path] = visit.pages.get(path, 0) + 1
            if visit.entry is None or moment < visit.entry[0]:
                visit.entry = (moment, path)
                visit.origin = self.share(_origin(row))
            if visit.exit is None or moment >= visit.exit[0]:
                visit.exit = (moment, path)

    def figures(self) -> Iterator[Figure]:
        sums: dict[tuple[date, str, str], list[int]] = {}
        people: dict[tuple[date, str, str], set[str]] = {}

        def add(key: tuple[date, str, str], session: str, *values: int) -> None:
            found = sums.setdefault(key, [0, 0, 0, 0, 0])
            for index, value in enumerate(values):
                found[index] += value
            people.setdefault(key, set()).add(session)

        for visit in self.visits.values():
            for (when, name), count in (visit.events or {}).items():
                add((when, "event", name), visit.session, 0, 0, 0, 0, count)
            if visit.first is None or visit.last is None:
                continue  # custom events only: no visit in Umami's figures
            day = visit.first.astimezone(self.zone).date()
            seconds = int((visit.last - visit.first).total_seconds())
            figures = (1, visit.views, int(visit.views == 1), seconds, 0)
            add((day, "total", ""), visit.session, *figures)
            assert visit.entry is not None
            assert visit.exit is not None
            labels = [*zip(ORIGIN, visit.origin, strict=True), *zip(CLIENT, visit.client, strict=True)]
            for dimension, value in [*labels, ("entry", visit.entry[1]), ("exit", visit.exit[1])]:
                if value:
                    add((day, dimension, value), visit.session, *figures)
            for path, count in visit.pages.items():
                add((day, "page", path), visit.session, 1, count, 0, 0, 0)
        self.visits.clear()
        for key in sorted(sums):
            visits, pageviews, bounces, duration, events = sums[key]
            yield Figure(*key, len(people[key]), visits, pageviews, bounces, duration, events)


def figures(rows: Rows, zone: str) -> Iterator[Figure]:
    """The daily figures of Umami's events (raising ``ImportFileError`` at the first bad row)."""
    reader = _Reader(rows, zone)
    reader.read()
    yield from reader.figures()
