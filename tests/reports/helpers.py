"""Helpers of the reports tests: seeded events, and the figures computed from them independently.

The expected figures are computed here in plain Python from the very rows the test inserted,
following the definitions of docs/reports.md, without any code of ``sightline.reports``.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import httpx
from sqlalchemy import insert

from sightline.database import Database, open_database
from sightline.database.schema import events, sites, users

if TYPE_CHECKING:
    from tests.support.server import LiveServer

PAGES = ["/", "/pricing", "/docs", "/blog/hello", "/signup"]
SOURCES = [None, None, "google.com", "news.ycombinator.com", "twitter.com"]
# Events that leave a visit a bounce (docs/reports.md, "Visit").
NOT_ENGAGING = ("pageview", "404", "engagement", "web_vital", "heatmap_click")
LANGUAGES = ["en", "de", "pt", None]  # the visits' languages in turn (None: the browser did not say)
BROWSERS = [("Chrome", "Windows", "desktop"), ("Safari", "iOS", "mobile"), ("Firefox", "Linux", "desktop")]


@dataclass
class Event:
    site_id: int
    time: datetime
    visitor_id: str
    session_id: str
    name: str
    path: str
    referrer_source: str | None
    utm_source: str | None
    utm_medium: str | None
    utm_campaign: str | None
    browser: str
    os: str
    device_type: str
    props: dict[str, Any] = field(default_factory=dict)
    language: str | None = None  # the primary subtag ingest keeps (None: the browser did not say)

    def row(self) -> dict[str, Any]:
        return {
            "site_id": self.site_id,
            "time": self.time,
            "visitor_id": self.visitor_id,
            "session_id": self.session_id,
            "name": self.name,
            "path": self.path,
            "referrer_source": self.referrer_source,
            "referrer": None,
            "utm_source": self.utm_source,
            "utm_medium": self.utm_medium,
            "utm_campaign": self.utm_campaign,
            "browser": self.browser,
            "os": self.os,
            "device_type": self.device_type,
            "props": json.dumps(self.props) if self.props else None,
            "batch_id": "seed",
            "language": self.language,
        }


def generate(site_id: int, now: datetime, visits: int, days: int, seed: int) -> list[Event]:
    """Visits spread over the last ``days`` days; each visit's events are in time order."""
    rng = random.Random(seed)
    out: list[Event] = []
    for n in range(visits):
        visitor = f"visitor-{rng.randrange(visits // 3 + 1)}"
        start = now - timedelta(seconds=rng.randrange(days * 86400))
        source = rng.choice(SOURCES)
        campaign = rng.random() < 0.3
        browser, os_name, device = rng.choice(BROWSERS)
        at = start
        for i in range(rng.choice([1, 1, 2, 3, 5])):
            custom = i > 0 and rng.random() < 0.3
            out.append(
                Event(
                    site_id,
                    at,
                    visitor,
                    f"{site_id}-session-{n}",
                    rng.choice(["signup", "download"]) if custom else "pageview",
                    rng.choice(PAGES),
                    source if i == 0 else None,
                    "newsletter" if campaign else None,
                    "email" if campaign else None,
                    "launch" if campaign else None,
                    browser,
                    os_name,
                    device,
                    {"plan": rng.choice(["free", "pro"]), "size": rng.choice([1, 2])} if custom else {},
                    LANGUAGES[n % len(LANGUAGES)],
                )
            )
            at += timedelta(seconds=rng.randrange(5, 600))
            if at >= now:
                break
    out.sort(key=lambda e: (e.session_id, e.time))
    return out


def pageview(site_id: int, at: datetime, visitor: str, path: str, source: str | None = None) -> Event:
    """A desktop Chrome pageview of ``visitor``'s one visit (``s-{visitor}``)."""
    return Event(
        site_id,
        at,
        visitor,
        f"s-{visitor}",
        "pageview",
        path,
        source,
        None,
        None,
        None,
        "Chrome",
        "Linux",
        "desktop",
    )


def insert_events(db: Database, rows: Iterable[Event]) -> None:
    with db.begin() as conn:
        conn.execute(insert(events), [e.row() for e in rows])


def create_site(db: Database, domain: str = "job.example.com") -> tuple[int, int]:
    """An owner and a site straight in the database: (owner id, site id)."""
    with db.begin() as conn:
        owner = conn.execute(
            insert(users)
            .values(email=f"owner@{domain}", password_hash="unused", created_at=datetime.now(UTC))
            .returning(users.c.id)
        ).scalar_one()
        site = conn.execute(
            insert(sites)
            .values(
                owner_id=owner,
                name=domain,
                domain=domain,
                key=domain[:16].ljust(16, "k"),
                collection_enabled=True,
                recording_enabled=False,
                recording_sample_rate=1.0,
                created_at=datetime.now(UTC),
                connection_state="pending",
            )
            .returning(sites.c.id)
        ).scalar_one()
    return owner, site


def wait_caught_up(owner: httpx.Client, timeout: float = 90) -> None:
    """Until the analytics store holds every event of the log."""
    deadline = time.monotonic() + timeout
    figures: dict[str, Any] = {}
    while time.monotonic() < deadline:
        figures = owner.get("/api/health").json()["services"]["store"]
        if figures["status"] != "down" and figures["lag_events"] == 0:
            return
        time.sleep(0.2)
    raise AssertionError(f"the analytics store did not catch up: {figures}")


def stored(server: LiveServer, owner: httpx.Client, rows: Iterable[Event]) -> None:
    """``rows`` written straight into the running server's log, then fed to its analytics store."""
    db = open_database(server.database_url or "", migrate=False)
    try:
        insert_events(db, list(rows))
    finally:
        db.dispose()
    wait_caught_up(owner)


def span_of(first: date, last: date, zone: str) -> tuple[datetime, datetime]:
    tz = ZoneInfo(zone)
    start = datetime(first.year, first.month, first.day, tzinfo=tz).astimezone(UTC)
    after = last + timedelta(days=1)
    return start, datetime(after.year, after.month, after.day, tzinfo=tz).astimezone(UTC)


@dataclass
class Visit:
    session_id: str
    visitor_id: str
    events: list[Event]

    @property
    def start(self) -> datetime:
        return min(e.time for e in self.events)

    @property
    def source(self) -> str:
        return self.events[0].referrer_source or "(none)"

    @property
    def language(self) -> str | None:
        return self.events[0].language

    @property
    def pageviews(self) -> list[Event]:
        return sorted((e for e in self.events if e.name == "pageview"), key=lambda e: e.time)

    @property
    def bounced(self) -> bool:
        """One pageview or none, and no custom event (a custom event makes a visit engaged); the
        events autocapture sends while the visitor only reads do not count (docs/reports.md)."""
        return len(self.pageviews) <= 1 and all(e.name in NOT_ENGAGING for e in self.events)

    @property
    def duration(self) -> int:
        times = [e.time for e in self.events]
        return round((max(times) - min(times)).total_seconds())


def visits_of(rows: list[Event]) -> list[Visit]:
    grouped: dict[str, list[Event]] = defaultdict(list)
    for e in rows:
        grouped[e.session_id].append(e)
    return [Visit(s, evs[0].visitor_id, evs) for s, evs in grouped.items()]


def _within(moment: datetime, span: tuple[datetime, datetime]) -> bool:
    return span[0] <= moment < span[1]


def figures(visits: int, visitors: int, pageviews: int, bounces: int, duration: int) -> dict[str, Any]:
    return {
        "visitors": visitors,
        "visits": visits,
        "pageviews": pageviews,
        "views_per_visit": round(pageviews / visits, 2) if visits else 0.0,
        "bounce_rate": round(bounces / visits, 4) if visits else 0.0,
        "visit_duration": round(duration / visits) if visits else 0,
    }


def expected_summary(rows: list[Event], span: tuple[datetime, datetime]) -> dict[str, Any]:
    """No filters: visitors and pageviews of the events in the span; the visits that started in it."""
    inside = [e for e in rows if _within(e.time, span)]
    started = [v for v in visits_of(rows) if _within(v.start, span)]
    return figures(
        len(started),
        len({e.visitor_id for e in inside}),
        sum(1 for e in inside if e.name == "pageview"),
        sum(1 for v in started if v.bounced),
        sum(v.duration for v in started),
    )


def selected(
    rows: list[Event],
    span: tuple[datetime, datetime],
    page: str | None,
    source: str | None,
    event: str | None,
    language: str | None = None,
) -> list[Visit]:
    out = []
    for v in visits_of(rows):
        if not _within(v.start, span):
            continue
        if source is not None and v.source != source:
            continue
        if page is not None and not any(e.path == page for e in v.pageviews):
            continue
        if event is not None and not any(e.name == event for e in v.events):
            continue
        if language is not None and v.language != language:
            continue
        out.append(v)
    return out


def expected_filtered(
    rows: list[Event],
    span: tuple[datetime, datetime],
    page: str | None = None,
    source: str | None = None,
    event: str | None = None,
    language: str | None = None,
) -> dict[str, Any]:
    """Filters: the figures of the selected visits (their pageviews counted at their start)."""
    chosen = selected(rows, span, page, source, event, language)
    return figures(
        len(chosen),
        len({v.visitor_id for v in chosen}),
        sum(len(v.pageviews) for v in chosen),
        sum(1 for v in chosen if v.bounced),
        sum(v.duration for v in chosen),
    )


def expected_breakdown(rows: list[Event], span: tuple[datetime, datetime], dimension: str) -> dict[str, Any]:
    """Rows of one breakdown without filters, keyed by value: pages and events count the events in
    the span; sources (like every visit attribute) the visits that started in it, whole."""
    inside = [e for e in rows if _within(e.time, span)]
    started = [v for v in visits_of(rows) if _within(v.start, span)]
    if dimension == "pages":
        views = [e for e in inside if e.name == "pageview"]
        counts = Counter(e.path for e in views)
        return {
            p: {"visitors": len({e.visitor_id for e in views if e.path == p}), "pageviews": n}
            for p, n in counts.items()
        }
    if dimension in ("entry_pages", "exit_pages"):
        table: dict[str, list[Visit]] = defaultdict(list)
        for v in started:
            if v.pageviews:
                table[v.pageviews[0 if dimension == "entry_pages" else -1].path].append(v)
        if dimension == "exit_pages":
            return {p: {"visits": len(vs)} for p, vs in table.items()}
        return {
            p: {
                "visits": len(vs),
                "bounce_rate": round(sum(1 for v in vs if v.bounced) / len(vs), 4),
                "visit_duration": round(sum(v.duration for v in vs) / len(vs)),
            }
            for p, vs in table.items()
        }
    if dimension == "events":
        custom = [e for e in inside if e.name != "pageview"]
        return {
            name: {"visitors": len({e.visitor_id for e in custom if e.name == name}), "events": n}
            for name, n in Counter(e.name for e in custom).items()
        }
    assert dimension in ("sources", "language")

    def value_of(v: Visit) -> str | None:
        return v.source if dimension == "sources" else v.language

    out: dict[str, Any] = {}
    for value in {value_of(v) for v in started} - {None}:  # a language only where it is known
        vs = [v for v in started if value_of(v) == value]
        out[str(value)] = {
            k: val
            for k, val in figures(
                len(vs),
                len({v.visitor_id for v in vs}),
                sum(len(v.pageviews) for v in vs),
                sum(1 for v in vs if v.bounced),
                sum(v.duration for v in vs),
            ).items()
            if k in ("visitors", "visits", "pageviews", "bounce_rate", "visit_duration")
        }
    return out


def expected_props(
    rows: list[Event], span: tuple[datetime, datetime], name: str
) -> dict[tuple[str, str], Any]:
    inside = [e for e in rows if _within(e.time, span) and e.name == name]
    counts: Counter[tuple[str, str]] = Counter()
    people: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in inside:
        for key, value in e.props.items():
            counts[(key, str(value))] += 1
            people[(key, str(value))].add(e.visitor_id)
    return {k: {"visitors": len(people[k]), "events": n} for k, n in counts.items()}


def site_with_rows(
    server: LiveServer, name: str, domain: str, rows: Callable[[int, datetime], list[dict[str, Any]]]
) -> int:
    """A new site of the server's owner holding ``rows(site_id, start)``, written straight into the
    log and fed to the store; ``start`` is the last hour's start (or midnight, early in the day), so
    the rows fall in today. Each row carries every column from the start: the store feeds rows as
    soon as they are committed, so a value set by a later UPDATE may never reach it."""
    with server.client() as client:
        login = {"email": "owner@example.com", "password": "correct horse battery staple"}
        assert client.post("/api/login", json=login).status_code == 200
        site_id = int(client.post("/api/sites", json={"name": name, "domain": domain}).json()["id"])
        start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        start = max(start - timedelta(hours=1), start.replace(hour=0))
        assert server.database_url is not None
        db = open_database(server.database_url, migrate=False)
        try:
            with db.begin() as conn:
                conn.execute(insert(events), rows(site_id, start))
        finally:
            db.dispose()
        wait_caught_up(client)
        return site_id
