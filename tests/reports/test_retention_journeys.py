"""Retention cohorts and journeys from a real server, on both store engines (DuckDB, and
ClickHouse's SQL through embedded chDB), checked against the raw events (``oracle``); a visit whose
first event arrives last counts by its true start in funnels and journeys."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from sightline.database import open_database
from tests.reports import helpers, oracle
from tests.reports.conversions_world import (
    NOW,
    WEEKDAYS,
    ZONES,
    Seeded,
    seeded,
    server,
)
from tests.reports.helpers import Event
from tests.support.server import LiveServer

__all__ = ["seeded", "server"]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(
    ("interval", "first", "periods", "week_start"),
    [
        ("week", 27, 4, "monday"),
        ("week", 27, 4, "sunday"),
        ("week", 27, 4, "saturday"),
        ("day", 9, 5, "sunday"),
    ],
)
def test_retention_cohorts_match_the_raw_visits_in_weeks_from_the_sites_first_weekday(
    seeded: Seeded, zone: str, interval: str, first: int, periods: int, week_start: str
) -> None:
    changed = seeded.owner.patch(f"/api/sites/{seeded.sites[zone]}", json={"week_start": week_start})
    assert changed.status_code == 200, changed.text
    assert changed.json()["week_start"] == week_start
    dates, _ = seeded.days(zone, first, 0)
    body = seeded.get(zone, "retention", interval=interval, periods=str(periods), **dates)
    tz = ZoneInfo(zone)
    first_day = date.fromisoformat(dates["from"])
    last_day = date.fromisoformat(dates["to"])
    if interval == "week":  # the first cohort is the week holding the range's first day
        first_day -= timedelta(days=(first_day.weekday() - WEEKDAYS[week_start]) % 7)
        starts = {date.fromisoformat(c["start"]).weekday() for c in body["cohorts"]}
        assert starts == {WEEKDAYS[week_start]}
    start = datetime.combine(first_day, time(), tz).astimezone(UTC)
    chosen = oracle.chosen_visits(seeded.rows[zone], (start, NOW + timedelta(hours=2)), {}, {})
    expected = oracle.expected_retention(
        seeded.rows[zone], chosen, zone, first_day, last_day, interval, periods, datetime.now(UTC)
    )
    assert body["cohorts"] == expected
    assert any(share > 0 for c in expected for share in c["returning"][1:]), "some visitors come back"
    assert tz is not None


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(
    ("start", "direction", "depth"),
    [("page:/", "next", 3), ("page:/pricing", "previous", 2), ("event:signup", "next", 1)],
)
def test_journeys_follow_the_visits_steps_as_the_raw_events_say(
    seeded: Seeded, zone: str, start: str, direction: str, depth: int
) -> None:
    dates, span = seeded.days(zone, 20, 0)
    params: list[tuple[str, str | int | float | bool | None]] = [
        ("from", start),
        ("direction", direction),
        ("depth", str(depth)),
        *dates.items(),
    ]
    response = seeded.owner.get(f"/api/sites/{seeded.sites[zone]}/reports/journeys", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    chosen = oracle.chosen_visits(seeded.rows[zone], span, {}, {})
    expected = oracle.expected_journeys(chosen, start, direction, depth)
    got = [(tuple(p["steps"]), p["visitors"]) for p in body["paths"]]
    # The 50 paths with the most visitors; among equals, in the order of their steps (a shorter
    # path before the longer ones it begins).
    ranked = sorted(expected.items(), key=lambda item: (-item[1], item[0]))
    assert got == ranked[:50]


@pytest.mark.parametrize(
    ("start", "direction", "depth", "path"),
    [
        ("page:/", "next", 3, ["page:/docs", "event:signup", "page:/pricing"]),
        ("page:/", "next", 2, ["page:/docs", "event:signup"]),
        ("page:/blog", "previous", 3, ["page:/pricing", "event:signup", "page:/docs"]),
        ("page:/blog", "previous", 2, ["page:/pricing", "event:signup"]),
    ],
)
def test_journeys_order_events_of_the_same_moment_by_their_arrival(
    server: LiveServer, seeded: Seeded, start: str, direction: str, depth: int, path: list[str]
) -> None:
    """Three events of a visit at the same microsecond follow one another in the log's order, also
    where the path's depth cuts between them."""
    owner = seeded.owner
    domain = f"same-moment-{start[6:]}-{direction}-{depth}.example.com"
    site = owner.post("/api/sites", json={"name": "same moment", "domain": domain}).json()["id"]
    dates, span = seeded.days("UTC", 1, 0)
    at = span[0] + timedelta(hours=3)
    moment = at + timedelta(minutes=1)
    rows = [
        replace(helpers.pageview(site, at, "tied", "/"), site_id=site),
        replace(helpers.pageview(site, moment, "tied", "/docs"), site_id=site),
        replace(helpers.pageview(site, moment, "tied", "/x"), site_id=site, name="signup"),
        replace(helpers.pageview(site, moment, "tied", "/pricing"), site_id=site),
        replace(helpers.pageview(site, at + timedelta(minutes=2), "tied", "/blog"), site_id=site),
    ]
    helpers.stored(server, owner, rows)
    chosen = oracle.chosen_visits(rows, span, {}, {})
    assert oracle.expected_journeys(chosen, start, direction, depth) == {tuple(path): 1}
    params: list[tuple[str, str | int | float | bool | None]] = [
        ("from", start),
        ("direction", direction),
        ("depth", str(depth)),
        *dates.items(),
    ]
    response = owner.get(f"/api/sites/{site}/reports/journeys", params=params)
    assert response.status_code == 200, response.text
    assert response.json()["paths"] == [{"steps": path, "visitors": 1}]


def test_journeys_leave_out_the_sdks_measurements_and_keep_its_click_captures(
    server: LiveServer, seeded: Seeded
) -> None:
    owner = seeded.owner
    site = owner.post("/api/sites", json={"name": "passive", "domain": "passive-steps.example.com"}).json()[
        "id"
    ]
    dates, span = seeded.days("UTC", 1, 0)
    at = span[0] + timedelta(hours=3)
    names = ["pageview", "web_vital", "engagement", "heatmap_click", "outbound_link", "web_vital", "Signup"]
    rows = [
        replace(
            helpers.pageview(site, at + timedelta(seconds=i), "reader", "/pricing"), site_id=site, name=name
        )
        for i, name in enumerate(names)
    ]
    helpers.stored(server, owner, rows)
    expected = ["event:outbound_link", "event:Signup"]
    chosen = oracle.chosen_visits(rows, span, {}, {})
    assert oracle.expected_journeys(chosen, "page:/pricing", "next", 3) == {tuple(expected): 1}
    params: list[tuple[str, str | int | float | bool | None]] = [
        ("from", "page:/pricing"),
        ("direction", "next"),
        ("depth", "3"),
        *dates.items(),
    ]
    response = owner.get(f"/api/sites/{site}/reports/journeys", params=params)
    assert response.status_code == 200, response.text
    assert response.json()["paths"] == [{"steps": expected, "visitors": 1}]


def test_journeys_keep_the_fifty_paths_with_most_visitors_and_among_equals_the_first_by_steps(
    server: LiveServer, seeded: Seeded
) -> None:
    """More than 50 paths, most of one visitor each: the cut keeps those with more visitors, then
    the first by their steps, a path that ends before one it begins (the cut falls between them)."""
    owner = seeded.owner
    made = owner.post("/api/sites", json={"name": "many paths", "domain": "many-paths.example.com"})
    site = made.json()["id"]
    dates, span = seeded.days("UTC", 1, 0)
    at = span[0] + timedelta(hours=5)
    walks = [[f"/p{n:02}", f"/q{n % 7}"] for n in range(60)]  # 60 paths of one visitor each
    walks += [["/p30"], ["/p30"], ["/p59", "/q3", "/r"], ["/p59", "/q3", "/r"], ["/p47"]]
    rows = [
        replace(helpers.pageview(site, at + timedelta(minutes=i, seconds=k), f"v{i}", path), site_id=site)
        for i, walk in enumerate(walks)
        for k, path in enumerate(["/", *walk])
    ]
    helpers.stored(server, owner, rows)
    expected = oracle.expected_journeys(oracle.chosen_visits(rows, span, {}, {}), "page:/", "next", 3)
    assert len(expected) == 63
    params: list[tuple[str, str | int | float | bool | None]] = [("from", "page:/"), *dates.items()]
    response = owner.get(f"/api/sites/{site}/reports/journeys", params=params)
    assert response.status_code == 200, response.text
    got = [(tuple(p["steps"]), p["visitors"]) for p in response.json()["paths"]]
    assert got[:2] == [(("page:/p30",), 2), (("page:/p59", "page:/q3", "page:/r"), 2)]
    assert got[2:4] == [(("page:/p00", "page:/q0"), 1), (("page:/p01", "page:/q1"), 1)]
    assert got[-1] == (("page:/p47",), 1)  # the 50th: before ("page:/p47", "page:/q5"), left out
    assert got == sorted(expected.items(), key=lambda item: (-item[1], item[0]))[:50]


def test_a_custom_range_and_a_journeys_start_both_named_from_are_told_apart(seeded: Seeded) -> None:
    site = seeded.sites["UTC"]
    today = NOW.date().isoformat()
    response = seeded.owner.get(
        f"/api/sites/{site}/reports/journeys",
        params=[("from", "page:/"), ("range", "custom"), ("from", today), ("to", today)],
    )
    assert response.status_code == 200, response.text
    assert response.json()["range"]["from"] == today
    missing = seeded.owner.get(f"/api/sites/{site}/reports/journeys")
    assert missing.status_code == 422
    assert missing.json()["error"]["field"] == "from"


@dataclass(frozen=True)
class LateArrival:
    """A visit whose first pageview is fed last, at one edge of the range: ``fed`` first, then
    ``late`` (minutes from the edge, path), each as ``(visitor, [(minutes, path), ...])``."""

    edge: str  # start | end: the range's edge the visits are placed around
    days: tuple[int, int]  # the range: from so many days ago to so many days ago
    fed: tuple[tuple[str, tuple[tuple[int, str], ...]], ...]
    late: tuple[str, tuple[tuple[int, str], ...]]
    kept: str  # the one visit that started in the range
    steps: tuple[str, str]
    journeys: tuple[tuple[str, str], ...]  # (from, direction), 3 deep


LATE_ARRIVALS = [
    # The visit that truly began before the range stays out of it.
    LateArrival(
        "start",
        (2, 0),
        (("early", ((10, "/"), (12, "/pricing"))), ("inside", ((20, "/"), (25, "/pricing")))),
        ("early", ((-5, "/"),)),
        "s-inside",
        ("page:/", "page:/pricing"),
        (("page:/", "next"), ("page:/pricing", "previous")),
    ),
    # A visit that began before midnight at the range's end, whose pageviews after midnight were fed
    # before the one before it: it started in the range, so its steps after midnight count.
    LateArrival(
        "end",
        (4, 2),
        (("crossing", ((10, "/pricing"), (12, "/docs"))), ("outside", ((20, "/pricing"), (25, "/docs")))),
        ("crossing", ((-5, "/"),)),
        "s-crossing",
        ("page:/pricing", "page:/docs"),
        (("page:/pricing", "previous"),),
    ),
]


@pytest.mark.parametrize("case", LATE_ARRIVALS, ids=[c.edge for c in LATE_ARRIVALS])
def test_a_visit_whose_first_event_arrives_last_counts_by_its_true_start_in_funnels_and_journeys(
    server: LiveServer, seeded: Seeded, case: LateArrival
) -> None:
    """Funnels and journeys read events by the visit start they were fed with, which a later,
    earlier event moves back: each visit counts in the range it truly started in."""
    owner = seeded.owner
    domain = f"late-{case.edge}.example.com"
    site = owner.post("/api/sites", json={"name": f"late {case.edge}", "domain": domain}).json()["id"]
    dates, span = seeded.days("UTC", *case.days)
    edge = span[0] if case.edge == "start" else span[1]

    def visit(who: str, times_paths: tuple[tuple[int, str], ...]) -> list[Event]:
        return [
            replace(helpers.pageview(site, edge + timedelta(minutes=at), who, path), site_id=site)
            for at, path in times_paths
        ]

    fed = [e for who, times_paths in case.fed for e in visit(who, times_paths)]
    late = visit(*case.late)
    db = open_database(server.database_url or "", migrate=False)
    try:
        helpers.insert_events(db, fed)
        helpers.wait_caught_up(owner)
        helpers.insert_events(db, late)
        helpers.wait_caught_up(owner)
    finally:
        db.dispose()
    chosen = oracle.chosen_visits(fed + late, span, {}, {})
    assert [v.session_id for v in chosen] == [case.kept]
    steps = list(case.steps)
    asked: list[tuple[str, str | int | float | bool | None]] = [("step", s) for s in steps]
    funnel = owner.get(f"/api/sites/{site}/reports/funnel", params=asked + list(dates.items()))
    assert funnel.status_code == 200, funnel.text
    assert funnel.json()["steps"] == oracle.expected_funnel(chosen, steps)
    assert funnel.json()["steps"][1]["visitors"] == 1
    for start, direction in case.journeys:
        params: list[tuple[str, str | int | float | bool | None]] = [
            ("from", start),
            ("direction", direction),
            ("depth", "3"),
            *dates.items(),
        ]
        journeys = owner.get(f"/api/sites/{site}/reports/journeys", params=params)
        assert journeys.status_code == 200, journeys.text
        got = {tuple(p["steps"]): p["visitors"] for p in journeys.json()["paths"]}
        assert got == oracle.expected_journeys(chosen, start, direction, 3)
        assert sum(got.values()) == 1
