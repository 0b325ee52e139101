"""Report figures from a real server (SQLite and PostgreSQL) checked against the raw events they came from."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from sightline import dimensions
from sightline.database import open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, database_url_for, sign_in
from tests.reports import helpers
from tests.reports.helpers import Event
from tests.support.server import LiveServer, create_owner

ZONES = ["UTC", "America/New_York", "Asia/Kolkata"]
NOW = datetime.now(UTC)


class Seeded:
    def __init__(self, owner: httpx.Client, sites: dict[str, int], rows: dict[str, list[Event]]) -> None:
        self.owner = owner
        self.sites = sites
        self.rows = rows

    def get(self, zone: str, report: str, **params: Any) -> dict[str, Any]:
        response = self.owner.get(f"/api/sites/{self.sites[zone]}/reports/{report}", params=params)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def today(self, zone: str) -> date:
        return NOW.astimezone(ZoneInfo(zone)).date()


ENGINES = [
    ("sqlite", "duckdb"),
    ("postgresql", "duckdb"),
    ("sqlite", "clickhouse"),
    ("postgresql", "clickhouse"),
]


@pytest.fixture(scope="module", params=ENGINES, ids=["-".join(pair) for pair in ENGINES])
def console_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A server per log database and store engine (ClickHouse over HTTP: the stand-in that enforces
    a server's limits, or the server SIGHTLINE_TEST_CLICKHOUSE_URL names)."""
    backend, engine = request.param
    directory = tmp_path_factory.mktemp(f"figures-{backend}-{engine}")
    env = {"SIGHTLINE_ALLOW_PRIVATE_ADDRESSES": "true"}
    if engine == "clickhouse":
        clickhouse = request.getfixturevalue("clickhouse")
        env["SIGHTLINE_EVENTS_URL"] = clickhouse.url(f"figures_{backend}_{uuid.uuid4().hex[:8]}")
    server = LiveServer(directory / "data", database_url_for(request, backend, directory), env=env)
    server.start()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def seeded(console_server: LiveServer) -> Iterator[Seeded]:
    owner = sign_in(console_server)
    sites: dict[str, int] = {}
    rows: dict[str, list[Event]] = {}
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    for n, zone in enumerate(ZONES):
        created = owner.post("/api/sites", json={"name": zone, "domain": f"zone{n}.example.com"})
        assert created.status_code == 201, created.text
        site_id = created.json()["id"]
        changed = owner.patch(f"/api/sites/{site_id}", json={"timezone": zone})
        assert changed.json()["timezone"] == zone
        sites[zone] = site_id
        rows[zone] = helpers.generate(site_id, NOW - timedelta(minutes=20), visits=500, days=40, seed=n)
        helpers.insert_events(db, rows[zone])
    db.dispose()
    helpers.wait_caught_up(owner)
    yield Seeded(owner, sites, rows)
    owner.close()


def _days_ago(s: Seeded, zone: str, first: int, last: int) -> tuple[date, date]:
    today = s.today(zone)
    return today - timedelta(days=first), today - timedelta(days=last)


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(("first", "last"), [(9, 9), (12, 10), (35, 6)])
def test_summary_of_a_custom_range_matches_the_raw_events_in_the_sites_zone(
    seeded: Seeded, zone: str, first: int, last: int
) -> None:
    day_from, day_to = _days_ago(seeded, zone, first, last)
    body = seeded.get(
        zone, "summary", range="custom", **{"from": day_from.isoformat(), "to": day_to.isoformat()}
    )
    span = helpers.span_of(day_from, day_to, zone)
    assert body["range"]["start"] == span[0].isoformat()
    assert body["current"] == helpers.expected_summary(seeded.rows[zone], span)
    assert body["current"]["visits"] > 0
    assert body["source"] == "store"


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("name", ["today", "7d", "30d", "month", "12mo"])
def test_preset_ranges_end_now_and_compare_with_as_many_days_before_up_to_the_same_time(
    seeded: Seeded, zone: str, name: str
) -> None:
    asked = datetime.now(UTC)
    body = seeded.get(zone, "summary", range=name, compare="true")
    answered = datetime.now(UTC)
    today = seeded.today(zone)
    month_start = today.replace(day=1)
    first = {
        "today": today,
        "7d": today - timedelta(days=6),
        "30d": today - timedelta(days=29),
        "month": month_start,
        "12mo": date(today.year - (today.month < 12), today.month % 12 + 1, 1),  # 11 months before
    }[name]
    days = (today - first).days
    start = helpers.span_of(first, first, zone)[0]
    end = datetime.fromisoformat(body["range"]["end"])
    assert datetime.fromisoformat(body["range"]["start"]) == start
    assert asked < end  # the hour it answered in ends the range
    assert end - answered <= timedelta(hours=1)
    # Today until 15:00 compares with yesterday until 15:00: as many days before, up to the same time.
    earlier_first = first - timedelta(days=days + 1)
    earlier_cut = end.astimezone(ZoneInfo(zone)) - timedelta(days=days + 1)
    previous = (helpers.span_of(earlier_first, earlier_first, zone)[0], earlier_cut.astimezone(UTC))
    if end == helpers.span_of(first, today, zone)[1]:
        previous = helpers.span_of(earlier_first, first - timedelta(days=1), zone)
    assert datetime.fromisoformat(body["previous_range"]["start"]) == previous[0]
    assert datetime.fromisoformat(body["previous_range"]["end"]) == previous[1]
    assert body["current"] == helpers.expected_summary(seeded.rows[zone], (start, end))
    assert body["previous"] == helpers.expected_summary(seeded.rows[zone], previous)


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("name", ["yesterday", "last_month"])
def test_past_ranges_compare_with_as_many_whole_days_before_or_a_year_before(
    seeded: Seeded, zone: str, name: str
) -> None:
    today = seeded.today(zone)
    last = today - timedelta(days=1) if name == "yesterday" else today.replace(day=1) - timedelta(days=1)
    first = last if name == "yesterday" else last.replace(day=1)
    days = (last - first).days + 1
    body = seeded.get(zone, "summary", range=name, compare="previous")
    assert (body["range"]["from"], body["range"]["to"]) == (first.isoformat(), last.isoformat())
    previous = helpers.span_of(first - timedelta(days=days), last - timedelta(days=days), zone)
    assert body["current"] == helpers.expected_summary(seeded.rows[zone], helpers.span_of(first, last, zone))
    assert body["previous"] == helpers.expected_summary(seeded.rows[zone], previous)
    year = seeded.get(zone, "timeseries", range=name, compare="year")
    assert year["previous_range"]["from"] == first.replace(year=first.year - 1).isoformat()
    assert len(year["previous"]) == len(year["points"])


@pytest.mark.parametrize("zone", ZONES)
def test_a_two_day_range_is_shown_hour_by_hour_and_a_week_day_by_day(seeded: Seeded, zone: str) -> None:
    rows = seeded.rows[zone]
    day_from, day_to = _days_ago(seeded, zone, 4, 3)
    hourly = seeded.get(
        zone, "timeseries", range="custom", **{"from": day_from.isoformat(), "to": day_to.isoformat()}
    )
    assert hourly["interval"] == "hour"
    start, end = helpers.span_of(day_from, day_to, zone)
    assert len(hourly["points"]) == (end - start) // timedelta(hours=1)
    for i, point in enumerate(hourly["points"]):
        at = start + timedelta(hours=i)
        assert datetime.fromisoformat(point["time"]) == at
        expected = helpers.expected_summary(rows, (at, at + timedelta(hours=1)))
        assert {k: point[k] for k in expected} == expected
    day_from, day_to = _days_ago(seeded, zone, 13, 7)
    daily = seeded.get(
        zone,
        "timeseries",
        range="custom",
        compare="true",
        **{"from": day_from.isoformat(), "to": day_to.isoformat()},
    )
    assert daily["interval"] == "day"
    assert [p["time"] for p in daily["points"]] == [
        (day_from + timedelta(days=i)).isoformat() for i in range(7)
    ]
    for i, point in enumerate(daily["points"]):
        day = day_from + timedelta(days=i)
        expected = helpers.expected_summary(rows, helpers.span_of(day, day, zone))
        assert {k: point[k] for k in expected} == expected
        earlier = day - timedelta(days=7)
        assert {k: daily["previous"][i][k] for k in expected} == helpers.expected_summary(
            rows, helpers.span_of(earlier, earlier, zone)
        )


@pytest.mark.parametrize("zone", ["UTC", "America/New_York"])
@pytest.mark.parametrize("dimension", ["pages", "entry_pages", "exit_pages", "sources", "events", "language"])
def test_breakdowns_match_the_raw_events(seeded: Seeded, zone: str, dimension: str) -> None:
    day_from, day_to = _days_ago(seeded, zone, 20, 2)
    body = seeded.get(
        zone,
        "breakdown",
        dimension=dimension,
        limit="100",
        range="custom",
        **{"from": day_from.isoformat(), "to": day_to.isoformat()},
    )
    expected = helpers.expected_breakdown(
        seeded.rows[zone], helpers.span_of(day_from, day_to, zone), dimension
    )
    got = {row.pop("value"): row for row in body["rows"]}
    assert got == expected
    order = {"pages": "pageviews", "events": "events"}.get(dimension, "visits")
    ranked = [row[order] for row in body["rows"]]
    assert ranked == sorted(ranked, reverse=True)
    assert body["more"] is False


def test_props_of_a_custom_event_are_counted_per_key_and_value(seeded: Seeded) -> None:
    day_from, day_to = _days_ago(seeded, "UTC", 30, 0)
    span = helpers.span_of(day_from, day_to, "UTC")
    body = seeded.get(
        "UTC",
        "breakdown",
        dimension="props",
        name="signup",
        range="custom",
        **{"from": day_from.isoformat(), "to": day_to.isoformat()},
    )
    got = {(r["key"], r["value"]): {"visitors": r["visitors"], "events": r["events"]} for r in body["rows"]}
    assert got == helpers.expected_props(seeded.rows["UTC"], span, "signup")
    assert len(got) == 4


def test_a_short_limit_returns_the_top_rows_and_says_there_are_more(seeded: Seeded) -> None:
    body = seeded.get("UTC", "breakdown", dimension="pages", limit="2", range="30d")
    assert len(body["rows"]) == 2
    assert body["more"] is True
    assert body["rows"][0]["pageviews"] >= body["rows"][1]["pageviews"]


@pytest.mark.parametrize("zone", ["UTC", "America/New_York"])
@pytest.mark.parametrize(
    "filters",
    [
        {"source": "google.com"},
        {"source": "(none)"},
        {"page": "/pricing"},
        {"event": "signup"},
        {"page": "/docs", "source": "google.com"},
        {"page": "/pricing", "event": "download", "source": "twitter.com"},
        {"language": "de"},
        {"language": "pt", "page": "/docs"},
    ],
)
def test_filters_select_visits_and_combine(seeded: Seeded, zone: str, filters: dict[str, str]) -> None:
    rows = seeded.rows[zone]
    day_from, day_to = _days_ago(seeded, zone, 25, 1)
    dates = {"from": day_from.isoformat(), "to": day_to.isoformat()}
    span = helpers.span_of(day_from, day_to, zone)
    body = seeded.get(zone, "summary", range="custom", **dates, **filters)
    assert body["source"] == "store"
    assert body["filters"] == filters
    expected = helpers.expected_filtered(rows, span, **filters)
    assert body["current"] == expected
    assert expected["visits"] > 0
    series = seeded.get(zone, "timeseries", range="custom", **dates, **filters)
    assert sum(p["visits"] for p in series["points"]) == expected["visits"]
    assert sum(p["pageviews"] for p in series["points"]) == expected["pageviews"]
    chosen = helpers.selected(
        rows, span, filters.get("page"), filters.get("source"), filters.get("event"), filters.get("language")
    )
    sources = seeded.get(
        zone, "breakdown", dimension="sources", limit="100", range="custom", **dates, **filters
    )
    assert {r["value"]: r["visits"] for r in sources["rows"]} == {
        s: sum(1 for v in chosen if v.source == s) for s in {v.source for v in chosen}
    }
    pages = seeded.get(zone, "breakdown", dimension="pages", limit="100", range="custom", **dates, **filters)
    views = [e for v in chosen for e in v.pageviews]  # whole visits, counted at their start
    assert {r["value"]: r["pageviews"] for r in pages["rows"]} == {
        p: sum(1 for e in views if e.path == p) for p in {e.path for e in views}
    }


def test_realtime_counts_the_visitors_of_the_last_five_minutes(
    console_server: LiveServer, seeded: Seeded
) -> None:
    created = seeded.owner.post("/api/sites", json={"name": "Live", "domain": "live.example.com"})
    site_id = created.json()["id"]
    now = datetime.now(UTC)
    fresh = [
        Event(
            site_id,
            now - timedelta(seconds=s),
            f"live-{v}",
            f"live-{v}",
            "pageview",
            p,
            None,
            None,
            None,
            None,
            "Chrome",
            "Linux",
            "desktop",
        )
        for v, s, p in [
            (1, 30, "/"),
            (2, 90, "/"),
            (2, 60, "/docs"),
            (3, 250, "/docs"),
            (4, 400, "/"),
            (5, 1200, "/old"),
            (5, 1210, "/old"),
            (6, 2400, "/older"),  # before the chart's 30 minutes
        ]
    ]
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    helpers.insert_events(db, fresh)
    db.dispose()
    helpers.wait_caught_up(seeded.owner)
    asked = datetime.now(UTC)
    response = seeded.owner.get(f"/api/sites/{site_id}/reports/realtime")
    answered = datetime.now(UTC)
    assert response.status_code == 200
    body = response.json()
    assert body["window_seconds"] == 300
    assert body["visitors"] == 3
    assert body["pageviews"] == 4
    assert sorted((p["value"], p["visitors"]) for p in body["pages"]) == [("/", 2), ("/docs", 2)]
    # The per-minute chart: each of the last 30 minutes, the current one last.
    minutes = body["minutes"]
    assert len(minutes) == 30
    starts = [datetime.fromisoformat(m["start"]) for m in minutes]
    assert all(b - a == timedelta(minutes=1) for a, b in itertools.pairwise(starts))
    # The current minute is the one the server was in while answering.
    assert asked < starts[-1] + timedelta(minutes=1)
    assert starts[-1] <= answered
    expected = []
    for start in starts:
        inside = [e for e in fresh if start <= e.time < start + timedelta(minutes=1)]
        expected.append({"visitors": len({e.visitor_id for e in inside}), "pageviews": len(inside)})
    assert [{"visitors": m["visitors"], "pageviews": m["pageviews"]} for m in minutes] == expected
    assert sum(m["pageviews"] for m in minutes) == 7


def test_realtime_as_a_range_is_the_last_30_minutes_minute_by_minute_and_compares_with_nothing(
    console_server: LiveServer, seeded: Seeded
) -> None:
    created = seeded.owner.post("/api/sites", json={"name": "Now", "domain": "now.example.com"})
    site_id = created.json()["id"]
    seeded.owner.patch(f"/api/sites/{site_id}", json={"timezone": "America/New_York"})
    now = datetime.now(UTC)
    rows = [
        helpers.pageview(site_id, now - timedelta(minutes=minutes), visitor, path, source)
        for visitor, minutes, path, source in [
            ("a", 2, "/", None),
            ("a", 1, "/docs", None),
            ("b", 10, "/pricing", "google.com"),
            ("c", 25, "/", None),
            ("d", 45, "/old", None),  # before the 30 minutes
            ("e", 60 * 20, "/older", None),  # earlier today or yesterday
        ]
    ]
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    helpers.insert_events(db, rows)
    db.dispose()
    helpers.wait_caught_up(seeded.owner)

    def get(report: str, **params: str) -> dict[str, Any]:
        response = seeded.owner.get(
            f"/api/sites/{site_id}/reports/{report}",
            params={"range": "realtime", "compare": "true", **params},
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        span = (datetime.fromisoformat(body["range"]["start"]), datetime.fromisoformat(body["range"]["end"]))
        assert body["range"]["name"] == "realtime"
        assert span[1] - span[0] == timedelta(minutes=30)
        assert span[1] - timedelta(minutes=1) <= datetime.now(UTC)
        assert now < span[1]
        assert "previous_range" not in body
        body["span"] = span
        return body

    summary = get("summary")
    assert summary["current"] == helpers.expected_summary(rows, summary["span"])
    assert summary["current"]["visitors"] == 3
    assert summary["previous"] is None
    series = get("timeseries")
    assert series["interval"] == "minute"
    assert series["previous"] is None
    starts = [datetime.fromisoformat(p["time"]) for p in series["points"]]
    assert starts == [series["span"][0] + timedelta(minutes=n) for n in range(30)]
    for at, point in zip(starts, series["points"], strict=True):
        expected = helpers.expected_summary(rows, (at, at + timedelta(minutes=1)))
        assert {k: point[k] for k in expected} == expected
    pages = get("breakdown", dimension="pages", limit="100")
    got = {row.pop("value"): row for row in pages["rows"]}
    assert got == helpers.expected_breakdown(rows, pages["span"], "pages")
    assert set(got) == {"/", "/docs", "/pricing"}


@pytest.mark.parametrize(
    "dimension",
    [d for d in dimensions.supporting(dimensions.BREAKDOWN) if d.name not in ("prop", "goal")],
    ids=lambda d: d.name,
)
def test_each_old_spelling_of_a_breakdown_answers_as_its_one_name(
    seeded: Seeded, dimension: dimensions.Dimension
) -> None:
    named = seeded.get("UTC", "breakdown", dimension=dimension.name, limit="100", range="30d")
    assert named["dimension"] == dimension.name
    for alias in dimension.aliases:
        old = seeded.get("UTC", "breakdown", dimension=alias, limit="100", range="30d")
        assert old["dimension"] == alias
        assert old["rows"] == named["rows"], alias


def test_each_old_spelling_of_a_funnel_split_answers_as_its_one_name(seeded: Seeded) -> None:
    steps = [("step", "page:/"), ("step", "page:/pricing")]
    for d in dimensions.supporting(dimensions.FUNNEL):
        named = seeded.owner.get(
            f"/api/sites/{seeded.sites['UTC']}/reports/funnel", params=[*steps, ("dimension", d.name)]
        )
        assert named.status_code == 200, named.text
        for alias in d.aliases:
            old = seeded.owner.get(
                f"/api/sites/{seeded.sites['UTC']}/reports/funnel", params=[*steps, ("dimension", alias)]
            )
            assert old.status_code == 200, old.text
            assert old.json()["breakdown"] == named.json()["breakdown"], alias
